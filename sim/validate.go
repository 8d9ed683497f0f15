package sim

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
)

// validateScenario checks the rules that relate several fields (docs/model.md#scale-in, #precise-rules). Every value
// here is in its own range: a field that failed to decode holds its default.
func validateScenario(errs *fieldErrors, s *Scenario) {
	f := s.Fleet
	if f.MaxBatchedTokens < f.MaxNumSeqs {
		errs.add("fleet.max_batched_tokens", "must be ≥ fleet.max_num_seqs (%d) so every running request can decode in each pass (got %d)", f.MaxNumSeqs, f.MaxBatchedTokens)
	}
	if bb := int64(f.BlockSize) * f.BytesPerToken; bb > maxBlockBytes {
		errs.add("fleet.bytes_per_token", "block_size × bytes_per_token is %d bytes per block; the limit is %d", bb, int64(maxBlockBytes))
	}
	if s.KVCR.Enabled && f.HostBlocks == 0 && s.Disaggregation == nil {
		errs.add("kvcr.enabled", "KVCR pulls need a host cache: set fleet.host_blocks ≥ 1, or set kvcr.enabled to false")
	}
	validateScaleIn(errs, s)
	validateAutoscaler(errs, s)
	switch s.Workload.Type {
	case WorkloadRequests:
		validateRequests(errs, s)
	case WorkloadSessions:
		if s.Workload.Sessions != nil {
			validateSessions(errs, s)
		}
	case WorkloadTrace:
		t := s.Workload.Trace
		if t != nil && t.TraceBlockTokens%f.BlockSize != 0 {
			errs.add("workload.trace.trace_block_tokens", "must be a multiple of fleet.block_size (%d) so each engine block lies inside one trace block (got %d)", f.BlockSize, t.TraceBlockTokens)
		}
	}
}

func validateScaleIn(errs *fieldErrors, s *Scenario) {
	if s.Disaggregation != nil {
		validateScaleInPD(errs, s)
		return
	}
	workers := s.Fleet.Workers
	namedAt := map[int]string{} // worker id → path of the first action naming it
	drained := 0
	for i, a := range s.ScaleIn {
		path := indexPath("scale_in", i)
		for j, id := range a.Workers {
			p := indexPath(joinPath(path, "workers"), j)
			if id >= workers {
				errs.add(p, "worker %d is outside the fleet: ids go from 0 to %d (fleet.workers − 1)", id, workers-1)
				continue
			}
			if first, dup := namedAt[id]; dup {
				errs.add(p, "worker %d is already drained by %s; name each worker once", id, first)
				continue
			}
			namedAt[id] = p
			drained++
		}
		drained += a.Count
		if a.Role != "" {
			errs.add(joinPath(path, "role"), "only with disaggregation (prefill and decode pools); remove it")
		}
	}
	if drained > workers-1 {
		errs.add("scale_in", "drains %d workers of %d; at least one worker must stay active (drain at most %d)", drained, workers, workers-1)
	}
}

// roundUpDiv is ceil(a / b) for positive b.
func roundUpDiv(a, b int64) int64 { return (a + b - 1) / b }

// requestTooLarge says why a request of this size can never fit a worker, or "".
func requestTooLarge(promptTokens, outputTokens int64, f Fleet) string {
	total := promptTokens + outputTokens
	if total > MaxRequestTokens {
		return fmt.Sprintf("has %d tokens (prompt %d + output %d); the limit is %d", total, promptTokens, outputTokens, MaxRequestTokens)
	}
	need := roundUpDiv(total, int64(f.BlockSize))
	if need > int64(f.GPUBlocks) {
		return fmt.Sprintf("needs %d GPU blocks (prompt %d + output %d tokens at block_size %d) but a worker has gpu_blocks %d; raise fleet.gpu_blocks or shorten the request",
			need, promptTokens, outputTokens, f.BlockSize, f.GPUBlocks)
	}
	return ""
}

func validateRequests(errs *fieldErrors, s *Scenario) {
	f := s.Fleet
	firstID := make(map[string]int, len(s.Workload.Requests))
	var totalBlocks int64
	// Paths are built only for requests with a problem: a scenario may hold 200,000 requests.
	path := func(i int, key string) string { return joinPath(indexPath("workload.requests", i), key) }
	for i, r := range s.Workload.Requests {
		if first, dup := firstID[r.ID]; dup {
			errs.add(path(i, "id"), "%q is used twice (also workload.requests[%d]); request ids must be unique", r.ID, first)
		} else {
			firstID[r.ID] = i
		}
		if s.Disaggregation != nil {
			if r.RouteTo != nil && *r.RouteTo >= s.Disaggregation.Prefill.Workers {
				errs.add(path(i, "route_to"), "must name a prefill worker: ids 0 to %d (worker %d is %s)", s.Disaggregation.Prefill.Workers-1, *r.RouteTo, map[bool]string{true: "a decode worker", false: "outside the fleet"}[*r.RouteTo < s.InitialWorkers()])
			}
		} else if r.RouteTo != nil && *r.RouteTo >= f.Workers {
			errs.add(path(i, "route_to"), "worker %d is outside the fleet: ids go from 0 to %d", *r.RouteTo, f.Workers-1)
		}
		if r.TailTokens >= f.BlockSize {
			errs.add(path(i, "tail_tokens"), "must be < fleet.block_size (%d): a full block of tokens is one more label in blocks (got %d)", f.BlockSize, r.TailTokens)
			continue
		}
		blocks := labelBlockCount(r.Blocks)
		totalBlocks += blocks
		prompt := blocks*int64(f.BlockSize) + int64(r.TailTokens)
		if prompt < 1 {
			errs.add(path(i, ""), "the prompt is empty: give at least one block label in blocks or tail_tokens ≥ 1")
			continue
		}
		if why := s.requestTooLarge(prompt, int64(r.OutputTokens)); why != "" {
			errs.add(path(i, ""), "the request %s", why)
		}
	}
	if totalBlocks > maxScriptedBlocksTotal {
		errs.add("workload.requests", "the prompts add up to %d blocks; the limit is %d (use a trace or sessions workload)", totalBlocks, maxScriptedBlocksTotal)
	}
}

func validateSessions(errs *fieldErrors, s *Scenario) {
	ss := s.Workload.Sessions
	const path = "workload.sessions"
	if n := int64(ss.Count) * int64(ss.Turns); n > MaxSessionRequests {
		errs.add(path, "count × turns is %d requests; the limit is %d", n, MaxSessionRequests)
		return
	}
	if ss.SystemPromptTokens+ss.NewInputTokens < 1 {
		errs.add(path, "the first turn's prompt is empty: set system_prompt_tokens or new_input_tokens ≥ 1")
		return
	}
	// The last turn is the largest: the system prompt, every turn's input and all earlier
	// outputs, plus its own output.
	turns := int64(ss.Turns)
	prompt := int64(ss.SystemPromptTokens) + turns*int64(ss.NewInputTokens) + (turns-1)*int64(ss.OutputTokens)
	if why := s.requestTooLarge(prompt, int64(ss.OutputTokens)); why != "" {
		errs.add(path, "the last turn %s", why)
	}
}

// maxTraceRowErrors bounds the row problems reported for one trace.
const maxTraceRowErrors = 20

// resolveTrace loads the trace a validated scenario names, checks every row it will use and
// keeps the rows in s.trace. A local path is replaced by the sha256 of the file's bytes.
func resolveTrace(errs *fieldErrors, s *Scenario, env ParseEnv) {
	t := s.Workload.Trace
	rows, ok := loadTraceRows(errs, t, env)
	if !ok {
		return
	}
	if t.Limit > 0 && t.Limit < len(rows) {
		rows = rows[:t.Limit]
	}
	if len(rows) > MaxTraceRows {
		errs.add("workload.trace", "uses %d rows; the limit is %d (set limit)", len(rows), MaxTraceRows)
		return
	}
	checkTraceRows(errs, rows, t, s)
	s.trace = rows
}

// loadTraceRows reads the trace a scenario names: a file on the command line (which becomes its
// sha256), an uploaded trace by sha256, or a built-in trace. Problems go to errs.
func loadTraceRows(errs *fieldErrors, t *TraceSpec, env ParseEnv) ([]TraceRow, bool) {
	var data []byte
	var p string
	switch {
	case t.Path != "":
		p = "workload.trace.path"
		if env.ReadFile == nil {
			errs.add(p, "path traces are only accepted on the command line; upload the trace and use its sha256")
			return nil, false
		}
		var err error
		if data, err = env.ReadFile(t.Path); err != nil {
			errs.add(p, "cannot read the trace: %v", err)
			return nil, false
		}
	case t.SHA256 != "":
		p = "workload.trace.sha256"
		if env.Traces == nil {
			errs.add(p, "no uploaded trace has sha256 %s: upload it first (the Traces page or POST /traces), or on the command line name the file with \"path\"", t.SHA256)
			return nil, false
		}
		var err error
		if data, err = env.Traces.Trace(t.SHA256); err != nil {
			errs.add(p, "no uploaded trace has sha256 %s (%v): upload it first (the Traces page or POST /traces)", t.SHA256, err)
			return nil, false
		}
		if sum := sha256.Sum256(data); hex.EncodeToString(sum[:]) != t.SHA256 {
			errs.add(p, "the stored trace's content does not match sha256 %s; upload it again", t.SHA256)
			return nil, false
		}
	default:
		rows, err := builtinTraceRows(t.Name)
		if err == nil && t.TraceBlockTokens != builtinTraceBlockTokens {
			err = checkHashIDCounts(rows, t.TraceBlockTokens)
		}
		if err != nil {
			addTraceErrors(errs, "workload.trace.name", err)
			return nil, false
		}
		return rows, true
	}
	rows, err := parseTraceRows(data, t.TraceBlockTokens)
	if err != nil {
		addTraceErrors(errs, p, err)
		return nil, false
	}
	if t.Path != "" {
		sum := sha256.Sum256(data)
		t.SHA256, t.Path = hex.EncodeToString(sum[:]), ""
	}
	return rows, true
}

// checkTraceRows reports rows the fleet cannot serve or that arrive too late, the first
// maxTraceRowErrors of them by line and then how many more.
func checkTraceRows(errs *fieldErrors, rows []TraceRow, t *TraceSpec, s *Scenario) {
	problems := 0
	for _, r := range rows {
		why := s.requestTooLarge(int64(r.InputLength), int64(r.OutputLength))
		if why == "" && (r.TimestampMS/t.Speedup)+t.OffsetMS > maxTimeMS {
			why = fmt.Sprintf("arrives at %s ms after speedup and offset; the limit is %s ms", fmtNum(r.TimestampMS/t.Speedup+t.OffsetMS), fmtNum(maxTimeMS))
		}
		if why == "" {
			continue
		}
		problems++
		if problems <= maxTraceRowErrors {
			errs.add("workload.trace", "line %d: the request %s", r.Line, why)
		}
	}
	if problems > maxTraceRowErrors {
		errs.add("workload.trace", "%d more rows have the same kind of problem", problems-maxTraceRowErrors)
	}
}

func addTraceErrors(errs *fieldErrors, path string, err error) {
	if te, ok := err.(*TraceError); ok {
		for _, p := range te.Problems {
			errs.add(path, "%s", p)
		}
		return
	}
	errs.add(path, "%v", err)
}

// requestTooLarge says why a request can never fit a worker of the scenario, or "".
func (s *Scenario) requestTooLarge(promptTokens, outputTokens int64) string {
	if s.Disaggregation != nil {
		return requestTooLargePD(promptTokens, outputTokens, s)
	}
	return requestTooLarge(promptTokens, outputTokens, s.Fleet)
}

// validateScaleInPD checks a scale-in schedule over prefill and decode pools: ids of either pool,
// count actions with a role, and one active worker left in each pool.
func validateScaleInPD(errs *fieldErrors, s *Scenario) {
	d := s.Disaggregation
	workers := s.InitialWorkers()
	if d.Prefill.Workers == 0 || d.Decode.Workers == 0 {
		return // a pool is missing (reported): ids cannot be placed
	}
	namedAt := map[int]string{}
	drained := map[string]int{}
	for i, a := range s.ScaleIn {
		path := indexPath("scale_in", i)
		for j, id := range a.Workers {
			p := indexPath(joinPath(path, "workers"), j)
			if id >= workers {
				errs.add(p, "worker %d is outside the pools: prefill ids go from 0 to %d, decode ids from %d to %d", id, d.Prefill.Workers-1, d.Prefill.Workers, workers-1)
				continue
			}
			if first, dup := namedAt[id]; dup {
				errs.add(p, "worker %d is already drained by %s; name each worker once", id, first)
				continue
			}
			namedAt[id] = p
			drained[d.poolOf(id)]++
		}
		if a.Count > 0 {
			if a.Role == "" {
				errs.add(joinPath(path, "role"), `required with "count" and disaggregation: "prefill" or "decode", the pool to drain from`)
				continue
			}
			drained[a.Role] += a.Count
		}
	}
	for _, p := range []struct {
		role string
		n    int
	}{{RolePrefill, d.Prefill.Workers}, {RoleDecode, d.Decode.Workers}} {
		if drained[p.role] > p.n-1 {
			errs.add("scale_in", "drains %d %s workers of %d; at least one worker of each pool must stay active (drain at most %d)", drained[p.role], p.role, p.n, p.n-1)
		}
	}
}
