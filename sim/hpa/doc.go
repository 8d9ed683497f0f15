// Package hpa turns the model's autoscaler settings (docs/model.md#autoscaler) into the manifests operators
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
// Import reads a stream of documents (YAML or JSON, kind: List and *List unwrapped): an
// autoscaling/v2 or v2beta2 HPA (Pods or External metric) or a KEDA ScaledObject (its
// Prometheus query read with Prometheus' own PromQL parser: outer sum/avg/max → aggregate),
// and the Deployments, StatefulSets, LeaderWorkerSets and DynamoGraphDeployments that carry the
// grace and DYN_MIGRATION_LIMIT (metrics.go holds the exact name table: no substrings).
// Kubernetes' own bounds are errors naming the document and field; whatever the model cannot
// represent comes back as a Problem. Imported.Origin keeps the user's object, so Export writes
// the same kind back under the user's names with only the model's fields replaced.
package hpa
