package sim

import (
	"encoding/json"
	"strconv"

	"github.com/scalein-planner/scalein/sim/podautoscaler"
)

// ReportSchema is the value of Report.Schema.
const ReportSchema = "scalein.report.v1"

// Report is the result of one run (docs/model.md#report). Times are milliseconds that are whole
// nanoseconds; pointers are null where a value does not apply.
type Report struct {
	Schema       string            `json:"schema"`
	Name         string            `json:"name"`
	ScenarioID   string            `json:"scenario_id"`
	ModelVersion string            `json:"model_version"`
	Digest       string            `json:"digest"`
	Summary      Summary           `json:"summary"`
	KVCR         KVCRCounts        `json:"kvcr"`
	Workers      []WorkerRow       `json:"workers"`
	ScaleIn      []ScaleInRow      `json:"scale_in"`
	Autoscaler   *AutoscalerReport `json:"autoscaler"`
	Timeseries   Timeseries        `json:"timeseries"`
	Requests     []RequestRow      `json:"requests,omitempty"`
	Sim          *SimStats         `json:"sim,omitempty"`
}

// Summary holds the run-wide figures.
type Summary struct {
	Requests      RequestCounts `json:"requests"`
	TTFTMS        Distribution  `json:"ttft_ms"`
	E2EMS         Distribution  `json:"e2e_ms"`
	Tokens        TokenCounts   `json:"tokens"`
	Preemptions   int64         `json:"preemptions"`
	DurationMS    float64       `json:"duration_ms"`
	WorkerSeconds float64       `json:"worker_seconds"`
	GPUHours      float64       `json:"gpu_hours"`
	Workers       WorkerCounts  `json:"workers"`
	// Autoscaler counts the decisions and their reasons (null without an autoscaler).
	Autoscaler *AutoscalerSummary `json:"autoscaler"`
	// SLO is the scenario's SLO attainment; null without an slo.
	SLO *SLOSummary `json:"slo"`
	// Disaggregation sums the handoffs; only with disaggregation (docs/model.md#model-5).
	Disaggregation *DisaggregationSummary `json:"disaggregation,omitempty"`
}

// DisaggregationSummary is summary.disaggregation.
type DisaggregationSummary struct {
	Handoffs                 int64             `json:"handoffs"`
	Landed                   int64             `json:"landed"`
	Failed                   HandoffFailures   `json:"failed"`
	Recomputed               int64             `json:"recomputed"`
	HeldBlockSeconds         float64           `json:"held_block_seconds"`
	HeldBlockSecondsDraining float64           `json:"held_block_seconds_draining"`
	TransferMS               Distribution      `json:"transfer_ms"`
	WorkerSeconds            PoolWorkerSeconds `json:"worker_seconds"`
}

// HandoffFailures counts failed handoffs by cause.
type HandoffFailures struct {
	LeaseExpired  int64 `json:"lease_expired"`
	SourceRemoved int64 `json:"source_removed"`
	SourceSkipped int64 `json:"source_skipped"`
	Forced        int64 `json:"forced"`
	DecodeRemoved int64 `json:"decode_removed"`
}

// PoolWorkerSeconds splits worker_seconds by pool.
type PoolWorkerSeconds struct {
	Prefill float64 `json:"prefill"`
	Decode  float64 `json:"decode"`
}

// OptNumber is a report member that only scenarios with disaggregation have: a nil *OptNumber
// is absent (omitempty, which costs an aggregated report nothing), else a number or null.
type OptNumber struct {
	null bool
	v    float64
}

// NumberOf is a present number.
func NumberOf(v float64) *OptNumber { return &OptNumber{v: v} }

// NullNumber is a present null.
func NullNumber() *OptNumber { return &OptNumber{null: true} }

// Value returns the number and whether it is one (not null or absent).
func (o *OptNumber) Value() (float64, bool) {
	if o == nil || o.null {
		return 0, false
	}
	return o.v, true
}

// MarshalJSON writes null or the number.
func (o OptNumber) MarshalJSON() ([]byte, error) {
	if o.null {
		return []byte("null"), nil
	}
	return json.Marshal(o.v)
}

// UnmarshalJSON reads null or a number.
func (o *OptNumber) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		*o = OptNumber{null: true}
		return nil
	}
	var v float64
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*o = OptNumber{v: v}
	return nil
}

// WorkerCounts counts workers holding GPUs (active + starting + draining, docs/model.md#model-3).
type WorkerCounts struct {
	Initial int `json:"initial"`
	Peak    int `json:"peak"`
	Final   int `json:"final"`
}

// AutoscalerReport records every autoscaler decision (docs/model.md#autoscaler "Report").
type AutoscalerReport struct {
	Decisions []Decision `json:"decisions"`
}

// Decision reasons (docs/model.md#autoscaler "Report"), in the order the report tests them.
const (
	ReasonAboveMax        = podautoscaler.ReasonAboveMax
	ReasonBelowMin        = podautoscaler.ReasonBelowMin
	ReasonNoMetrics       = podautoscaler.ReasonNoMetrics
	ReasonScaleUp         = podautoscaler.ReasonScaleUp
	ReasonScaleDown       = podautoscaler.ReasonScaleDown
	ReasonWithinTolerance = podautoscaler.ReasonWithinTolerance
	ReasonHeldByStarting  = podautoscaler.ReasonHeldByStarting
	ReasonStabilized      = podautoscaler.ReasonStabilized
	ReasonLimited         = podautoscaler.ReasonLimited
	ReasonAtBound         = podautoscaler.ReasonAtBound
	ReasonNoChange        = podautoscaler.ReasonNoChange
)

// Decision is one autoscaler decision: the pods the controller saw, the chain rec → stab →
// limit → desired, and the workers handled (ids, in the order they were handled). Pointers are
// null where the controller computed no value.
type Decision struct {
	TMS         float64  `json:"t_ms"`
	Ready       *int     `json:"ready"`
	Unready     *int     `json:"unready"`
	Missing     *int     `json:"missing"`
	Usage       *float64 `json:"usage"`
	Ratio       *float64 `json:"ratio"`
	NewRatio    *float64 `json:"new_ratio"`
	Rec         *int     `json:"rec"`
	Stab        *int     `json:"stab"`
	Up          *int     `json:"up"`
	Down        *int     `json:"down"`
	Limit       *int     `json:"limit"`
	Current     int      `json:"current"`
	Desired     int      `json:"desired"`
	Reason      string   `json:"reason"`
	Drained     []int    `json:"drained"`
	Cancelled   []int    `json:"cancelled"`
	Reactivated []int    `json:"reactivated"`
	Started     []int    `json:"started"`
	// Role is the pool the decision scales (model 5 only).
	Role string `json:"role,omitempty"`
}

// AutoscalerSummary counts the decisions (summary.autoscaler).
type AutoscalerSummary struct {
	Decisions  int64        `json:"decisions"`
	ScaleUps   int64        `json:"scale_ups"`
	ScaleDowns int64        `json:"scale_downs"`
	Reasons    ReasonCounts `json:"reasons"`
}

func (s *AutoscalerSummary) add(d Decision) {
	s.Decisions++
	if d.Desired > d.Current {
		s.ScaleUps++
	} else if d.Desired < d.Current {
		s.ScaleDowns++
	}
	if s.Reasons == nil {
		s.Reasons = ReasonCounts{}
	}
	s.Reasons[d.Reason]++
}

// ReasonCounts maps every reason to its number of decisions; it encodes every reason, in
// report order, 0 included.
type ReasonCounts map[string]int64

// MarshalJSON writes the reasons in report order.
func (r ReasonCounts) MarshalJSON() ([]byte, error) {
	b := []byte{'{'}
	for i, k := range podautoscaler.Reasons {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendQuote(b, k)
		b = append(b, ':')
		b = strconv.AppendInt(b, r[k], 10)
	}
	return append(b, '}'), nil
}

// RequestCounts counts requests by how they ended.
type RequestCounts struct {
	Total     int64 `json:"total"`
	Completed int64 `json:"completed"`
	Killed    int64 `json:"killed"`
	// Failed counts requests whose handoff failed; only with disaggregation.
	Failed   *int64 `json:"failed,omitempty"`
	Migrated int64  `json:"migrated"`
}

// Distribution summarises a set of durations; all null when the set is empty.
type Distribution struct {
	Mean *float64 `json:"mean"`
	P50  *float64 `json:"p50"`
	P90  *float64 `json:"p90"`
	P99  *float64 `json:"p99"`
	Max  *float64 `json:"max"`
}

// TokenCounts is the token accounting taken at each request's first admission:
// Prompt = G1Reused + G2Reused + KVCRPulled + Recomputed.
type TokenCounts struct {
	Prompt     int64 `json:"prompt"`
	G1Reused   int64 `json:"g1_reused"`
	G2Reused   int64 `json:"g2_reused"`
	KVCRPulled int64 `json:"kvcr_pulled"`
	Recomputed int64 `json:"recomputed"`
	Output     int64 `json:"output"`
}

// KVCRCounts counts hints and pulls by staging outcome (docs/model.md#kvcr).
type KVCRCounts struct {
	Hints              int64 `json:"hints"`
	Staged             int64 `json:"staged"`
	Success            int64 `json:"success"`
	Partial            int64 `json:"partial"`
	Miss               int64 `json:"miss"`
	NotNeeded          int64 `json:"not_needed"`
	RejectedDraining   int64 `json:"rejected_draining"`
	RejectedRemoved    int64 `json:"rejected_removed"`
	StagedFromDraining int64 `json:"staged_from_draining"`
	Aborted            int64 `json:"aborted"`
	Blocks             int64 `json:"blocks"`
	Bytes              int64 `json:"bytes"`
}

// Worker states.
const (
	StateStarting = "starting"
	StateActive   = "active"
	StateDraining = "draining"
	StateRemoved  = "removed"
)

// WorkerRow is one worker's lifecycle; MarkedAtMS is the instant it was marked draining and
// RemovedAtMS its removal deadline.
type WorkerRow struct {
	ID                int      `json:"id"`
	FinalState        string   `json:"final_state"`
	StartedAtMS       *float64 `json:"started_at_ms"`
	ActiveAtMS        *float64 `json:"active_at_ms"`
	Reactivations     int64    `json:"reactivations"`
	MarkedAtMS        *float64 `json:"marked_at_ms"`
	LastWorkMS        *float64 `json:"last_work_ms"`
	RemovedAtMS       *float64 `json:"removed_at_ms"`
	DrainMS           *float64 `json:"drain_ms"`
	PinWaitMS         *float64 `json:"pin_wait_ms"`
	GraceDeadlineMS   *float64 `json:"grace_deadline_ms"`
	Forced            bool     `json:"forced"`
	RequestsCompleted int64    `json:"requests_completed"`
	RequestsKilled    int64    `json:"requests_killed"`
	PullsServed       int64    `json:"pulls_served"`
	PullsReceived     int64    `json:"pulls_received"`
	// Model 5 only: the worker's pool, and for a prefill worker its held block-seconds
	// (null on a decode worker).
	Role                     string     `json:"role,omitempty"`
	HeldBlockSeconds         *OptNumber `json:"held_block_seconds,omitempty"`
	HeldBlockSecondsDraining *OptNumber `json:"held_block_seconds_draining,omitempty"`
}

// ScaleInRow reports one scale-in action: the ids it drained and those it skipped because they
// were no longer active when it fired.
type ScaleInRow struct {
	AtMS    float64 `json:"at_ms"`
	Drained []int   `json:"drained"`
	Skipped []int   `json:"skipped"`
}

// Timeseries is the run cut into equal buckets (docs/model.md#report, #report-details).
type Timeseries struct {
	BucketMS float64  `json:"bucket_ms"`
	Buckets  []Bucket `json:"buckets"`
}

// Bucket covers [TMS, TMS+BucketMS). Gauges are the state at its end; counters count events
// inside it.
type Bucket struct {
	TMS           float64  `json:"t_ms"`
	Active        int64    `json:"active"`
	Draining      int64    `json:"draining"`
	Starting      int64    `json:"starting"`
	Waiting       int64    `json:"waiting"`
	Running       int64    `json:"running"`
	PullsStaged   int64    `json:"pulls_staged"`
	PullsLanded   int64    `json:"pulls_landed"`
	PullsRejected int64    `json:"pulls_rejected"`
	Completed     int64    `json:"completed"`
	Migrated      int64    `json:"migrated"`
	TTFTP50MS     *float64 `json:"ttft_p50_ms"`
	// Attainment is the share of the requests that arrived in the bucket that met the SLO;
	// null without an slo or without arrivals.
	Attainment *float64 `json:"attainment"`
	// PoolColumns are the pools' columns, only with disaggregation (docs/model.md#model-5).
	*PoolColumns
}

// PoolColumns are a bucket's per-pool gauges and handoff counters (model 5).
type PoolColumns struct {
	PrefillActive   int64 `json:"prefill_active"`
	PrefillDraining int64 `json:"prefill_draining"`
	PrefillStarting int64 `json:"prefill_starting"`
	DecodeActive    int64 `json:"decode_active"`
	DecodeDraining  int64 `json:"decode_draining"`
	DecodeStarting  int64 `json:"decode_starting"`
	HandoffsLanded  int64 `json:"handoffs_landed"`
	HandoffsFailed  int64 `json:"handoffs_failed"`
}

// Request statuses at the end of a run.
const (
	StatusCompleted = "completed"
	StatusKilled    = "killed"
	StatusFailed    = "failed" // model 5: its handoff failed
)

// Pull outcomes (docs/model.md#kvcr).
const (
	OutcomeSuccess          = "success"
	OutcomePartial          = "partial"
	OutcomeMiss             = "miss"
	OutcomeNotNeeded        = "not_needed"
	OutcomeRejectedDraining = "rejected_draining"
	OutcomeRejectedRemoved  = "rejected_removed"
	OutcomeAborted          = "aborted"
)

// RequestRow is one request's record, present only with report.per_request.
type RequestRow struct {
	ID               string   `json:"id"`
	Worker           *int     `json:"worker"`
	ArrivalMS        float64  `json:"arrival_ms"`
	FirstTokenMS     *float64 `json:"first_token_ms"`
	DoneMS           *float64 `json:"done_ms"`
	Status           string   `json:"status"`
	PromptTokens     int64    `json:"prompt_tokens"`
	G1ReusedTokens   int64    `json:"g1_reused_tokens"`
	G2ReusedTokens   int64    `json:"g2_reused_tokens"`
	KVCRPulledTokens int64    `json:"kvcr_pulled_tokens"`
	RecomputedTokens int64    `json:"recomputed_tokens"`
	PullOutcome      *string  `json:"pull_outcome"`
	Preemptions      int64    `json:"preemptions"`
	Migrations       int64    `json:"migrations"`
	// Model 5 only: its last handoff's prefill worker, wait for a decode admission and
	// transfer (null where none).
	PrefillWorker *OptNumber `json:"prefill_worker,omitempty"`
	HandoffWaitMS *OptNumber `json:"handoff_wait_ms,omitempty"`
	TransferMS    *OptNumber `json:"transfer_ms,omitempty"`
}

// SimStats describes the run itself, not the model; it is excluded from the digest.
type SimStats struct {
	Events int64   `json:"events"`
	WallMS float64 `json:"wall_ms"`
}

// PerWorker is the metric per worker the decision compared with target (ratio × target: the
// pods' average for a Pods metric, the value over current replicas for an External one); ok is
// false where no sample was read.
func (d Decision) PerWorker(target float64) (v float64, ok bool) {
	if d.Ratio == nil {
		return 0, false
	}
	return *d.Ratio * target, true
}
