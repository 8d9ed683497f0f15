package web

// The scenario form, field by field. Each field's name is its path in the scenario JSON, so an
// error from sim.Parse lands beside the field it names. Defaults mirror SPEC §3.14 "Defaults";
// the form starts filled with them so that what will run is visible.

type fieldKind int

const (
	kindInt fieldKind = iota
	kindFloat
	kindBool
	kindString
	kindSelect
)

type fieldSpec struct {
	Path    string
	Label   string
	Unit    string
	Help    string
	Kind    fieldKind
	Default string
	// Options are the values of a select (kindSelect) with their labels; kindBool fields always
	// offer true and false.
	Options [][2]string
}

type fieldGroup struct {
	Legend string
	Note   string
	Fields []fieldSpec
}

// timingNote is required by SPEC §3.12: the UI says the timing defaults are assumptions.
const timingNote = "The defaults are modelling assumptions (about a 32B FP8 model on one H200-class GPU), not measurements. " +
	"A pass lasts prefill_ms + prefill_ms_per_1k_tokens × P/1000 when it prefills P > 0 tokens, plus decode_ms + decode_ms_per_seq × D when D > 0 requests emit a token, " +
	"plus decode_ms_per_1k_kv_tokens × K/1000 for the K tokens of KV the decoding requests read. Calibrate fits all five to measured forward passes."

var generalGroups = []fieldGroup{
	{Legend: "Scenario", Fields: []fieldSpec{
		{Path: "name", Label: "Name", Kind: kindString, Default: "untitled scenario", Help: "Shown in the runs list and on the run's page."},
		{Path: "seed", Label: "Seed", Kind: kindInt, Default: "42", Help: "Seeds every random choice; the same scenario and seed give the same report."},
		{Path: "report.per_request", Label: "Per-request rows", Kind: kindBool, Default: "false", Help: "Adds one row per request to report.json (large for big workloads)."},
	}},
	{Legend: "Fleet", Note: "Identical workers with ids 0 … workers − 1.", Fields: []fieldSpec{
		{Path: "fleet.workers", Label: "Workers", Unit: "workers", Kind: kindInt, Default: "16", Help: "Fleet size before any scale-in."},
		{Path: "fleet.gpu_blocks", Label: "GPU cache (G1)", Unit: "blocks", Kind: kindInt, Default: "4096", Help: "KV blocks in each worker's GPU memory."},
		{Path: "fleet.host_blocks", Label: "Host cache (G2)", Unit: "blocks", Kind: kindInt, Default: "16384", Help: "KV blocks in host memory; 0 = no host cache (and no KVCR)."},
		{Path: "fleet.block_size", Label: "Block size", Unit: "tokens", Kind: kindInt, Default: "64", Help: "Tokens per KV block; only complete blocks are cached."},
		{Path: "fleet.bytes_per_token", Label: "KV size", Unit: "bytes/token", Kind: kindInt, Default: "131072", Help: "A block is block_size × bytes_per_token bytes."},
		{Path: "fleet.max_num_seqs", Label: "Max running requests", Unit: "requests", Kind: kindInt, Default: "128", Help: "Sequence slots per worker."},
		{Path: "fleet.max_batched_tokens", Label: "Max batched tokens", Unit: "tokens/pass", Kind: kindInt, Default: "8192", Help: "Token budget of one pass; must be ≥ max running requests."},
		{Path: "fleet.h2d_gbps", Label: "Host→GPU lane", Unit: "GB/s", Kind: kindFloat, Default: "32", Help: "Restores from G2; 0 = unlimited (instant)."},
		{Path: "fleet.d2h_gbps", Label: "GPU→host lane", Unit: "GB/s", Kind: kindFloat, Default: "32", Help: "Write-through to G2; 0 = unlimited (instant)."},
	}},
	{Legend: "Timing", Note: timingNote, Fields: []fieldSpec{
		{Path: "fleet.timing.prefill_ms", Label: "Prefill base", Unit: "ms", Kind: kindFloat, Default: "2", Help: "Fixed cost of a pass that prefills."},
		{Path: "fleet.timing.prefill_ms_per_1k_tokens", Label: "Prefill per 1k tokens", Unit: "ms", Kind: kindFloat, Default: "65", Help: "Cost per 1,000 prefilled tokens."},
		{Path: "fleet.timing.decode_ms", Label: "Decode base", Unit: "ms", Kind: kindFloat, Default: "8", Help: "Fixed cost of a pass that emits tokens."},
		{Path: "fleet.timing.decode_ms_per_seq", Label: "Decode per request", Unit: "ms", Kind: kindFloat, Default: "0.05", Help: "Cost per request emitting a token in the pass."},
		{Path: "fleet.timing.decode_ms_per_1k_kv_tokens", Label: "Decode per 1k KV tokens", Unit: "ms per 1k KV tokens", Kind: kindFloat, Default: "0.03", Help: "Cost of reading the KV of the decoding requests: per 1,000 tokens of prompt plus tokens already emitted, summed over the requests that decode in the pass (not those whose prompt completes in it)."},
	}},
	{Legend: "KVCR peer pulls", Note: "A worker pulls a peer's cached KV blocks from the peer's host memory, guided by a router hint.", Fields: []fieldSpec{
		{Path: "kvcr.enabled", Label: "KVCR", Kind: kindBool, Default: "true", Help: "Needs a host cache (host_blocks > 0)."},
		{Path: "kvcr.latency_ms", Label: "Pull latency", Unit: "ms", Kind: kindFloat, Default: "1", Help: "From staging until bytes start to move."},
		{Path: "kvcr.bandwidth_gbps", Label: "Source bandwidth", Unit: "GB/s", Kind: kindFloat, Default: "50", Help: "Shared equally by the pulls out of one source; must be > 0."},
		{Path: "kvcr.reject_draining_sources", Label: "Guard: reject draining sources", Kind: kindBool, Default: "true", Help: "The fix: a new pull never starts from a draining worker."},
	}},
	{Legend: "Router", Fields: []fieldSpec{
		{Path: "router.policy", Label: "Policy", Kind: kindSelect, Default: "kv_aware", Help: "How a request picks its worker.",
			Options: [][2]string{{"kv_aware", "kv_aware (cache-aware cost)"}, {"round_robin", "round_robin"}, {"least_loaded", "least_loaded"}}},
		{Path: "router.hints", Label: "Hints", Kind: kindBool, Default: "true", Help: "Attach a KVCR hint naming the peer with the longest G2 prefix."},
		{Path: "router.prefill_load_scale", Label: "Prefill load scale", Kind: kindFloat, Default: "1", Help: "Weight of pending prefill blocks in the kv_aware cost (≥ 0)."},
		{Path: "router.host_hit_weight", Label: "Host hit weight", Kind: kindFloat, Default: "0.75", Help: "Worth of a G2 block relative to a G1 block in the overlap (≥ 0)."},
	}},
}

// The scale-in schedule: one row per action, named scale_in[i].<field>.
var scheduleFields = []fieldSpec{
	{Path: "at_ms", Label: "At", Unit: "ms", Kind: kindFloat, Help: "When the action drains."},
	{Path: "workers", Label: "Worker ids", Kind: kindString, Help: "Comma-separated, e.g. 14, 15. Or use a count."},
	{Path: "count", Label: "Count", Unit: "workers", Kind: kindInt, Help: "How many to drain, chosen by Select."},
	{Path: "select", Label: "Select", Kind: kindSelect, Help: "Only with a count.",
		Options: [][2]string{{"", "(default: highest_id)"}, {"highest_id", "highest_id"}, {"least_loaded", "least_loaded"}, {"least_cached", "least_cached"}}},
	{Path: "grace_ms", Label: "Grace", Unit: "ms", Kind: kindFloat, Help: "Optional bound on the drain; then forced removal."},
}

// The workload: a type, then one group of fields per type.
var workloadTypeField = fieldSpec{Path: "workload.type", Label: "Workload type", Kind: kindSelect, Default: "sessions",
	Help:    "Only the fields of the chosen type are used.",
	Options: [][2]string{{"sessions", "Synthetic sessions"}, {"trace", "Trace (built-in or uploaded)"}, {"requests", "Scripted requests (JSON)"}}}

// traceSourceField is a select whose values are "name:<built-in>" or "sha256:<hex>"; it stands
// for workload.trace.name and workload.trace.sha256, whose errors land on it.
const traceSourceField = "workload.trace.source"

const defaultScriptedRequests = `[
  {"id": "r0", "at_ms": 0, "blocks": ["P*8"], "output_tokens": 16},
  {"id": "r1", "at_ms": 50, "blocks": ["P*8", "Q"], "output_tokens": 16}
]`

var workloadGroups = []struct {
	Type  string
	Group fieldGroup
}{
	{"sessions", fieldGroup{Legend: "Synthetic sessions", Note: "Seeded multi-turn conversations arriving as a Poisson process; each turn's prompt repeats the earlier turns.", Fields: []fieldSpec{
		{Path: "workload.sessions.count", Label: "Sessions", Unit: "sessions", Kind: kindInt, Default: "100", Help: "How many conversations."},
		{Path: "workload.sessions.rate_per_s", Label: "Arrival rate", Unit: "sessions/s", Kind: kindFloat, Default: "10", Help: "Poisson arrival rate of new sessions."},
		{Path: "workload.sessions.turns", Label: "Turns", Unit: "turns", Kind: kindInt, Default: "3", Help: "Requests per session."},
		{Path: "workload.sessions.system_prompt_tokens", Label: "System prompt", Unit: "tokens", Kind: kindInt, Default: "1024", Help: "Shared by the sessions of one prefix group."},
		{Path: "workload.sessions.prefix_groups", Label: "Prefix groups", Unit: "groups", Kind: kindInt, Default: "4", Help: "Distinct system prompts."},
		{Path: "workload.sessions.new_input_tokens", Label: "New input per turn", Unit: "tokens", Kind: kindInt, Default: "256", Help: "Fresh user input each turn."},
		{Path: "workload.sessions.output_tokens", Label: "Output per turn", Unit: "tokens", Kind: kindInt, Default: "128", Help: "Generated tokens each turn."},
		{Path: "workload.sessions.think_time_ms", Label: "Think time", Unit: "ms", Kind: kindFloat, Default: "5000", Help: "From a turn's completion to the next turn's arrival."},
	}}},
	{"trace", fieldGroup{Legend: "Trace", Note: "A Mooncake-format JSONL trace: the built-in conversation trace or one uploaded on the Traces page.", Fields: []fieldSpec{
		{Path: traceSourceField, Label: "Trace", Kind: kindSelect, Help: "Upload more on the Traces page."},
		{Path: "workload.trace.speedup", Label: "Speedup", Unit: "×", Kind: kindFloat, Default: "1", Help: "Timestamps are divided by it (> 0)."},
		{Path: "workload.trace.limit", Label: "Limit", Unit: "rows", Kind: kindInt, Help: "Use only the first N rows; empty = all."},
		{Path: "workload.trace.offset_ms", Label: "Offset", Unit: "ms", Kind: kindFloat, Default: "0", Help: "Shifts every arrival later."},
		{Path: "workload.trace.trace_block_tokens", Label: "Trace block", Unit: "tokens", Kind: kindInt, Default: "512", Help: "Tokens per hash id; block_size must divide it."},
	}}},
	{"requests", fieldGroup{Legend: "Scripted requests", Note: "Exact what-if cases: a JSON list of {id, at_ms, blocks, tail_tokens, output_tokens, route_to}; \"P*8\" stands for eight blocks P#0 … P#7.", Fields: []fieldSpec{
		{Path: "workload.requests", Label: "Requests (JSON list)", Kind: kindString, Default: defaultScriptedRequests, Help: "Blocks are content labels, one per full block of block_size tokens."},
	}}},
}

// rawJSONField is the "paste the whole scenario" box; when filled it wins over every field.
const rawJSONField = "scenario_json"

// minScheduleRows is how many schedule rows the form shows at least, so that a browser without
// JavaScript can enter a few actions without pressing "add row".
const minScheduleRows = 3
