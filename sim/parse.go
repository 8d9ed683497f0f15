package sim

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"
)

// ParseEnv gives Parse what it may read besides the scenario itself.
type ParseEnv struct {
	// Traces resolves {"sha256": …} traces; nil means no uploaded trace is available.
	Traces TraceSource
	// ReadFile reads a local {"path": …} trace. It is non-nil only on the command line: over
	// HTTP a path would read the server's files.
	ReadFile func(path string) ([]byte, error)
}

// FieldError is one problem with a scenario, located by its JSON path ("fleet.gpu_blocks",
// "workload.requests[3].blocks[0]"); Path is empty for a problem with the document as a whole.
type FieldError struct {
	Path    string `json:"path"`
	Message string `json:"message"`
}

func (e FieldError) String() string {
	if e.Path == "" {
		return e.Message
	}
	return e.Path + ": " + e.Message
}

// ValidationError lists every problem Parse found, in document order.
type ValidationError struct {
	Errors []FieldError
}

// Error prints one "path: message" per line.
func (e *ValidationError) Error() string {
	lines := make([]string, len(e.Errors))
	for i, fe := range e.Errors {
		lines[i] = fe.String()
	}
	return strings.Join(lines, "\n")
}

// Limits that keep one scenario's parse and run bounded. They are generous for planning real
// fleets; anything larger is almost certainly a typo.
const (
	MaxScenarioBytes       = 32 << 20
	MaxWorkers             = 16384
	MaxCacheBlocks         = 10_000_000
	MaxScriptedRequests    = 200_000
	MaxSessionRequests     = 5_000_000
	MaxRequestTokens       = 2_000_000
	MaxScaleInActions      = 1000
	MaxTraceRows           = 2_000_000
	MaxNameChars           = 200
	MaxRequestIDChars      = 200
	MaxBlockLabelRepeat    = 100_000
	maxScriptedBlocksTotal = 20_000_000 // all expanded block labels of a scripted workload
	maxBlockBytes          = 1 << 34    // block_size × bytes_per_token; keeps byte counts in int64
	maxTimeMS              = 1e10       // about 115 days; keeps every instant far inside int64 ns
	maxRateLike            = 1e9        // bandwidths, rates, weights, speedups
	maxTokensPerBlock      = 1 << 20
	maxPerPassTokens       = 100_000_000
)

// DefaultScenarioName is the name of a scenario that does not give one.
const DefaultScenarioName = "untitled scenario"

// Parse decodes a scenario strictly, fills every default (docs/model.md#precise-rules "Defaults") and checks
// every rule of docs/model.md#scale-in and #precise-rules. On bad input it returns a *ValidationError listing all
// problems, each with its path and a message that says how to fix it.
//
// A {"path": …} trace is read through env.ReadFile, parsed, and replaced in the scenario by
// {"sha256": …} of its bytes, so the scenario's id depends on the trace content only.
func Parse(data []byte, env ParseEnv) (*Scenario, error) {
	errs := &fieldErrors{}
	if len(data) > MaxScenarioBytes {
		errs.add("", "the scenario is %d bytes; the limit is %d MiB (use a trace workload for large request sets)", len(data), MaxScenarioBytes>>20)
		return nil, &ValidationError{Errors: errs.list}
	}
	if !utf8.Valid(data) {
		errs.add("", "the scenario is not valid UTF-8 text; save it as UTF-8 JSON")
		return nil, &ValidationError{Errors: errs.list}
	}
	root, err := decodeTree(data, func(path, key string) {
		errs.add(joinPath(path, key), "appears twice in the same object; keep one")
	})
	if err != nil {
		errs.list = append(errs.list, FieldError{Message: err.Error()})
		return nil, &ValidationError{Errors: errs.list}
	}
	if root.kind != kindObject {
		errs.add("", "the scenario must be a JSON object {…}, not %s", root.kind)
		return nil, &ValidationError{Errors: errs.list}
	}
	s := decodeScenario(errs, root)
	// Cross-field rules run even after field errors (a field that failed holds its default), so
	// one round trip shows every problem.
	validateScenario(errs, s)
	if len(errs.list) == 0 && s.Workload.Type == WorkloadTrace {
		resolveTrace(errs, s, env)
	}
	if len(errs.list) > 0 {
		return nil, &ValidationError{Errors: errs.list}
	}
	return s, nil
}

// decodeScenario reads the tree against the schema, filling defaults. Range checks on single
// fields happen here; rules that relate several fields are in validateScenario.
func decodeScenario(errs *fieldErrors, root *jsonNode) *Scenario {
	top := openObject(errs, "", root)
	s := &Scenario{}

	s.Name = strings.TrimSpace(top.str("name", ""))
	if s.Name == "" {
		s.Name = DefaultScenarioName
	}
	if msg := NameProblem(s.Name); msg != "" {
		errs.add("name", "%s", msg)
	}
	s.Seed = top.integer("seed", 42, intRange{-1 << 63, 1<<63 - 1})
	s.Fleet = decodeFleet(errs, top.get("fleet"))
	s.KVCR = decodeKVCR(errs, top.get("kvcr"))
	s.Router = decodeRouter(errs, top.get("router"))
	s.ScaleIn = decodeScaleIn(errs, top.get("scale_in"))
	if n := top.get("autoscaler"); n != nil && n.kind != kindNull {
		s.Autoscaler = decodeAutoscaler(errs, n, s.Fleet.Workers)
	}
	if !top.has("workload") {
		errs.add("workload", `required: {"type": "requests", "requests": […]}, {"type": "sessions", "sessions": {…}} or {"type": "trace", "trace": {…}}`)
	} else {
		s.Workload = decodeWorkload(errs, top.get("workload"))
	}
	rep := openObject(errs, "report", top.get("report"))
	s.Report.PerRequest = rep.boolean("per_request", false)
	rep.finish()
	s.SLO = decodeSLO(errs, top.get("slo"))
	top.finish()
	return s
}

func decodeFleet(errs *fieldErrors, n *jsonNode) Fleet {
	v := openObject(errs, "fleet", n)
	f := Fleet{
		Workers:          int(v.integer("workers", 16, intRange{1, MaxWorkers})),
		GPUBlocks:        int(v.integer("gpu_blocks", 4096, intRange{1, MaxCacheBlocks})),
		HostBlocks:       int(v.integer("host_blocks", 16384, intRange{0, MaxCacheBlocks})),
		BlockSize:        int(v.integer("block_size", 64, intRange{1, maxTokensPerBlock})),
		BytesPerToken:    v.integer("bytes_per_token", 131072, intRange{1, maxBlockBytes}),
		MaxNumSeqs:       int(v.integer("max_num_seqs", 128, intRange{1, maxPerPassTokens})),
		MaxBatchedTokens: int(v.integer("max_batched_tokens", 8192, intRange{1, maxPerPassTokens})),
		GPUsPerWorker:    int(v.integer("gpus_per_worker", 1, intRange{1, maxGPUsPerWorker})),
		H2DGBps:          v.number("h2d_gbps", 32, floatRange{max: maxRateLike}),
		D2HGBps:          v.number("d2h_gbps", 32, floatRange{max: maxRateLike}),
	}
	checkMinRate(errs, "fleet.h2d_gbps", f.H2DGBps, "0 (instant) or ")
	checkMinRate(errs, "fleet.d2h_gbps", f.D2HGBps, "0 (instant) or ")
	t := openObject(errs, "fleet.timing", v.get("timing"))
	f.Timing = Timing{
		PrefillMS:             t.number("prefill_ms", 2, floatRange{max: maxTimeMS}),
		PrefillMSPer1kTokens:  t.number("prefill_ms_per_1k_tokens", 65, floatRange{max: maxTimeMS}),
		DecodeMS:              t.number("decode_ms", 8, floatRange{max: maxTimeMS}),
		DecodeMSPerSeq:        t.number("decode_ms_per_seq", 0.05, floatRange{max: maxTimeMS}),
		DecodeMSPer1kKVTokens: t.number("decode_ms_per_1k_kv_tokens", 0.03, floatRange{max: maxTimeMS}),
	}
	t.finish()
	v.finish()
	return f
}

func decodeKVCR(errs *fieldErrors, n *jsonNode) KVCR {
	v := openObject(errs, "kvcr", n)
	k := KVCR{
		Enabled:               v.boolean("enabled", true),
		LatencyMS:             v.number("latency_ms", 1.0, floatRange{max: maxTimeMS}),
		BandwidthGBps:         v.number("bandwidth_gbps", 50.0, floatRange{minExclusive: true, max: maxRateLike}),
		RejectDrainingSources: v.boolean("reject_draining_sources", true),
	}
	checkMinRate(errs, "kvcr.bandwidth_gbps", k.BandwidthGBps, "")
	v.finish()
	return k
}

func decodeRouter(errs *fieldErrors, n *jsonNode) Router {
	v := openObject(errs, "router", n)
	r := Router{
		Policy:           v.choice("policy", PolicyKVAware, PolicyKVAware, PolicyRoundRobin, PolicyLeastLoaded),
		Hints:            v.boolean("hints", true),
		PrefillLoadScale: v.number("prefill_load_scale", 1.0, floatRange{max: maxRateLike}),
		HostHitWeight:    v.number("host_hit_weight", 0.75, floatRange{max: maxRateLike}),
		MigrationLimit:   int(v.integer("migration_limit", 0, intRange{0, maxMigrationLimit})),
	}
	v.finish()
	return r
}

func decodeScaleIn(errs *fieldErrors, n *jsonNode) []ScaleInAction {
	actions := []ScaleInAction{}
	if n == nil {
		return actions
	}
	if n.kind != kindArray {
		errs.add("scale_in", `must be a list of actions like {"at_ms": 600000, "count": 4}, not %s`, n.kind)
		return actions
	}
	if len(n.elems) > MaxScaleInActions {
		errs.add("scale_in", "must have at most %d actions (got %d)", MaxScaleInActions, len(n.elems))
		return actions
	}
	for i, e := range n.elems {
		path := indexPath("scale_in", i)
		v := openObject(errs, path, e)
		a := ScaleInAction{
			AtMS:    v.number("at_ms", 0, floatRange{max: maxTimeMS}),
			GraceMS: v.optionalNumber("grace_ms", floatRange{max: maxTimeMS}),
		}
		if e != nil && e.kind == kindObject && !v.has("at_ms") {
			errs.add(joinPath(path, "at_ms"), "required: the instant (ms) at which the action marks workers draining")
		}
		hasWorkers, hasCount := v.has("workers"), v.has("count")
		switch {
		case hasWorkers && hasCount:
			errs.add(path, `give either "workers" (a list of ids) or "count" (how many to choose), not both`)
		case !hasWorkers && !hasCount && v.node != nil:
			errs.add(path, `needs "workers" (a list of worker ids) or "count" (how many workers to choose)`)
		}
		if hasWorkers {
			a.Workers = decodeIDList(errs, joinPath(path, "workers"), v.get("workers"))
		}
		if hasCount {
			a.Count = int(v.integer("count", 0, intRange{1, MaxWorkers}))
			a.Select = v.choice("select", SelectHighestID, SelectHighestID, SelectLeastLoaded, SelectLeastCached)
		} else if v.has("select") {
			errs.add(joinPath(path, "select"), `only applies with "count"; remove it or replace "workers" by "count"`)
		}
		v.finish()
		actions = append(actions, a)
	}
	return actions
}

func decodeIDList(errs *fieldErrors, path string, n *jsonNode) []int {
	if n.kind != kindArray {
		errs.add(path, "must be a list of worker ids like [12, 13], not %s%s", n.kind, gotSuffix(n))
		return nil
	}
	if len(n.elems) == 0 {
		errs.add(path, `must name at least one worker id (or use "count")`)
		return nil
	}
	if len(n.elems) > MaxWorkers {
		errs.add(path, "names %d workers; a fleet has at most %d", len(n.elems), MaxWorkers)
		return nil
	}
	ids := make([]int, 0, len(n.elems))
	for i, e := range n.elems {
		id, ok := asInteger(errs, fieldPath{base: indexPath(path, i)}, e, 0)
		if !ok {
			continue
		}
		if id < 0 || id >= MaxWorkers {
			errs.add(indexPath(path, i), "must be a worker id between 0 and workers − 1 (got %d)", id)
			continue
		}
		ids = append(ids, int(id))
	}
	return ids
}

func decodeWorkload(errs *fieldErrors, n *jsonNode) Workload {
	v := openObject(errs, "workload", n)
	var w Workload
	members := []string{WorkloadRequests, WorkloadSessions, WorkloadTrace}
	present := []string{}
	for _, m := range members {
		if v.has(m) {
			present = append(present, m)
		}
	}
	if v.has("type") {
		w.Type = v.choice("type", "", members...)
	} else if v.node != nil {
		errs.add("workload.type", `required: one of "requests", "sessions", "trace"`)
	}
	for _, m := range present {
		if w.Type != "" && m != w.Type {
			errs.add(joinPath("workload", m), "only allowed with type %q (the type is %q); remove it", m, w.Type)
		}
	}
	switch w.Type {
	case WorkloadRequests:
		if !v.has(WorkloadRequests) {
			errs.add("workload.requests", `required with type "requests": a list like [{"id": "r1", "at_ms": 0, "blocks": ["P*8"], "output_tokens": 16}]`)
		} else {
			w.Requests = decodeRequests(errs, v.get(WorkloadRequests))
		}
	case WorkloadSessions:
		w.Sessions = decodeSessions(errs, v.get(WorkloadSessions))
	case WorkloadTrace:
		if !v.has(WorkloadTrace) {
			errs.add("workload.trace", `required with type "trace": {"name": "mooncake-conversation"} or {"sha256": "…"}`)
		} else {
			w.Trace = decodeTraceSpec(errs, v.get(WorkloadTrace))
		}
	}
	v.finish()
	return w
}

func decodeRequests(errs *fieldErrors, n *jsonNode) []ScriptedRequest {
	const path = "workload.requests"
	if n.kind != kindArray {
		errs.add(path, "must be a list of requests, not %s", n.kind)
		return nil
	}
	if len(n.elems) == 0 {
		errs.add(path, `must list at least one request, like {"id": "r1", "at_ms": 0, "blocks": ["P*8"], "output_tokens": 16}`)
		return nil
	}
	if len(n.elems) > MaxScriptedRequests {
		errs.add(path, "has %d requests; the limit is %d (use a trace or sessions workload for more)", len(n.elems), MaxScriptedRequests)
		return nil
	}
	reqs := make([]ScriptedRequest, 0, len(n.elems))
	for i, e := range n.elems {
		p := indexPath(path, i)
		v := openObject(errs, p, e)
		r := ScriptedRequest{
			ID:           v.str("id", ""),
			AtMS:         v.number("at_ms", 0, floatRange{max: maxTimeMS}),
			TailTokens:   int(v.integer("tail_tokens", 0, intRange{0, MaxRequestTokens})),
			OutputTokens: int(v.integer("output_tokens", 0, intRange{1, MaxRequestTokens})),
		}
		if v.node != nil {
			if !v.has("id") {
				errs.add(joinPath(p, "id"), `required: a unique name such as "r1"`)
			}
			if !v.has("at_ms") {
				errs.add(joinPath(p, "at_ms"), "required: the arrival instant in ms")
			}
			if !v.has("output_tokens") {
				errs.add(joinPath(p, "output_tokens"), "required: how many tokens the request generates (≥ 1)")
			}
		}
		if v.has("id") && r.ID == "" && v.get("id").kind == kindString {
			errs.add(joinPath(p, "id"), "must not be empty")
		}
		if c := utf8.RuneCountInString(r.ID); c > MaxRequestIDChars {
			errs.add(joinPath(p, "id"), "must be at most %d characters (got %d)", MaxRequestIDChars, c)
		}
		if b := v.get("blocks"); b == nil {
			r.Blocks = []string{}
		} else {
			r.Blocks = decodeBlockLabels(errs, joinPath(p, "blocks"), b)
		}
		if rt := v.optionalInteger("route_to", intRange{0, MaxWorkers - 1}); rt != nil {
			id := int(*rt)
			r.RouteTo = &id
		}
		v.finish()
		reqs = append(reqs, r)
	}
	return reqs
}

func decodeBlockLabels(errs *fieldErrors, path string, n *jsonNode) []string {
	if n.kind != kindArray {
		errs.add(path, `must be a list of block labels like ["P*8", "Q"], not %s`, n.kind)
		return []string{}
	}
	labels := make([]string, 0, len(n.elems))
	for i, e := range n.elems {
		if e.kind != kindString {
			errs.add(indexPath(path, i), "must be a string block label, not %s%s", e.kind, gotSuffix(e))
			continue
		}
		if _, _, err := splitBlockLabel(e.text); err != nil {
			errs.add(indexPath(path, i), "%v", err)
		}
		// A bad label is kept (counted as one block) so the prompt-size rules do not report
		// a second, misleading problem for the same request.
		labels = append(labels, e.text)
	}
	return labels
}

func decodeSessions(errs *fieldErrors, n *jsonNode) *Sessions {
	v := openObject(errs, "workload.sessions", n)
	s := &Sessions{
		Count:              int(v.integer("count", 100, intRange{1, MaxSessionRequests})),
		RatePerS:           v.number("rate_per_s", 10, floatRange{minExclusive: true, max: maxRateLike}),
		Turns:              int(v.integer("turns", 3, intRange{1, MaxSessionRequests})),
		SystemPromptTokens: int(v.integer("system_prompt_tokens", 1024, intRange{0, MaxRequestTokens})),
		PrefixGroups:       int(v.integer("prefix_groups", 4, intRange{1, MaxSessionRequests})),
		NewInputTokens:     int(v.integer("new_input_tokens", 256, intRange{0, MaxRequestTokens})),
		OutputTokens:       int(v.integer("output_tokens", 128, intRange{1, MaxRequestTokens})),
		ThinkTimeMS:        v.number("think_time_ms", 5000, floatRange{max: maxTimeMS}),
	}
	if n := v.get("rate_stages"); n != nil {
		s.RateStages = decodeRateStages(errs, "workload.sessions.rate_stages", n)
	}
	if at := strings.TrimSpace(v.str("starts_at", "")); at != "" {
		if t, err := time.Parse(time.RFC3339, at); err != nil {
			errs.add("workload.sessions.starts_at", "must be an instant in RFC 3339, like \"2026-12-03T00:00:00Z\" (what time 0 stands for; leave it out for times from the start) (got %q)", at)
		} else {
			s.StartsAt = t.Format(time.RFC3339)
		}
	}
	v.finish()
	return s
}

func decodeTraceSpec(errs *fieldErrors, n *jsonNode) *TraceSpec {
	v := openObject(errs, "workload.trace", n)
	t := &TraceSpec{
		Name:             v.str("name", ""),
		SHA256:           v.str("sha256", ""),
		Path:             v.str("path", ""),
		TraceBlockTokens: int(v.integer("trace_block_tokens", 512, intRange{1, maxTokensPerBlock})),
		Speedup:          v.number("speedup", 1, floatRange{minExclusive: true, max: maxRateLike}),
		OffsetMS:         v.number("offset_ms", 0, floatRange{max: maxTimeMS}),
	}
	if l := v.optionalInteger("limit", intRange{1, 1 << 40}); l != nil {
		t.Limit = int(*l)
	}
	given := 0
	for _, k := range []string{"name", "sha256", "path"} {
		if v.has(k) {
			given++
		}
	}
	if v.node != nil && given != 1 {
		errs.add("workload.trace", `give exactly one of "name" (a built-in trace: %s), "sha256" (an uploaded trace) or "path" (command line only)`, strings.Join(BuiltinTraces(), ", "))
	}
	if v.has("sha256") {
		t.SHA256 = strings.ToLower(t.SHA256)
		if b, err := hex.DecodeString(t.SHA256); err != nil || len(b) != sha256.Size {
			errs.add("workload.trace.sha256", "must be 64 hexadecimal characters (the SHA-256 shown after an upload)")
		}
	}
	if v.has("name") && !isBuiltinTrace(t.Name) {
		errs.add("workload.trace.name", "must be a built-in trace: %s (got %q); for your own trace upload it and use its sha256", strings.Join(BuiltinTraces(), ", "), t.Name)
	}
	if v.has("path") && t.Path == "" {
		errs.add("workload.trace.path", "must not be empty")
	}
	v.finish()
	return t
}

// splitBlockLabel checks one block label; "X*N" stands for N labels X#0 … X#(N-1).
func splitBlockLabel(label string) (base string, count int, err error) {
	if label == "" {
		return "", 0, fmt.Errorf("must be a non-empty block label")
	}
	i := strings.LastIndexByte(label, '*')
	if i < 0 {
		return label, 1, nil
	}
	base, num := label[:i], label[i+1:]
	if base == "" {
		return "", 0, fmt.Errorf("%q: a repeated label needs a name before '*', like \"P*8\"", label)
	}
	n := 0
	for _, c := range num {
		if c < '0' || c > '9' || n > MaxBlockLabelRepeat {
			return "", 0, fmt.Errorf("%q: the count after '*' must be an integer from 1 to %d", label, MaxBlockLabelRepeat)
		}
		n = n*10 + int(c-'0')
	}
	if num == "" || n < 1 || n > MaxBlockLabelRepeat {
		return "", 0, fmt.Errorf("%q: the count after '*' must be an integer from 1 to %d", label, MaxBlockLabelRepeat)
	}
	return base, n, nil
}

// ExpandBlockLabels turns a scripted request's labels into one label per block: "P*3" becomes
// "P#0", "P#1", "P#2". Labels are assumed valid (Parse checked them); an invalid one is kept
// as it is.
func ExpandBlockLabels(labels []string) []string {
	out := make([]string, 0, len(labels))
	for _, l := range labels {
		base, n, err := splitBlockLabel(l)
		if err != nil || !strings.Contains(l, "*") {
			out = append(out, l)
			continue
		}
		for j := range n {
			out = append(out, fmt.Sprintf("%s#%d", base, j))
		}
	}
	return out
}

// labelBlockCount is the number of blocks the labels stand for.
func labelBlockCount(labels []string) int64 {
	var total int64
	for _, l := range labels {
		if _, n, err := splitBlockLabel(l); err == nil {
			total += int64(n)
		} else {
			total++
		}
	}
	return total
}
