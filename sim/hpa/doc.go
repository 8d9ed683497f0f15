// Package hpa turns the model's autoscaler settings (SPEC §3.15) into the manifests operators
// deploy, and reads such manifests back into settings.
//
// The model's autoscaler is the Kubernetes HorizontalPodAutoscaler's algorithm on one Pods
// metric, so most of its fields have a field of an autoscaling/v2 HorizontalPodAutoscaler:
//
//	target                 spec.metrics[0].pods.target.averageValue (a Pods metric)
//	metric                 the metric's name: requests per worker or KV-cache usage
//	min_workers            spec.minReplicas
//	max_workers            spec.maxReplicas
//	scale_down_window_ms   spec.behavior.scaleDown.stabilizationWindowSeconds
//	scale_up_window_ms     spec.behavior.scaleUp.stabilizationWindowSeconds
//	max_remove_per_tick    a Pods policy of scaleDown per periodSeconds = interval_ms
//	max_add_per_tick       the same for scaleUp
//	tolerance              spec.behavior.scaleDown/scaleUp.tolerance (Kubernetes 1.33+)
//
// The drain grace is the worker Deployment's terminationGracePeriodSeconds, and the migration
// limit is the Dynamo frontend's DYN_MIGRATION_LIMIT environment variable, so Export writes
// three documents: the HPA and two Deployment patches. What no manifest holds (the decision
// interval, which is the controller's --horizontal-pod-autoscaler-sync-period; the metric
// delay; the startup time; the drain selection) is named in comments.
//
// Import reads an HPA (and optionally those Deployments) with the real API types and fills
// every field it covers; whatever the model cannot represent (a CPU metric, several metrics, a
// Percent policy it cannot express exactly, a policy period other than the interval, …) comes
// back as a Problem naming the field, so nothing is silently dropped.
package hpa
