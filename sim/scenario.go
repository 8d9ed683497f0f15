package sim

import (
	"encoding/json"
	"math"
	"slices"
	"strconv"
	"time"
)

// ModelVersion names the semantics of the model. It is part of every scenario_id, so a change
// to the model gives new ids instead of silently changing stored results.
const ModelVersion = "scalein-model/4"

// Scenario is a complete, validated what-if: fleet, KVCR, router, scale-in schedule and workload
// (docs/model.md#scenario). Parse fills every default, so a stored Scenario is complete.
type Scenario struct {
	Name    string          `json:"name"`
	Seed    int64           `json:"seed"`
	Fleet   Fleet           `json:"fleet"`
	KVCR    KVCR            `json:"kvcr"`
	Router  Router          `json:"router"`
	ScaleIn []ScaleInAction `json:"scale_in"`
	// Autoscaler, when set, drains and starts workers from a metric (docs/model.md#model-3); a scenario has
	// either an autoscaler or a non-empty ScaleIn.
	Autoscaler *Autoscaler   `json:"autoscaler,omitempty"`
	Workload   Workload      `json:"workload"`
	Report     ReportOptions `json:"report"`
	// SLO, when set, judges the run by the share of requests that met it (summary.slo); it
	// changes no simulated figure. Absent, it leaves the canonical JSON (and the id) unchanged.
	SLO *SLO `json:"slo,omitempty"`

	// trace holds the rows of a trace workload once Parse (or Run) has loaded them.
	trace []TraceRow
}

// Fleet describes the identical workers (docs/model.md#workers).
type Fleet struct {
	Workers          int   `json:"workers"`
	GPUBlocks        int   `json:"gpu_blocks"`
	HostBlocks       int   `json:"host_blocks"`
	BlockSize        int   `json:"block_size"`
	BytesPerToken    int64 `json:"bytes_per_token"`
	MaxNumSeqs       int   `json:"max_num_seqs"`
	MaxBatchedTokens int   `json:"max_batched_tokens"`
	// GPUsPerWorker turns worker_seconds into summary.gpu_hours (docs/model.md#model-3); it changes nothing else.
	GPUsPerWorker int     `json:"gpus_per_worker"`
	H2DGBps       float64 `json:"h2d_gbps"`
	D2HGBps       float64 `json:"d2h_gbps"`
	Timing        Timing  `json:"timing"`
}

// Timing is the pass-duration model (docs/model.md#passes step 4), in milliseconds.
type Timing struct {
	PrefillMS            float64 `json:"prefill_ms"`
	PrefillMSPer1kTokens float64 `json:"prefill_ms_per_1k_tokens"`
	DecodeMS             float64 `json:"decode_ms"`
	DecodeMSPerSeq       float64 `json:"decode_ms_per_seq"`
	// DecodeMSPer1kKVTokens is the cost of reading the decoding requests' KV: per 1,000 tokens
	// of prompt plus tokens emitted before the pass, summed over the requests that decode.
	DecodeMSPer1kKVTokens float64 `json:"decode_ms_per_1k_kv_tokens"`
}

// KVCR configures peer pulls (docs/model.md#kvcr).
type KVCR struct {
	Enabled               bool    `json:"enabled"`
	LatencyMS             float64 `json:"latency_ms"`
	BandwidthGBps         float64 `json:"bandwidth_gbps"`
	RejectDrainingSources bool    `json:"reject_draining_sources"`
}

// Router policies (docs/model.md#routing).
const (
	PolicyKVAware     = "kv_aware"
	PolicyRoundRobin  = "round_robin"
	PolicyLeastLoaded = "least_loaded"
)

// Router configures routing and hints (docs/model.md#routing).
type Router struct {
	Policy           string  `json:"policy"`
	Hints            bool    `json:"hints"`
	PrefillLoadScale float64 `json:"prefill_load_scale"`
	HostHitWeight    float64 `json:"host_hit_weight"`
	// MigrationLimit is how many times a request a forced removal would kill is routed again
	// instead (docs/model.md#model-3; Dynamo's DYN_MIGRATION_LIMIT). 0 = off.
	MigrationLimit int `json:"migration_limit"`
}

// Autoscaler metrics (docs/model.md#hpa-samples).
const (
	MetricRequestsPerWorker = "requests_per_worker"
	MetricRequestsWaiting   = "requests_waiting"
	MetricRequestsRunning   = "requests_running"
	MetricKVUsage           = "kv_usage"
	// MetricOfferedRate is the workload's offered request rate, known from the scenario
	// (External only): what a perfect autoscaler scales on.
	MetricOfferedRate = "offered_rate"
)

// Autoscaler metric sources and external aggregates (docs/model.md#autoscaler).
const (
	SourcePods     = "pods"
	SourceExternal = "external"
	AggregateSum   = "sum"
	AggregateAvg   = "avg"
	AggregateMax   = "max"
)

// Autoscaler is the Kubernetes HPA controller in the simulation (docs/model.md#autoscaler, amending #model-3).
// Parse fills every default of the top-level fields; a nil GraceMS is no grace. Behavior nil
// is the legacy path (an HPA without spec.behavior) unless a model-3 shorthand field is
// present; the shorthand fields keep their presence (absent stays absent), so a stored
// scenario reads as it was written.
type Autoscaler struct {
	IntervalMS    float64 `json:"interval_ms"`
	Metric        string  `json:"metric"`
	Source        string  `json:"source"`
	Aggregate     string  `json:"aggregate,omitempty"`
	Target        float64 `json:"target"`
	Tolerance     float64 `json:"tolerance"`
	MetricDelayMS float64 `json:"metric_delay_ms"`
	MinWorkers    int     `json:"min_workers"`
	MaxWorkers    int     `json:"max_workers"`
	// DownscaleWindowMS is the controller's --horizontal-pod-autoscaler-downscale-stabilization:
	// the legacy window and the default scale-down window of a behavior.
	DownscaleWindowMS float64   `json:"downscale_window_ms"`
	Behavior          *Behavior `json:"behavior,omitempty"`
	// Model-3 shorthand for a behavior (docs/model.md#autoscaler "Fields"): nil / zero when absent.
	ScaleDownWindowMS *float64 `json:"scale_down_window_ms,omitempty"`
	ScaleUpWindowMS   *float64 `json:"scale_up_window_ms,omitempty"`
	MaxRemovePerTick  PerTick  `json:"max_remove_per_tick,omitzero"`
	MaxAddPerTick     PerTick  `json:"max_add_per_tick,omitzero"`
	Select            string   `json:"select"`
	GraceMS           *float64 `json:"grace_ms"`
	StartupMS         float64  `json:"startup_ms"`
	PendingMS         float64  `json:"pending_ms"`
	ReuseDraining     bool     `json:"reuse_draining"`
}

// UsesShorthand reports whether a model-3 shorthand field is present: the scenario then takes
// the behavior path.
func (a *Autoscaler) UsesShorthand() bool {
	return a.ScaleDownWindowMS != nil || a.ScaleUpWindowMS != nil || a.MaxRemovePerTick.Present() || a.MaxAddPerTick.Present()
}

// Behavior is spec.behavior of an HPA, in ms (docs/model.md#autoscaler); every field optional.
type Behavior struct {
	ScaleUp   *ScalingRules `json:"scale_up,omitempty"`
	ScaleDown *ScalingRules `json:"scale_down,omitempty"`
}

// Clone returns a deep copy (nil for nil).
func (b *Behavior) Clone() *Behavior {
	if b == nil {
		return nil
	}
	c := &Behavior{ScaleUp: b.ScaleUp.Clone(), ScaleDown: b.ScaleDown.Clone()}
	return c
}

// Clone returns a deep copy (nil for nil).
func (r *ScalingRules) Clone() *ScalingRules {
	if r == nil {
		return nil
	}
	c := *r
	if r.WindowMS != nil {
		w := *r.WindowMS
		c.WindowMS = &w
	}
	if r.Tolerance != nil {
		t := *r.Tolerance
		c.Tolerance = &t
	}
	c.Policies = slices.Clone(r.Policies)
	return &c
}

// Behavior select policies (selectPolicy).
const (
	SelectPolicyMax      = "max"
	SelectPolicyMin      = "min"
	SelectPolicyDisabled = "disabled"
)

// Scaling policy types.
const (
	PolicyTypePods    = "pods"
	PolicyTypePercent = "percent"
)

// ScalingRules is one direction of a behavior; nil and empty mean Kubernetes' default.
type ScalingRules struct {
	WindowMS  *int64          `json:"window_ms,omitempty"`
	Select    string          `json:"select,omitempty"`
	Policies  []ScalingPolicy `json:"policies,omitempty"`
	Tolerance *float64        `json:"tolerance,omitempty"`
}

// ScalingPolicy allows a change of Value workers (pods) or Value percent per PeriodMS.
type ScalingPolicy struct {
	Type     string `json:"type"`
	Value    int    `json:"value"`
	PeriodMS int64  `json:"period_ms"`
}

// PerTick is a model-3 shorthand limit as written: absent (the zero value), null (no limit)
// or a count ≥ 1.
type PerTick struct {
	set bool
	n   int
}

// PerTickOf returns a present limit of k (k ≤ 0: null, no limit).
func PerTickOf(k int) PerTick { return PerTick{set: true, n: max(k, 0)} }

// PerTickNone returns a present null limit.
func PerTickNone() PerTick { return PerTick{set: true} }

// PerTickPtr returns a present limit from a pointer (nil: null).
func PerTickPtr(k *int) PerTick {
	if k == nil {
		return PerTickNone()
	}
	return PerTickOf(*k)
}

// Present reports whether the field was written.
func (p PerTick) Present() bool { return p.set }

// IsZero reports an absent field (omitzero).
func (p PerTick) IsZero() bool { return !p.set }

// Ptr is the limit as model 3 read it: nil for null or absent.
func (p PerTick) Ptr() *int {
	if p.n == 0 {
		return nil
	}
	k := p.n
	return &k
}

// MarshalJSON writes null or the count.
func (p PerTick) MarshalJSON() ([]byte, error) {
	if p.n == 0 {
		return []byte("null"), nil
	}
	return []byte(strconv.Itoa(p.n)), nil
}

// UnmarshalJSON reads null or a count (a stored canonical scenario).
func (p *PerTick) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		*p = PerTickNone()
		return nil
	}
	var k int
	if err := json.Unmarshal(b, &k); err != nil {
		return err
	}
	*p = PerTickOf(k)
	return nil
}

// Scale-in selection policies (docs/model.md#scale-in).
const (
	SelectHighestID   = "highest_id"
	SelectLeastLoaded = "least_loaded"
	SelectLeastCached = "least_cached"
)

// ScaleInAction drains either the named Workers or Count workers chosen by Select, at AtMS.
type ScaleInAction struct {
	AtMS    float64  `json:"at_ms"`
	Workers []int    `json:"workers,omitempty"`
	Count   int      `json:"count,omitempty"`
	Select  string   `json:"select,omitempty"`
	GraceMS *float64 `json:"grace_ms,omitempty"`
}

// Workload types (docs/model.md#workloads).
const (
	WorkloadRequests = "requests"
	WorkloadSessions = "sessions"
	WorkloadTrace    = "trace"
)

// Workload is exactly one of scripted requests, synthetic sessions or a trace.
type Workload struct {
	Type     string            `json:"type"`
	Requests []ScriptedRequest `json:"requests,omitempty"`
	Sessions *Sessions         `json:"sessions,omitempty"`
	Trace    *TraceSpec        `json:"trace,omitempty"`
}

// ScriptedRequest is one request of a "requests" workload. Blocks are content labels, one per
// full block; "P*8" stands for P#0 … P#7.
type ScriptedRequest struct {
	ID           string   `json:"id"`
	AtMS         float64  `json:"at_ms"`
	Blocks       []string `json:"blocks"`
	TailTokens   int      `json:"tail_tokens"`
	OutputTokens int      `json:"output_tokens"`
	RouteTo      *int     `json:"route_to,omitempty"`
}

// Sessions is the seeded synthetic multi-turn workload.
type Sessions struct {
	Count    int     `json:"count"`
	RatePerS float64 `json:"rate_per_s"`
	// RateStages, when set, replaces RatePerS with piecewise-constant rates (docs/model.md#model-3).
	RateStages         []RateStage `json:"rate_stages,omitempty"`
	Turns              int         `json:"turns"`
	SystemPromptTokens int         `json:"system_prompt_tokens"`
	PrefixGroups       int         `json:"prefix_groups"`
	NewInputTokens     int         `json:"new_input_tokens"`
	OutputTokens       int         `json:"output_tokens"`
	ThinkTimeMS        float64     `json:"think_time_ms"`
	// StartsAt is the wall-clock instant time 0 stands for (RFC 3339, as a Prometheus load
	// records its first sample): informative, the pages read times as clock times; it changes
	// no simulated figure. Absent, it leaves the canonical JSON (and the id) unchanged.
	StartsAt string `json:"starts_at,omitempty"`
}

// StartTime is the wall-clock instant a scenario's time 0 stands for
// (workload.sessions.starts_at), and false when it has none.
func (s *Scenario) StartTime() (time.Time, bool) {
	if s == nil || s.Workload.Sessions == nil || s.Workload.Sessions.StartsAt == "" {
		return time.Time{}, false
	}
	t, err := time.Parse(time.RFC3339, s.Workload.Sessions.StartsAt)
	return t, err == nil
}

// RateStage is one stretch of constant session arrival rate.
type RateStage struct {
	DurationMS float64 `json:"duration_ms"`
	RatePerS   float64 `json:"rate_per_s"`
}

// BuiltinMooncakeConversation names the shipped Mooncake FAST'25 conversation trace.
const BuiltinMooncakeConversation = "mooncake-conversation"

// TraceSpec names a Mooncake-format trace by built-in Name, by the SHA256 of an uploaded trace,
// or (command line only) by a local Path, which Parse replaces by its SHA256.
type TraceSpec struct {
	Name             string  `json:"name,omitempty"`
	SHA256           string  `json:"sha256,omitempty"`
	Path             string  `json:"path,omitempty"`
	TraceBlockTokens int     `json:"trace_block_tokens"`
	Speedup          float64 `json:"speedup"`
	Limit            int     `json:"limit,omitempty"`
	OffsetMS         float64 `json:"offset_ms"`
}

// ReportOptions selects optional parts of the report.
type ReportOptions struct {
	PerRequest bool `json:"per_request"`
}

// TraceRow is one parsed row of a Mooncake-format trace.
type TraceRow struct {
	Line         int     // 1-based line number in the file
	TimestampMS  float64 // arrival, ms from the trace start
	InputLength  int
	OutputLength int
	HashIDs      []int64 // one id per trace_block_tokens tokens
}

// TraceSource gives the simulator the bytes of traces it does not ship itself.
// Trace returns the raw JSONL content of the uploaded trace with this SHA-256 (lower-case hex).
type TraceSource interface {
	Trace(sha256 string) ([]byte, error)
}

// ScaleDownWindow is the scale-down stabilisation window in ms that a decision uses: the
// behavior's, the shorthand's, or downscale_window_ms.
func (a *Autoscaler) ScaleDownWindow() float64 {
	switch {
	case a.Behavior != nil && a.Behavior.ScaleDown != nil && a.Behavior.ScaleDown.WindowMS != nil:
		return float64(*a.Behavior.ScaleDown.WindowMS)
	case a.ScaleDownWindowMS != nil:
		return *a.ScaleDownWindowMS
	}
	return a.DownscaleWindowMS
}

// ScaleDownStep is the scale-down limit as workers per decision when it is one (the shorthand
// max_remove_per_tick, or a behavior whose one scale-down policy is Pods per interval); nil
// otherwise.
func (a *Autoscaler) ScaleDownStep() *int {
	if a.MaxRemovePerTick.Present() {
		return a.MaxRemovePerTick.Ptr()
	}
	if b := a.Behavior; b != nil && b.ScaleDown != nil && len(b.ScaleDown.Policies) == 1 {
		if p := b.ScaleDown.Policies[0]; p.Type == PolicyTypePods {
			v := p.Value
			return &v
		}
	}
	return nil
}

// SetScaleDown sets the scale-down window (ms) and the workers one decision may remove (nil:
// no limit), in the scenario's own terms: inside its behavior when it has one (the window
// rounded to whole ms, the policy per interval_ms), else as the model-3 shorthand.
func (a *Autoscaler) SetScaleDown(windowMS float64, step *int) {
	if a.Behavior == nil {
		w := windowMS
		a.ScaleDownWindowMS = &w
		a.MaxRemovePerTick = PerTickPtr(step)
		return
	}
	a.Behavior = a.Behavior.Clone()
	r := a.Behavior.ScaleDown.Clone()
	if r == nil {
		r = &ScalingRules{}
	}
	w := min(max(int64(math.Round(windowMS)), 0), MaxBehaviorWindowMS)
	r.WindowMS = &w
	period := min(max(int64(math.Round(a.IntervalMS)), 1), MaxPolicyPeriodMS)
	if step == nil {
		r.Policies = []ScalingPolicy{{Type: PolicyTypePercent, Value: 100, PeriodMS: period}}
	} else {
		r.Policies = []ScalingPolicy{{Type: PolicyTypePods, Value: *step, PeriodMS: period}}
	}
	a.Behavior.ScaleDown = r
}

// ScaleDownPolicies are the behavior's own scale-down policies, nil when it sets none (or has
// no behavior).
func (a *Autoscaler) ScaleDownPolicies() []ScalingPolicy {
	if a.Behavior == nil || a.Behavior.ScaleDown == nil || len(a.Behavior.ScaleDown.Policies) == 0 {
		return nil
	}
	return slices.Clone(a.Behavior.ScaleDown.Policies)
}

// SetScaleDownPolicies sets the scale-down policies, turning the autoscaler into the behavior
// it stands for when it has none: the shorthand becomes the behavior it meant (windows rounded
// to whole ms, periods of interval_ms); an autoscaler on the legacy path gets a behavior with
// only these policies (Kubernetes' defaults elsewhere).
func (a *Autoscaler) SetScaleDownPolicies(ps []ScalingPolicy) {
	if a.Behavior == nil {
		st := a.ControllerSettings()
		b := &Behavior{ScaleDown: &ScalingRules{}}
		if st.Behavior != nil { // the shorthand
			w := st.Behavior.Down.WindowNS / 1_000_000
			b.ScaleDown.WindowMS = &w
			uw := st.Behavior.Up.WindowNS / 1_000_000
			period := min(max(int64(math.Round(a.IntervalMS)), 1), MaxPolicyPeriodMS)
			b.ScaleUp = &ScalingRules{WindowMS: &uw, Policies: []ScalingPolicy{{Type: PolicyTypePods, Value: st.Behavior.Up.Policies[0].Value, PeriodMS: period}}}
		}
		a.ScaleDownWindowMS, a.ScaleUpWindowMS = nil, nil
		a.MaxRemovePerTick, a.MaxAddPerTick = PerTick{}, PerTick{}
		a.Behavior = b
	} else {
		a.Behavior = a.Behavior.Clone()
		if a.Behavior.ScaleDown == nil {
			a.Behavior.ScaleDown = &ScalingRules{}
		}
	}
	a.Behavior.ScaleDown.Policies = slices.Clone(ps)
}
