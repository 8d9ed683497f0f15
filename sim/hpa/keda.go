package hpa

import (
	"encoding/json"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The KEDA ScaledObject (keda.sh/v1alpha1), a faithful copy of the CRD's fields
// (kedacore/keda apis/keda/v1alpha1/scaledobject_types.go): KEDA's Go module brings a
// controller's dependencies (its Go module is not among the packages this project can use),
// and these structs are all Import and Export need. Every field of the CRD is here, so strict
// decoding refuses a misspelt field as it does for the real API types.
type scaledObject struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              scaledObjectSpec `json:"spec"`
	Status            json.RawMessage  `json:"status,omitempty"`
}

type scaledObjectSpec struct {
	ScaleTargetRef        *kedaScaleTarget `json:"scaleTargetRef"`
	PollingInterval       *int32           `json:"pollingInterval,omitempty"`
	InitialCooldownPeriod *int32           `json:"initialCooldownPeriod,omitempty"`
	CooldownPeriod        *int32           `json:"cooldownPeriod,omitempty"`
	IdleReplicaCount      *int32           `json:"idleReplicaCount,omitempty"`
	MinReplicaCount       *int32           `json:"minReplicaCount,omitempty"`
	MaxReplicaCount       *int32           `json:"maxReplicaCount,omitempty"`
	Advanced              *kedaAdvanced    `json:"advanced,omitempty"`
	Triggers              []kedaTrigger    `json:"triggers"`
	Fallback              *kedaFallback    `json:"fallback,omitempty"`
}

type kedaScaleTarget struct {
	Name                   string `json:"name"`
	APIVersion             string `json:"apiVersion,omitempty"`
	Kind                   string `json:"kind,omitempty"`
	EnvSourceContainerName string `json:"envSourceContainerName,omitempty"`
}

type kedaAdvanced struct {
	HorizontalPodAutoscalerConfig *kedaHPAConfig        `json:"horizontalPodAutoscalerConfig,omitempty"`
	RestoreToOriginalReplicaCount bool                  `json:"restoreToOriginalReplicaCount,omitempty"`
	ScalingModifiers              *kedaScalingModifiers `json:"scalingModifiers,omitempty"`
}

type kedaHPAConfig struct {
	Behavior *autoscalingv2.HorizontalPodAutoscalerBehavior `json:"behavior,omitempty"`
	Name     string                                         `json:"name,omitempty"`
}

type kedaScalingModifiers struct {
	Formula          string `json:"formula,omitempty"`
	Target           string `json:"target,omitempty"`
	ActivationTarget string `json:"activationTarget,omitempty"`
	MetricType       string `json:"metricType,omitempty"`
}

type kedaTrigger struct {
	Type              string                         `json:"type"`
	Name              string                         `json:"name,omitempty"`
	UseCachedMetrics  bool                           `json:"useCachedMetrics,omitempty"`
	Metadata          map[string]string              `json:"metadata"`
	AuthenticationRef *kedaAuthRef                   `json:"authenticationRef,omitempty"`
	MetricType        autoscalingv2.MetricTargetType `json:"metricType,omitempty"`
}

type kedaAuthRef struct {
	Name string `json:"name"`
	Kind string `json:"kind,omitempty"`
}

type kedaFallback struct {
	FailureThreshold int32  `json:"failureThreshold"`
	Replicas         int32  `json:"replicas"`
	Behavior         string `json:"behavior,omitempty"`
}
