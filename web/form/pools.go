package form

import (
	"reflect"
	"strings"

	"github.com/a-h/templ"

	"github.com/scalein-planner/scalein/sim"
)

// Model 5 in the form (docs/model.md#model-5): the Pools section is a choice between one
// aggregated fleet (every model before 5) and a prefill pool and a decode pool with the
// handoff between them.

// PoolsModePath is the choice of the Pools section. It is the form's own field, not a
// scenario path: the scenario has disaggregation or not.
const PoolsModePath = "pools_mode"

// The two pool modes.
const (
	PoolsAggregated = "aggregated"
	PoolsPD         = "prefill_decode"
)

var poolsModeField = fieldSpec{Path: PoolsModePath, Label: "Pools", Kind: kindSelect, Start: PoolsAggregated,
	Help: "Aggregated: every worker prefills and decodes (the fleet above). Prefill + decode: a prompt is prefilled on a prefill worker, which holds its KV until a decode worker has read it; the fleet's workers field is then not used.",
	Options: [][2]string{
		{PoolsAggregated, "Aggregated (one fleet)"},
		{PoolsPD, "Prefill + decode pools (disaggregated)"},
	}}

// poolFields are the fields a pool may override, for role ("prefill" or "decode").
func poolFields(role string) []fieldSpec {
	p := "disaggregation." + role + "."
	return []fieldSpec{
		{Path: p + "workers", Label: "Workers", Unit: "workers", Kind: kindInt, Help: "The pool's size before any scale-in; required, at least 1."},
		{Path: p + "gpu_blocks", Label: "GPU cache (G1)", Unit: "blocks", Kind: kindInt, Help: "Empty = the fleet's."},
		{Path: p + "host_blocks", Label: "Host cache (G2)", Unit: "blocks", Kind: kindInt, Help: "Empty = the fleet's."},
		{Path: p + "max_num_seqs", Label: "Max running requests", Unit: "requests", Kind: kindInt, Help: "Empty = the fleet's."},
		{Path: p + "max_batched_tokens", Label: "Max batched tokens", Unit: "tokens/pass", Kind: kindInt, Help: "Empty = the fleet's; at least the pool's max running requests."},
		{Path: p + "gpus_per_worker", Label: "GPUs per worker", Unit: "GPUs", Kind: kindInt, Help: "Empty = the fleet's; turns the pool's worker-seconds into GPU-hours."},
	}
}

// Paths of the handoff fields the form treats specially.
const (
	LeaseModePath  = "disaggregation.lease.mode"
	LeaseTTLPath   = "disaggregation.lease.ttl_ms"
	DrainModePath  = "disaggregation.prefill_drain.mode"
	DrainFixedPath = "disaggregation.prefill_drain.fixed_ms"
)

// handoffGroup is how a prompt's KV moves from its prefill worker to a decode worker, and what
// a drain of a prefill worker does to the handoffs it still holds.
var handoffGroup = fieldGroup{Legend: "Handoff",
	Note: "A prefill worker holds a prompt's blocks from the end of its prefill until a decode worker has pulled them. Pool timings and host lanes other than the fleet's are set in the Scenario JSON box at the bottom. With the autoscaler chosen as the scale-in, each pool's own autoscaler is set below (the autoscaler fields above are one fleet's and are not used with pools). KVCR peer pulls are off with pools (not part of model 5).",
	Fields: []fieldSpec{
		{Path: "disaggregation.transfer.latency_ms", Label: "Link latency", Unit: "ms", Kind: kindFloat, Help: "From a pull's admission on the decode worker until its bytes start to move (≥ 0)."},
		{Path: "disaggregation.transfer.bandwidth_gbps", Label: "Link bandwidth", Unit: "GB/s", Kind: kindFloat, Help: "Out of each prefill worker, shared by its pulls (> 0)."},
		{Path: LeaseModePath, Label: "Hold limit (lease)", Kind: kindSelect,
			Help:    "heartbeat is vLLM ≥ 0.22: the hold lasts while a decode worker holds the request. fixed is vLLM before 0.22: a hold whose pull has not started ttl_ms (480 s there) after the prompt completed is freed and the handoff fails.",
			Options: [][2]string{{sim.LeaseHeartbeat, "heartbeat (vLLM ≥ 0.22)"}, {sim.LeaseFixed, "fixed (vLLM before 0.22: 480 s)"}}},
		{Path: LeaseTTLPath, Label: "Fixed lease", Unit: "ms", Kind: kindFloat, Help: "Only with a fixed lease (> 0); vLLM before 0.22 holds 480000 ms. Empty = 480000."},
		{Path: "disaggregation.load_failure_policy", Label: "Load failure policy", Kind: kindSelect,
			Help:    "What a decode worker does when a handoff fails: fail ends the request (kv_load_failure_policy fail, vLLM's default); recompute prefills the prompt again on the decode worker.",
			Options: [][2]string{{sim.LoadFailureFail, "fail (vLLM's default)"}, {sim.LoadFailureRecompute, "recompute"}}},
		{Path: DrainModePath, Label: "Prefill drain", Kind: kindSelect,
			Help:    "What a draining prefill worker waits for: wait keeps it until every handoff it holds has been read (SGLang frees nothing until its pod restarts, which is this); fixed removes it fixed_ms after the mark, as Dynamo's prefill drain sleeps a fixed 30 s; skip removes it once its own work is done, failing the handoffs it still holds.",
			Options: [][2]string{{sim.DrainWait, "wait (for every handoff; ~ SGLang)"}, {sim.DrainFixed, "fixed (Dynamo: 30 s)"}, {sim.DrainSkip, "skip (fail what it holds)"}}},
		{Path: DrainFixedPath, Label: "Fixed drain", Unit: "ms", Kind: kindFloat, Help: "With a fixed prefill drain: from the mark to the removal (≥ 0); Dynamo sleeps 30000 ms."},
	}}

// poolGroups are the Pools section's fieldsets: the prefill pool, the decode pool, the handoff.
func poolGroups() []fieldGroup {
	return []fieldGroup{
		{Legend: "Prefill pool", Note: "Used only with prefill + decode pools chosen above. Prefill workers have ids 0 … P − 1; each field left empty is the fleet's.", Fields: poolFields(sim.RolePrefill)},
		{Legend: "Decode pool", Note: "Decode workers have ids P … P + D − 1; each field left empty is the fleet's.", Fields: poolFields(sim.RoleDecode)},
		handoffGroup,
	}
}

// poolSingleFields calls fn for the Pools section's fields, in page order.
func poolSingleFields(fn func(fieldSpec)) {
	fn(poolsModeField)
	for _, g := range poolGroups() {
		for _, fs := range g.Fields {
			fn(fs)
		}
	}
	poolAutoscalerFields(fn)
}

// poolDefaults are the texts of the handoff's defaults, from the simulator; a pool's fields
// have none (empty is the fleet's).
func poolDefaults(defaults map[string]string) {
	sc, err := sim.Parse([]byte(`{"disaggregation": {"prefill": {"workers": 1}, "decode": {"workers": 1}}, "workload": {"type": "sessions"}}`), sim.ParseEnv{})
	if err != nil {
		panic("form: the default disaggregation does not parse: " + err.Error())
	}
	tree := scenarioTree(sc)
	for _, fs := range handoffGroup.Fields {
		if v, ok := lookup(tree, fs.Path); ok {
			defaults[fs.Path] = fieldText(fs, v)
		}
	}
	if _, ok := defaults[LeaseTTLPath]; !ok {
		defaults[LeaseTTLPath] = fieldText(handoffGroup.Fields[3], sim.DefaultLeaseTTLMS)
	}
}

// poolsJSON puts the disaggregation object into the scenario when the mode is prefill +
// decode; the fleet's workers and KVCR switch, refused beside pools, are then left out.
func (f *Form) poolsJSON(root map[string]any, put func(fs fieldSpec, name, text string, into map[string]any, key string)) {
	if strings.TrimSpace(f.values[PoolsModePath]) != PoolsPD {
		return
	}
	if fleet, ok := root["fleet"].(map[string]any); ok {
		delete(fleet, "workers")
	}
	if kvcr, ok := root["kvcr"].(map[string]any); ok {
		delete(kvcr, "enabled")
	}
	d := map[string]any{}
	for _, g := range poolGroups() {
		for _, fs := range g.Fields {
			if fs.Path == LeaseTTLPath && strings.TrimSpace(f.values[LeaseModePath]) != sim.LeaseFixed {
				continue // refused with a heartbeat lease; the value stays in the form
			}
			parent, key := mapAt(d, strings.TrimPrefix(fs.Path, "disaggregation."))
			put(fs, fs.Path, f.values[fs.Path], parent, key)
		}
	}
	root["disaggregation"] = d
}

// poolsView is the Pools section of the page.
func (v *formView) poolsView() {
	v.page.PoolsMode = v.field(poolsModeField, PoolsModePath, "", v.form.values[PoolsModePath])
	v.page.PoolsMode.Attrs = templ.Attributes{"data-pools-mode": true}
	for _, g := range poolGroups() {
		v.page.Pools = append(v.page.Pools, v.fieldset(g, ""))
	}
	for _, role := range poolAutoscalerRoles {
		v.page.Pools = append(v.page.Pools, v.fieldset(poolAutoscalerGroup(role), ""))
	}
}

// poolsHoldable reports whether the form's fields hold a scenario's pools: not when a pool's
// timing or host lanes differ from the fleet's, which are edited in the Scenario JSON box (an
// autoscaler per pool is checked by poolAutoscalersHeld).
func poolsHoldable(sc *sim.Scenario) bool {
	d := sc.Disaggregation
	if d == nil {
		return true
	}
	for _, p := range []sim.Pool{d.Prefill, d.Decode} {
		if !reflect.DeepEqual(p.Timing, sc.Fleet.Timing) || p.H2DGBps != sc.Fleet.H2DGBps || p.D2HGBps != sc.Fleet.D2HGBps {
			return false
		}
	}
	return true
}
