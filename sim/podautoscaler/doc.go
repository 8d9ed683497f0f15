// Package podautoscaler is the Kubernetes HorizontalPodAutoscaler controller of model 4
// (docs/model.md, "The autoscaler is the Kubernetes HPA controller"), reduced to its one job:
// given the pods, the history and the settings, what does one sync decide.
//
// It is written to be read beside kubernetes/kubernetes pkg/controller/podautoscaler; each
// function names its counterpart there:
//
//	Controller.Decide         horizontal.go reconcileAutoscaler (the part after the scale is read)
//	plainMetricReplicas       replica_calculator.go calcPlainMetricReplicas
//	externalReplicas          replica_calculator.go GetExternalPerPodMetricReplicas
//	Controller.legacy         horizontal.go normalizeDesiredReplicas, stabilizeRecommendation,
//	                          convertDesiredReplicasWithRules
//	Controller.withBehavior   horizontal.go normalizeDesiredReplicasWithBehaviors,
//	                          stabilizeRecommendationWithBehaviors, convertDesiredReplicasWithBehaviorRate
//	scaleUpLimit              horizontal.go calculateScaleUpLimitWithScalingRules
//	scaleDownLimit            horizontal.go calculateScaleDownLimitWithBehaviors
//	changeInPeriod            horizontal.go getReplicasChangePerPeriod
//	Tolerances.within         horizontal.go / replica_calculator.go Tolerances.isWithin
//	DefaultBehavior           pkg/apis/autoscaling/v2/defaults.go
//
// Times are whole nanoseconds of the simulation's clock; metric values are integer
// milli-units, as the Kubernetes metrics APIs give them. The package knows nothing of workers,
// requests or caches: the engine turns its workers into a Sample and carries out the change.
//
// Where the model departs from the code (each is a rule of docs/model.md):
//   - windows and policy periods hold what was recorded strictly after t − length, as a
//     running controller meets them (its syncs drift later, so an entry exactly one window
//     old is always out); the first decision's seed counts as recorded just before it;
//   - every earlier scale event counts in a period: storeScaleEvent's reuse of an old slot,
//     which can hide an event from a longer period of the other direction, is not modelled.
package podautoscaler
