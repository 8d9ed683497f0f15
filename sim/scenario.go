// Package sim is the discrete-event simulator of SPEC §3: a fleet of LLM inference workers with
// G1 (GPU) and G2 (host) KV caches, KVCR peer pulls guided by router hints, and scale-in.
//
// It is pure: no HTTP, no SQL, and no file access except through TraceSource.
package sim

// ModelVersion names the semantics of the model. It is part of every scenario_id, so a change
// to the model gives new ids instead of silently changing stored results.
const ModelVersion = "scalein-model/3"

// Scenario is a complete, validated what-if: fleet, KVCR, router, scale-in schedule and workload
// (SPEC §3.12). Parse fills every default, so a stored Scenario is complete.
type Scenario struct {
	Name    string          `json:"name"`
	Seed    int64           `json:"seed"`
	Fleet   Fleet           `json:"fleet"`
	KVCR    KVCR            `json:"kvcr"`
	Router  Router          `json:"router"`
	ScaleIn []ScaleInAction `json:"scale_in"`
	// Autoscaler, when set, drains and starts workers from a metric (SPEC §3.15); a scenario has
	// either an autoscaler or a non-empty ScaleIn.
	Autoscaler *Autoscaler   `json:"autoscaler,omitempty"`
	Workload   Workload      `json:"workload"`
	Report     ReportOptions `json:"report"`

	// trace holds the rows of a trace workload once Parse (or Run) has loaded them.
	trace []TraceRow
}

// Fleet describes the identical workers (SPEC §3.2).
type Fleet struct {
	Workers          int   `json:"workers"`
	GPUBlocks        int   `json:"gpu_blocks"`
	HostBlocks       int   `json:"host_blocks"`
	BlockSize        int   `json:"block_size"`
	BytesPerToken    int64 `json:"bytes_per_token"`
	MaxNumSeqs       int   `json:"max_num_seqs"`
	MaxBatchedTokens int   `json:"max_batched_tokens"`
	// GPUsPerWorker turns worker_seconds into summary.gpu_hours (SPEC §3.15); it changes nothing else.
	GPUsPerWorker int     `json:"gpus_per_worker"`
	H2DGBps       float64 `json:"h2d_gbps"`
	D2HGBps       float64 `json:"d2h_gbps"`
	Timing        Timing  `json:"timing"`
}

// Timing is the pass-duration model (SPEC §3.4 step 4), in milliseconds.
type Timing struct {
	PrefillMS            float64 `json:"prefill_ms"`
	PrefillMSPer1kTokens float64 `json:"prefill_ms_per_1k_tokens"`
	DecodeMS             float64 `json:"decode_ms"`
	DecodeMSPerSeq       float64 `json:"decode_ms_per_seq"`
	// DecodeMSPer1kKVTokens is the cost of reading the decoding requests' KV: per 1,000 tokens
	// of prompt plus tokens emitted before the pass, summed over the requests that decode.
	DecodeMSPer1kKVTokens float64 `json:"decode_ms_per_1k_kv_tokens"`
}

// KVCR configures peer pulls (SPEC §3.7).
type KVCR struct {
	Enabled               bool    `json:"enabled"`
	LatencyMS             float64 `json:"latency_ms"`
	BandwidthGBps         float64 `json:"bandwidth_gbps"`
	RejectDrainingSources bool    `json:"reject_draining_sources"`
}

// Router policies (SPEC §3.9).
const (
	PolicyKVAware     = "kv_aware"
	PolicyRoundRobin  = "round_robin"
	PolicyLeastLoaded = "least_loaded"
)

// Router configures routing and hints (SPEC §3.9).
type Router struct {
	Policy           string  `json:"policy"`
	Hints            bool    `json:"hints"`
	PrefillLoadScale float64 `json:"prefill_load_scale"`
	HostHitWeight    float64 `json:"host_hit_weight"`
	// MigrationLimit is how many times a request a forced removal would kill is routed again
	// instead (SPEC §3.15; Dynamo's DYN_MIGRATION_LIMIT). 0 = off.
	MigrationLimit int `json:"migration_limit"`
}

// Autoscaler metrics (SPEC §3.15).
const (
	MetricRequestsPerWorker = "requests_per_worker"
	MetricKVUsage           = "kv_usage"
)

// Autoscaler is an HPA-style control loop in the simulation (SPEC §3.15). Parse fills every
// default; a nil pointer limit means no limit, a nil GraceMS no grace.
type Autoscaler struct {
	IntervalMS        float64  `json:"interval_ms"`
	Metric            string   `json:"metric"`
	Target            float64  `json:"target"`
	Tolerance         float64  `json:"tolerance"`
	MetricDelayMS     float64  `json:"metric_delay_ms"`
	MinWorkers        int      `json:"min_workers"`
	MaxWorkers        int      `json:"max_workers"`
	ScaleDownWindowMS float64  `json:"scale_down_window_ms"`
	ScaleUpWindowMS   float64  `json:"scale_up_window_ms"`
	MaxRemovePerTick  *int     `json:"max_remove_per_tick"`
	MaxAddPerTick     *int     `json:"max_add_per_tick"`
	Select            string   `json:"select"`
	GraceMS           *float64 `json:"grace_ms"`
	StartupMS         float64  `json:"startup_ms"`
	ReuseDraining     bool     `json:"reuse_draining"`
}

// Scale-in selection policies (SPEC §3.8).
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

// Workload types (SPEC §3.10).
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
	// RateStages, when set, replaces RatePerS with piecewise-constant rates (SPEC §3.15).
	RateStages         []RateStage `json:"rate_stages,omitempty"`
	Turns              int         `json:"turns"`
	SystemPromptTokens int         `json:"system_prompt_tokens"`
	PrefixGroups       int         `json:"prefix_groups"`
	NewInputTokens     int         `json:"new_input_tokens"`
	OutputTokens       int         `json:"output_tokens"`
	ThinkTimeMS        float64     `json:"think_time_ms"`
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
