package sim

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
)

// Model 5's scenario (docs/model.md#model-5): prefill and decode pools, the handoff link, the
// hold limit, the load-failure policy and the prefill drain mode; their parsing and validation.

// Roles of a worker with disaggregation.
const (
	RolePrefill = "prefill"
	RoleDecode  = "decode"
)

// Lease modes (how long a prefill worker holds a handoff's blocks).
const (
	LeaseHeartbeat = "heartbeat"
	LeaseFixed     = "fixed"
)

// Load-failure policies.
const (
	LoadFailureFail      = "fail"
	LoadFailureRecompute = "recompute"
)

// Prefill drain modes.
const (
	DrainWait  = "wait"
	DrainFixed = "fixed"
	DrainSkip  = "skip"
)

// Handoff failure causes (summary.disaggregation.failed), in report order.
const (
	CauseLeaseExpired  = "lease_expired"
	CauseSourceRemoved = "source_removed"
	CauseSourceSkipped = "source_skipped"
	CauseForced        = "forced"
	CauseDecodeRemoved = "decode_removed"
)

// Defaults of model 5.
const (
	DefaultTransferLatencyMS   = 1.0
	DefaultTransferGBps        = 50.0
	DefaultLeaseTTLMS          = 480000
	DefaultPrefillDrainFixedMS = 30000
)

// Disaggregation splits the fleet into a prefill and a decode pool (docs/model.md#model-5).
type Disaggregation struct {
	Prefill           Pool         `json:"prefill"`
	Decode            Pool         `json:"decode"`
	Transfer          Link         `json:"transfer"`
	Lease             Lease        `json:"lease"`
	LoadFailurePolicy string       `json:"load_failure_policy"`
	PrefillDrain      PrefillDrain `json:"prefill_drain"`
}

// Pool is one pool's size and its workers' values; a field the scenario leaves out is the
// fleet's, stored filled in.
type Pool struct {
	Workers          int     `json:"workers"`
	GPUBlocks        int     `json:"gpu_blocks"`
	HostBlocks       int     `json:"host_blocks"`
	MaxNumSeqs       int     `json:"max_num_seqs"`
	MaxBatchedTokens int     `json:"max_batched_tokens"`
	GPUsPerWorker    int     `json:"gpus_per_worker"`
	H2DGBps          float64 `json:"h2d_gbps"`
	D2HGBps          float64 `json:"d2h_gbps"`
	Timing           Timing  `json:"timing"`
}

// Link is the handoff link out of each prefill worker.
type Link struct {
	LatencyMS     float64 `json:"latency_ms"`
	BandwidthGBps float64 `json:"bandwidth_gbps"`
}

// Lease is the hold limit: heartbeat (no limit) or fixed (TTLMS after the prompt completes).
type Lease struct {
	Mode  string  `json:"mode"`
	TTLMS float64 `json:"ttl_ms,omitempty"`
}

// PrefillDrain is how a draining prefill worker treats its outstanding handoffs.
type PrefillDrain struct {
	Mode    string  `json:"mode"`
	FixedMS float64 `json:"fixed_ms"`
}

// PoolAutoscalers is one model-4 autoscaler per pool; a nil one keeps its pool's size.
type PoolAutoscalers struct {
	Prefill *Autoscaler `json:"prefill,omitempty"`
	Decode  *Autoscaler `json:"decode,omitempty"`
}

// Of returns the autoscaler of the pool named role (RolePrefill or RoleDecode); nil for a pool
// without one or another name.
func (p *PoolAutoscalers) Of(role string) *Autoscaler {
	switch {
	case p == nil:
		return nil
	case role == RolePrefill:
		return p.Prefill
	case role == RoleDecode:
		return p.Decode
	}
	return nil
}

// Fleet returns the pool's workers as a Fleet: the pool's values with the fleet's block layout.
func (p Pool) Fleet(f Fleet) Fleet {
	return Fleet{Workers: p.Workers, GPUBlocks: p.GPUBlocks, HostBlocks: p.HostBlocks,
		BlockSize: f.BlockSize, BytesPerToken: f.BytesPerToken, MaxNumSeqs: p.MaxNumSeqs,
		MaxBatchedTokens: p.MaxBatchedTokens, GPUsPerWorker: p.GPUsPerWorker,
		H2DGBps: p.H2DGBps, D2HGBps: p.D2HGBps, Timing: p.Timing}
}

// InitialWorkers is the number of workers at the start: fleet.workers, or both pools'.
func (s *Scenario) InitialWorkers() int {
	if d := s.Disaggregation; d != nil {
		return d.Prefill.Workers + d.Decode.Workers
	}
	return s.Fleet.Workers
}

// scenarioJSON is a Scenario without its methods (no recursion in MarshalJSON).
type scenarioJSON Scenario

// MarshalJSON writes the scenario; with pool autoscalers, "autoscaler" is {"prefill", "decode"}
// (written last). Without them the bytes are those of the plain struct.
func (s Scenario) MarshalJSON() ([]byte, error) {
	if s.PoolAutoscalers == nil {
		return json.Marshal((*scenarioJSON)(&s))
	}
	return json.Marshal(struct {
		*scenarioJSON
		Autoscaler *PoolAutoscalers `json:"autoscaler"`
	}{(*scenarioJSON)(&s), s.PoolAutoscalers})
}

// UnmarshalJSON reads a stored canonical scenario, either form of "autoscaler".
func (s *Scenario) UnmarshalJSON(b []byte) error {
	var v struct {
		*scenarioJSON
		Autoscaler json.RawMessage `json:"autoscaler"`
	}
	v.scenarioJSON = (*scenarioJSON)(s)
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	s.Autoscaler, s.PoolAutoscalers = nil, nil
	raw := bytes.TrimSpace(v.Autoscaler)
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	if s.Disaggregation != nil {
		s.PoolAutoscalers = &PoolAutoscalers{}
		return json.Unmarshal(raw, s.PoolAutoscalers)
	}
	s.Autoscaler = &Autoscaler{}
	return json.Unmarshal(raw, s.Autoscaler)
}

// hasDisaggregation reports whether the document has a non-null disaggregation object.
func hasDisaggregation(top *objectView) bool {
	n := top.get("disaggregation")
	return n != nil && n.kind != kindNull
}

// decodeDisaggregation reads the disaggregation object, each pool field defaulting to the
// fleet's.
func decodeDisaggregation(errs *fieldErrors, n *jsonNode, f Fleet) *Disaggregation {
	const path = "disaggregation"
	v := openObject(errs, path, n)
	d := &Disaggregation{}
	for _, pool := range []struct {
		key string
		dst *Pool
	}{{RolePrefill, &d.Prefill}, {RoleDecode, &d.Decode}} {
		p := joinPath(path, pool.key)
		if !v.has(pool.key) && v.node != nil {
			errs.add(p, `required: the %s pool, like {"workers": 4} (any fleet field but block_size and bytes_per_token may be overridden)`, pool.key)
		}
		*pool.dst = decodePool(errs, p, v.get(pool.key), f)
	}
	t := openObject(errs, joinPath(path, "transfer"), v.get("transfer"))
	d.Transfer = Link{
		LatencyMS:     t.number("latency_ms", DefaultTransferLatencyMS, floatRange{max: maxTimeMS}),
		BandwidthGBps: t.number("bandwidth_gbps", DefaultTransferGBps, floatRange{minExclusive: true, max: maxRateLike}),
	}
	checkMinRate(errs, "disaggregation.transfer.bandwidth_gbps", d.Transfer.BandwidthGBps, "")
	t.finish()
	l := openObject(errs, joinPath(path, "lease"), v.get("lease"))
	d.Lease.Mode = l.choice("mode", LeaseHeartbeat, LeaseHeartbeat, LeaseFixed)
	if l.has("ttl_ms") {
		ttl := l.number("ttl_ms", DefaultLeaseTTLMS, floatRange{minExclusive: true, max: maxTimeMS})
		if d.Lease.Mode == LeaseFixed {
			d.Lease.TTLMS = ttl
		} else {
			errs.add("disaggregation.lease.ttl_ms", `only with "mode": "fixed" (a heartbeat lease never expires); remove ttl_ms or set mode to "fixed"`)
		}
	} else if d.Lease.Mode == LeaseFixed {
		d.Lease.TTLMS = DefaultLeaseTTLMS
	}
	l.finish()
	d.LoadFailurePolicy = v.choice("load_failure_policy", LoadFailureFail, LoadFailureFail, LoadFailureRecompute)
	pd := openObject(errs, joinPath(path, "prefill_drain"), v.get("prefill_drain"))
	d.PrefillDrain = PrefillDrain{
		Mode:    pd.choice("mode", DrainWait, DrainWait, DrainFixed, DrainSkip),
		FixedMS: pd.number("fixed_ms", DefaultPrefillDrainFixedMS, floatRange{max: maxTimeMS}),
	}
	pd.finish()
	v.finish()
	return d
}

// decodePool reads one pool: workers (required, ≥ 1) and the fleet fields it overrides.
func decodePool(errs *fieldErrors, path string, n *jsonNode, f Fleet) Pool {
	v := openObject(errs, path, n)
	if v.node != nil && !v.has("workers") {
		errs.add(joinPath(path, "workers"), "required: how many workers the pool starts with (an integer ≥ 1)")
	}
	for _, k := range []string{"block_size", "bytes_per_token"} {
		if v.node != nil && slices.ContainsFunc(v.node.members, func(m jsonMember) bool { return m.key == k }) {
			v.get(k) // reported here, not as unknown
			errs.add(joinPath(path, k), "is the fleet's, not per role (both pools share one KV layout); set fleet.%s instead", k)
		}
	}
	def := int64(1)
	if v.node == nil {
		def = 0 // a missing pool (reported): no rule counts its workers
	}
	p := Pool{
		Workers:          int(v.integer("workers", def, intRange{1, MaxWorkers})),
		GPUBlocks:        int(v.integer("gpu_blocks", int64(f.GPUBlocks), intRange{1, MaxCacheBlocks})),
		HostBlocks:       int(v.integer("host_blocks", int64(f.HostBlocks), intRange{0, MaxCacheBlocks})),
		MaxNumSeqs:       int(v.integer("max_num_seqs", int64(f.MaxNumSeqs), intRange{1, maxPerPassTokens})),
		MaxBatchedTokens: int(v.integer("max_batched_tokens", int64(f.MaxBatchedTokens), intRange{1, maxPerPassTokens})),
		GPUsPerWorker:    int(v.integer("gpus_per_worker", int64(f.GPUsPerWorker), intRange{1, maxGPUsPerWorker})),
		H2DGBps:          v.number("h2d_gbps", f.H2DGBps, floatRange{max: maxRateLike}),
		D2HGBps:          v.number("d2h_gbps", f.D2HGBps, floatRange{max: maxRateLike}),
	}
	if v.has("h2d_gbps") {
		checkMinRate(errs, joinPath(path, "h2d_gbps"), p.H2DGBps, "0 (instant) or ")
	}
	if v.has("d2h_gbps") {
		checkMinRate(errs, joinPath(path, "d2h_gbps"), p.D2HGBps, "0 (instant) or ")
	}
	t := openObject(errs, joinPath(path, "timing"), v.get("timing"))
	ft := f.Timing
	p.Timing = Timing{
		PrefillMS:             t.number("prefill_ms", ft.PrefillMS, floatRange{max: maxTimeMS}),
		PrefillMSPer1kTokens:  t.number("prefill_ms_per_1k_tokens", ft.PrefillMSPer1kTokens, floatRange{max: maxTimeMS}),
		DecodeMS:              t.number("decode_ms", ft.DecodeMS, floatRange{max: maxTimeMS}),
		DecodeMSPerSeq:        t.number("decode_ms_per_seq", ft.DecodeMSPerSeq, floatRange{max: maxTimeMS}),
		DecodeMSPer1kKVTokens: t.number("decode_ms_per_1k_kv_tokens", ft.DecodeMSPer1kKVTokens, floatRange{max: maxTimeMS}),
	}
	t.finish()
	v.finish()
	if p.MaxBatchedTokens < p.MaxNumSeqs {
		errs.add(joinPath(path, "max_batched_tokens"), "must be ≥ %s.max_num_seqs (%d) so every running request can decode in each pass (got %d)", path, p.MaxNumSeqs, p.MaxBatchedTokens)
	}
	return p
}

// decodePoolAutoscalers reads {"prefill": A, "decode": A}; each A's max_workers defaults to its
// pool's workers.
func decodePoolAutoscalers(errs *fieldErrors, n *jsonNode, d *Disaggregation) *PoolAutoscalers {
	v := openObject(errs, "autoscaler", n)
	pa := &PoolAutoscalers{}
	if v.node != nil {
		for _, m := range v.node.members {
			if m.key != RolePrefill && m.key != RoleDecode {
				errs.add(joinPath("autoscaler", m.key), `with disaggregation the autoscaler is one per pool: {"prefill": {…}, "decode": {…}} (either may be left out); move %s inside a pool's object`, m.key)
			}
		}
	}
	if a := v.get(RolePrefill); a != nil && a.kind != kindNull {
		pa.Prefill = decodeAutoscalerAt(errs, "autoscaler.prefill", a, d.Prefill.Workers)
	}
	if a := v.get(RoleDecode); a != nil && a.kind != kindNull {
		pa.Decode = decodeAutoscalerAt(errs, "autoscaler.decode", a, d.Decode.Workers)
	}
	if v.node != nil {
		for _, m := range v.node.members { // reported above; keep finish from reporting them again
			v.get(m.key)
		}
	}
	v.finish()
	if pa.Prefill == nil && pa.Decode == nil {
		return nil
	}
	return pa
}

// validatePoolAutoscalers checks the autoscalers of a scenario with disaggregation.
func validatePoolAutoscalers(errs *fieldErrors, s *Scenario) {
	pa := s.PoolAutoscalers
	if pa == nil {
		return
	}
	if len(s.ScaleIn) > 0 {
		errs.add("autoscaler", "a scenario has either an autoscaler or a scale_in schedule, not both: remove scale_in (or set it to []) or remove autoscaler")
	}
	if pa.Prefill != nil {
		validateAutoscalerAt(errs, "autoscaler.prefill", pa.Prefill)
	}
	if pa.Decode != nil {
		if pa.Decode.Metric == MetricHandoffsHeld {
			errs.add("autoscaler.decode.metric", "handoffs_held counts a prefill worker's outstanding handoffs: only the prefill pool's autoscaler may use it")
		}
		validateAutoscalerAt(errs, "autoscaler.decode", pa.Decode)
	}
}

// validateDisaggregation checks model 5's rules across fields (the pools against the requests,
// route_to and the scale-in schedule are in validateRequests and validateScaleIn).
func validateDisaggregation(errs *fieldErrors, s *Scenario, fleetWorkersGiven, kvcrEnabledGiven bool) {
	if fleetWorkersGiven {
		errs.add("fleet.workers", "not with disaggregation: the pools give the sizes (disaggregation.prefill.workers and disaggregation.decode.workers); remove fleet.workers")
	}
	if s.KVCR.Enabled && kvcrEnabledGiven {
		errs.add("kvcr.enabled", "must be false with disaggregation: peer prefix pulls between prefill workers are not part of model 5; remove it or set it to false")
	}
	s.KVCR.Enabled = false
}

// poolOf returns the role of the initial worker id.
func (d *Disaggregation) poolOf(id int) string {
	if id < d.Prefill.Workers {
		return RolePrefill
	}
	return RoleDecode
}

// requestTooLargePD says why a request fits neither pool, or "".
func requestTooLargePD(promptTokens, outputTokens int64, s *Scenario) string {
	d := s.Disaggregation
	for _, p := range []struct {
		role string
		pool Pool
	}{{RolePrefill, d.Prefill}, {RoleDecode, d.Decode}} {
		if why := requestTooLarge(promptTokens, outputTokens, p.pool.Fleet(s.Fleet)); why != "" {
			return fmt.Sprintf("%s (the %s pool: disaggregation.%s.gpu_blocks)", why, p.role, p.role)
		}
	}
	return ""
}
