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
// limit is the Dynamo frontend's DYN_MIGRATION_LIMIT environment variable. With the user's file
// (Imported.Origin.Manifest), Export edits it (ExportOnto, onto.go): only the fields whose value
// differs from what the file says are spliced into the original bytes at the positions the
// YAML node API gives (yamledit.go), so comments, key order and quoting stay; workloads are
// touched only when the grace or the migration limit changed. Without a file it writes new
// documents: the HPA and two Deployment patches, naming in comments what no manifest holds
// (the decision interval, which is the controller's --horizontal-pod-autoscaler-sync-period;
// the metric delay; the startup time; the drain selection).
//
// Import reads a stream of documents (YAML or JSON, kind: List and *List unwrapped): the
// first autoscaler the model can use (or the one ImportOptions.Select names), the starting
// fleet from the workload's replicas or the HPA's status.currentReplicas, and: an
// autoscaling/v2 or v2beta2 HPA (Pods or External metric) or a KEDA ScaledObject (its
// Prometheus query read with Prometheus' own PromQL parser: outer sum/avg/max → aggregate),
// and the Deployments, StatefulSets, LeaderWorkerSets and DynamoGraphDeployments that carry the
// grace and DYN_MIGRATION_LIMIT (metrics.go holds the exact name table: no substrings).
// Kubernetes' own bounds are errors naming the document and field; whatever the model cannot
// represent comes back as a Problem. Imported.Origin keeps the user's object, so Export writes
// the same kind back under the user's names with only the model's fields replaced.
//
// Prefill and decode pools (pools.go): a file with an autoscaler per role (llm-d's ScaledObjects,
// a DynamoGraphDeployment's prefill and decode services through their scaling adapters, two
// HPAs on a prefill and a decode Deployment) imports as one Imported per pool (Imported.Pools),
// roles read from the llm-d.ai/role label, a Dynamo service's subComponentType, or names;
// IntoScenario writes disaggregation and {"prefill": A, "decode": A}, and ExportPoolsOnto
// writes each pool's settings back into its own object.
package hpa
