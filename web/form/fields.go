package form

import "github.com/scalein-planner/scalein/sim"

// The scenario form, field by field. Each field's name is its path in the scenario JSON, so an
// error from sim.Parse lands beside the field it names, and the path is all the reading,
// building, prefilling and error placing need to know about a field: adding a field is adding a
// row here. Defaults are not written here: they come from the simulator (form_defaults.go).

// fieldKind says how a field's text becomes a JSON value and which control shows it.
type fieldKind int

const (
	kindInt    fieldKind = iota // a whole number; a text input
	kindFloat                   // a number; a text input
	kindBool                    // true or false; a select of on and off
	kindString                  // text as it is; a text input
	kindSelect                  // one of Options; a select
	// kindIDList is worker ids separated by commas ("14, 15"), sent as a JSON list.
	kindIDList
	// kindJSON is a JSON value typed in a textarea and passed to sim.Parse untouched, so its
	// problems are reported by their paths inside it.
	kindJSON
	// kindTraceSource is the trace select: "name:<built-in>" or "sha256:<hex>", sent as
	// workload.trace.name or workload.trace.sha256. Its options are the traces on offer.
	kindTraceSource
	// kindNullableInt and kindNullableFloat are numbers that may be "none" (JSON null: no limit,
	// no grace); empty is the default.
	kindNullableInt
	kindNullableFloat
	// kindStages is the sessions' rate stages, one "duration_ms, rate_per_s" a line.
	kindStages
)

type fieldSpec struct {
	Path  string
	Label string
	Unit  string
	Help  string
	Kind  fieldKind
	// Start is what a fresh form shows in a field the simulator has no default for (the example
	// scripted requests, the trace chosen first). Every other field starts at the simulator's
	// default; TestFormStartsOnlyWhereTheSimulatorHasNoDefault keeps it so.
	Start string
	// Options are the values of a select (kindSelect) with their labels; kindBool fields always
	// offer true and false.
	Options [][2]string
}

type fieldGroup struct {
	Legend string
	Note   string
	Fields []fieldSpec
}

// timingNote is required by docs/model.md#scenario: the UI says the timing defaults are assumptions.
const timingNote = "The defaults are modelling assumptions (about a 32B FP8 model on one H200-class GPU), not measurements. " +
	"A pass lasts prefill_ms + prefill_ms_per_1k_tokens × P/1000 when it prefills P > 0 tokens, plus decode_ms + decode_ms_per_seq × D when D > 0 requests emit a token, " +
	"plus decode_ms_per_1k_kv_tokens × K/1000 for the K tokens of KV the decoding requests read. Calibrate fits all five to measured forward passes."

var generalGroups = []fieldGroup{
	{Legend: "Scenario", Fields: []fieldSpec{
		{Path: "name", Label: "Name", Kind: kindString, Help: "Shown in the runs list and on the run's page."},
		{Path: "seed", Label: "Seed", Kind: kindInt, Help: "Seeds every random choice; the same scenario and seed give the same report."},
		{Path: "report.per_request", Label: "Per-request rows", Kind: kindBool, Help: "Adds one row per request to report.json (large for big workloads)."},
	}},
	{Legend: "Fleet", Note: "Identical workers with ids 0 … workers − 1.", Fields: []fieldSpec{
		{Path: "fleet.workers", Label: "Workers", Unit: "workers", Kind: kindInt, Help: "Fleet size before any scale-in."},
		{Path: "fleet.gpu_blocks", Label: "GPU cache (G1)", Unit: "blocks", Kind: kindInt, Help: "KV blocks in each worker's GPU memory."},
		{Path: "fleet.host_blocks", Label: "Host cache (G2)", Unit: "blocks", Kind: kindInt, Help: "KV blocks in host memory; 0 = no host cache (and no KVCR)."},
		{Path: "fleet.block_size", Label: "Block size", Unit: "tokens", Kind: kindInt, Help: "Tokens per KV block; only complete blocks are cached."},
		{Path: "fleet.bytes_per_token", Label: "KV size", Unit: "bytes/token", Kind: kindInt, Help: "A block is block_size × bytes_per_token bytes."},
		{Path: "fleet.max_num_seqs", Label: "Max running requests", Unit: "requests", Kind: kindInt, Help: "Sequence slots per worker."},
		{Path: "fleet.max_batched_tokens", Label: "Max batched tokens", Unit: "tokens/pass", Kind: kindInt, Help: "Token budget of one pass; must be ≥ max running requests."},
		{Path: "fleet.h2d_gbps", Label: "Host→GPU lane", Unit: "GB/s", Kind: kindFloat, Help: "Restores from G2; 0 = unlimited (instant)."},
		{Path: "fleet.d2h_gbps", Label: "GPU→host lane", Unit: "GB/s", Kind: kindFloat, Help: "Write-through to G2; 0 = unlimited (instant)."},
		gpusPerWorkerField,
	}},
	{Legend: "Timing", Note: timingNote, Fields: []fieldSpec{
		{Path: "fleet.timing.prefill_ms", Label: "Prefill base", Unit: "ms", Kind: kindFloat, Help: "Fixed cost of a pass that prefills."},
		{Path: "fleet.timing.prefill_ms_per_1k_tokens", Label: "Prefill per 1k tokens", Unit: "ms", Kind: kindFloat, Help: "Cost per 1,000 prefilled tokens."},
		{Path: "fleet.timing.decode_ms", Label: "Decode base", Unit: "ms", Kind: kindFloat, Help: "Fixed cost of a pass that emits tokens."},
		{Path: "fleet.timing.decode_ms_per_seq", Label: "Decode per request", Unit: "ms", Kind: kindFloat, Help: "Cost per request emitting a token in the pass."},
		{Path: "fleet.timing.decode_ms_per_1k_kv_tokens", Label: "Decode per 1k KV tokens", Unit: "ms per 1k KV tokens", Kind: kindFloat, Help: "Cost of reading the KV of the decoding requests: per 1,000 tokens of prompt plus tokens already emitted, summed over the requests that decode in the pass (not those whose prompt completes in it)."},
	}},
	{Legend: "KVCR peer pulls", Note: "A worker pulls a peer's cached KV blocks from the peer's host memory, guided by a router hint.", Fields: []fieldSpec{
		{Path: "kvcr.enabled", Label: "KVCR", Kind: kindBool, Help: "Needs a host cache (host_blocks > 0)."},
		{Path: "kvcr.latency_ms", Label: "Pull latency", Unit: "ms", Kind: kindFloat, Help: "From staging until bytes start to move."},
		{Path: "kvcr.bandwidth_gbps", Label: "Source bandwidth", Unit: "GB/s", Kind: kindFloat, Help: "Shared equally by the pulls out of one source; must be > 0."},
		{Path: "kvcr.reject_draining_sources", Label: "Guard: reject draining sources", Kind: kindBool, Help: "The fix: a new pull never starts from a draining worker."},
	}},
	{Legend: "Router", Fields: []fieldSpec{
		{Path: "router.policy", Label: "Policy", Kind: kindSelect,
			Help: "How a request picks its worker among the active ones: kv_aware takes the lowest cost (prefill still to do after its cached prefix, plus blocks in use); round_robin takes them in turn; least_loaded takes the one with the fewest requests. Ties go to the lowest id.",
			Options: [][2]string{
				{sim.PolicyKVAware, "kv_aware (cache-aware cost)"},
				{sim.PolicyRoundRobin, "round_robin (in turn)"},
				{sim.PolicyLeastLoaded, "least_loaded (fewest requests)"},
			}},
		{Path: "router.hints", Label: "Hints", Kind: kindBool, Help: "Attach a KVCR hint naming the peer with the longest G2 prefix."},
		{Path: "router.prefill_load_scale", Label: "Prefill load scale", Kind: kindFloat, Help: "Weight of pending prefill blocks in the kv_aware cost (≥ 0)."},
		{Path: "router.host_hit_weight", Label: "Host hit weight", Kind: kindFloat, Help: "Worth of a G2 block relative to a G1 block in the overlap (≥ 0)."},
		migrationLimitField,
	}},
	sloGroup,
}

// selectionNote explains the selection policies of a counted scale-in action (docs/model.md#scale-in); the
// schedule shows it once, not in every row.
const selectionNote = "With a count, Select chooses which active workers drain: " +
	"highest_id (the default) takes the highest ids, as an autoscaler shrinking a replica set does; " +
	"least_loaded takes the workers with the fewest requests on them (waiting, loading, pulling or running), so the least work has to finish; " +
	"least_cached takes the workers with the fewest cached blocks (G1 blocks with a key plus resident G2 entries), so the least cache is lost. " +
	"Ties go to the highest id."

// The scale-in schedule: one row per action, named scale_in[i].<field>.
var scheduleFields = []fieldSpec{
	{Path: "at_ms", Label: "At", Unit: "ms", Kind: kindFloat, Help: "When the action drains."},
	{Path: "workers", Label: "Worker ids", Kind: kindIDList, Help: "Comma-separated, e.g. 14, 15. Or use a count."},
	{Path: "count", Label: "Count", Unit: "workers", Kind: kindInt, Help: "How many to drain, chosen by Select."},
	{Path: "select", Label: "Select", Kind: kindSelect, Help: "Only with a count; by default " + sim.SelectHighestID + ". See the policies above.",
		Options: [][2]string{
			{"", "(default)"},
			{sim.SelectHighestID, sim.SelectHighestID},
			{sim.SelectLeastLoaded, sim.SelectLeastLoaded},
			{sim.SelectLeastCached, sim.SelectLeastCached},
		}},
	{Path: "grace_ms", Label: "Grace", Unit: "ms", Kind: kindFloat, Help: "Optional bound on the drain; then forced removal."},
	{Path: "role", Label: "Pool", Kind: kindSelect, Help: "With prefill and decode pools, a count drains from this pool (required there); empty without pools.",
		Options: [][2]string{{"", "(no pools)"}, {sim.RolePrefill, sim.RolePrefill}, {sim.RoleDecode, sim.RoleDecode}}},
}

// The workload: a type, then one group of fields per type.
var workloadTypeField = fieldSpec{Path: WorkloadTypePath, Label: "Workload type", Kind: kindSelect, Start: sim.WorkloadSessions,
	Help: "Only the fields of the chosen type are used.",
	Options: [][2]string{
		{sim.WorkloadSessions, "Synthetic sessions"},
		{sim.WorkloadTrace, "Trace (built-in or uploaded)"},
		{sim.WorkloadRequests, "Scripted requests (JSON)"},
	}}

// TraceSourceField stands for workload.trace.name and workload.trace.sha256, whose errors land
// on it.
const TraceSourceField = "workload.trace.source"

const exampleScriptedRequests = `[
  {"id": "r0", "at_ms": 0, "blocks": ["P*8"], "output_tokens": 16},
  {"id": "r1", "at_ms": 50, "blocks": ["P*8", "Q"], "output_tokens": 16}
]`

type workloadGroup struct {
	Type  string
	Group fieldGroup
}

var workloadGroups = []workloadGroup{
	{sim.WorkloadSessions, fieldGroup{Legend: "Synthetic sessions", Note: "Seeded multi-turn conversations arriving as a Poisson process; each turn's prompt repeats the earlier turns.", Fields: []fieldSpec{
		{Path: "workload.sessions.count", Label: "Sessions", Unit: "sessions", Kind: kindInt, Help: "How many conversations."},
		{Path: "workload.sessions.rate_per_s", Label: "Arrival rate", Unit: "sessions/s", Kind: kindFloat, Help: "Poisson arrival rate of new sessions."},
		{Path: "workload.sessions.turns", Label: "Turns", Unit: "turns", Kind: kindInt, Help: "Requests per session."},
		{Path: "workload.sessions.system_prompt_tokens", Label: "System prompt", Unit: "tokens", Kind: kindInt, Help: "Shared by the sessions of one prefix group."},
		{Path: "workload.sessions.prefix_groups", Label: "Prefix groups", Unit: "groups", Kind: kindInt, Help: "Distinct system prompts."},
		{Path: "workload.sessions.new_input_tokens", Label: "New input per turn", Unit: "tokens", Kind: kindInt, Help: "Fresh user input each turn."},
		{Path: "workload.sessions.output_tokens", Label: "Output per turn", Unit: "tokens", Kind: kindInt, Help: "Generated tokens each turn."},
		{Path: "workload.sessions.think_time_ms", Label: "Think time", Unit: "ms", Kind: kindFloat, Help: "From a turn's completion to the next turn's arrival."},
		rateStagesField,
		{Path: StartsAtPath, Label: "Starts at", Kind: kindString, Help: "The clock time time 0 stands for (RFC 3339, like 2026-12-03T00:00:00Z; a Prometheus load sets it): the run page then reads times as clock times. Changes no simulated figure; empty: times from the start."},
	}}},
	{sim.WorkloadTrace, fieldGroup{Legend: "Trace", Note: "A Mooncake-format JSONL trace: the built-in conversation trace or one uploaded on the Traces page.", Fields: []fieldSpec{
		{Path: TraceSourceField, Label: "Trace", Kind: kindTraceSource, Start: "name:" + sim.BuiltinMooncakeConversation, Help: "Upload more on the Traces page."},
		{Path: "workload.trace.speedup", Label: "Speedup", Unit: "×", Kind: kindFloat, Help: "Timestamps are divided by it (> 0)."},
		{Path: "workload.trace.limit", Label: "Limit", Unit: "rows", Kind: kindInt, Help: "Use only the first N rows; empty = all."},
		{Path: "workload.trace.offset_ms", Label: "Offset", Unit: "ms", Kind: kindFloat, Help: "Shifts every arrival later."},
		{Path: "workload.trace.trace_block_tokens", Label: "Trace block", Unit: "tokens", Kind: kindInt, Help: "Tokens per hash id; block_size must divide it."},
	}}},
	{sim.WorkloadRequests, fieldGroup{Legend: "Scripted requests", Note: "Exact what-if cases: a JSON list of {id, at_ms, blocks, tail_tokens, output_tokens, route_to}; \"P*8\" stands for eight blocks P#0 … P#7.", Fields: []fieldSpec{
		{Path: "workload.requests", Label: "Requests (JSON list)", Kind: kindJSON, Start: exampleScriptedRequests, Help: "Blocks are content labels, one per full block of block_size tokens."},
	}}},
}

// workloadFields are the fields of one workload type; ok is false for an unknown type.
func workloadFields(wtype string) (fields []fieldSpec, ok bool) {
	for _, w := range workloadGroups {
		if w.Type == wtype {
			return w.Group.Fields, true
		}
	}
	return nil, false
}

// singleFields calls fn for every field that is not part of a schedule row, in page order.
func singleFields(fn func(fieldSpec)) {
	for _, g := range generalGroups {
		for _, fs := range g.Fields {
			fn(fs)
		}
	}
	poolSingleFields(fn)
	model3Fields(fn)
	fn(workloadTypeField)
	for _, w := range workloadGroups {
		for _, fs := range w.Group.Fields {
			fn(fs)
		}
	}
}

// RawJSONField is the "paste the whole scenario" box; when filled it wins over every field.
const RawJSONField = "scenario_json"

// minScheduleRows is how many schedule rows a fresh form shows: one empty row to fill in; "Add
// row" (with or without JavaScript) gives more.
const minScheduleRows = 1

// LabelOf is the form's label of a scenario field ("Target" for autoscaler.target), so that
// messages name what the user sees; a path the form has no field for is returned as is, and
// the behavior (edited in its own fieldset) is named by that fieldset.
func LabelOf(path string) string {
	if path == "autoscaler.behavior" {
		return "Behavior"
	}
	label := ""
	singleFields(func(fs fieldSpec) {
		if label == "" && fs.Path == path {
			label = fs.Label
		}
	})
	if label == "" {
		return path
	}
	return label
}

// StartsAtPath is the clock time a sessions workload's time 0 stands for (a Prometheus load's
// first sample): informative, the run page reads its times as clock times.
const StartsAtPath = "workload.sessions.starts_at"
