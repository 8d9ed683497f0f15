package web

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sort"

	"github.com/scalein-planner/scalein/sim"
	"github.com/scalein-planner/scalein/web/charts"
)

// The timeline export (GET /runs/{id}/trace.json) writes a run's report in the Chrome Trace
// Event format, which Perfetto (ui.perfetto.dev) and chrome://tracing open. What it holds is
// documented in docs/results.md; in short:
//
//   - process 1 "Drained workers": a track per drained worker with its drain (marked →
//     removed, or → the end of the run) split into "own work" and "pin wait", instants for the
//     grace deadline and a forced removal, and its counts (pulls served and received, requests
//     completed and killed) as arguments;
//   - process 2 "Peers that pulled": a track per worker that received pulls, with its counts, and,
//     when the report has per-request rows, a span per request that staged a pull (arrival →
//     first token, named by the pull's outcome) on the worker it ran on;
//   - process 3 "Fleet": the scale-in actions as instants and the time series as counters (and an
//     autoscaler's decisions as instants, trace_export_autoscaler.go);
//   - process 4 "Passes": a track per drained worker and per peer that pulled, with its forward
//     passes from the first drain mark to the last removal. The report keeps no passes, so the
//     run is simulated again (it is deterministic) and stopped once past that window;
//   - process 5 "Worker lifecycle", for an autoscaler run: each worker's starting, active and
//     draining spans and its removal.
//
// The report has no per-pull records (which source served which pull, when bytes moved), so
// neither has the export. Its size is bounded: at most maxTraceRequestSpans request spans (the
// earliest), maxTracePasses passes (the earliest), the time series' ≤ 200 buckets, four events
// per drained worker.

const (
	tracePIDDrained = 1
	tracePIDPeers   = 2
	tracePIDFleet   = 3
	tracePIDPasses  = 4
	// maxTraceRequestSpans bounds the per-request spans of a big run (a few MB of JSON).
	maxTraceRequestSpans = 20_000
	// maxTracePasses bounds the pass spans (about 150 bytes each).
	maxTracePasses = 50_000
)

// traceEvent is one Trace Event Format record; times are microseconds.
type traceEvent struct {
	Name string         `json:"name"`
	Cat  string         `json:"cat,omitempty"`
	Ph   string         `json:"ph"`
	TS   float64        `json:"ts"`
	Dur  *float64       `json:"dur,omitempty"`
	PID  int            `json:"pid"`
	TID  int            `json:"tid"`
	S    string         `json:"s,omitempty"`
	Args map[string]any `json:"args,omitempty"`
}

type traceFile struct {
	TraceEvents     []traceEvent   `json:"traceEvents"`
	DisplayTimeUnit string         `json:"displayTimeUnit"`
	Metadata        map[string]any `json:"metadata"`
}

func usOf(ms float64) float64 { return ms * 1000 }

func span(name, cat string, pid, tid int, fromMS, toMS float64, args map[string]any) traceEvent {
	d := usOf(toMS - fromMS)
	return traceEvent{Name: name, Cat: cat, Ph: "X", TS: usOf(fromMS), Dur: &d, PID: pid, TID: tid, Args: args}
}

func meta(kind string, pid, tid int, name string) traceEvent {
	return traceEvent{Name: kind, Ph: "M", PID: pid, TID: tid, Args: map[string]any{"name": name}}
}

// tracePasses is what the export holds of a run's passes: those of the tracked workers in the
// drain window, in simulated order, and why there are no more.
type tracePasses struct {
	passes []sim.PassRecord
	note   string // "" when every pass of the window is there
	// timedOut: the simulation was cut by passesExportTimeout (or the request ended), so the
	// passes depend on the machine's speed and the export is not cached.
	timedOut bool
}

// passWindow is the part of the run whose passes the export draws: from the first drain mark
// to the last removal (or the end of the run), and the workers drawn (drained, or received
// pulls). ok is false when nothing was drained.
func passWindow(rep *sim.Report) (fromNS, toNS int64, workers map[int]bool, ok bool) {
	workers = map[int]bool{}
	from, to := rep.Summary.DurationMS, 0.0
	for _, w := range rep.Workers {
		if w.PullsReceived > 0 {
			workers[w.ID] = true
		}
		if w.MarkedAtMS == nil {
			continue
		}
		workers[w.ID] = true
		ok = true
		from = min(from, *w.MarkedAtMS)
		end := rep.Summary.DurationMS
		if w.RemovedAtMS != nil {
			end = *w.RemovedAtMS
		}
		to = max(to, end)
	}
	return int64(from * 1e6), int64(to * 1e6), workers, ok
}

// simulatePasses runs sc again and keeps the passes of the tracked workers that overlap the
// drain window, stopping at maxTracePasses or once the simulation is past the window.
func simulatePasses(ctx context.Context, sc *sim.Scenario, opt sim.RunOptions, rep *sim.Report) tracePasses {
	fromNS, toNS, workers, ok := passWindow(rep)
	if !ok {
		return tracePasses{}
	}
	ctx, cancel := context.WithTimeout(ctx, passesExportTimeout)
	defer cancel()
	var out tracePasses
	opt.Pass = func(p sim.PassRecord) {
		switch {
		case p.StartNS > toNS:
			cancel() // past the window: nothing more to draw
		case !workers[p.Worker] || p.EndNS < fromNS:
		case len(out.passes) >= maxTracePasses:
			out.note = fmt.Sprintf("only the first %d passes of the drain window are drawn", maxTracePasses)
			cancel()
		default:
			out.passes = append(out.passes, p)
		}
	}
	if _, err := sim.Run(ctx, sc, opt); err != nil && ctx.Err() == nil {
		out.note = "the passes could not be simulated again: " + err.Error()
	} else if ctx.Err() == context.DeadlineExceeded {
		out.timedOut = true
		out.note = fmt.Sprintf("simulating the passes again took over %s; the passes drawn end there", passesExportTimeout)
	}
	return out
}

// chromeTrace converts a report (and the passes simulated again, if any) to the Trace Event
// Format.
func chromeTrace(runID string, rep *sim.Report, passes tracePasses) traceFile {
	end := rep.Summary.DurationMS
	ev := []traceEvent{
		meta("process_name", tracePIDDrained, 0, "Drained workers"),
		meta("process_name", tracePIDPeers, 0, "Peers that pulled"),
		meta("process_name", tracePIDFleet, 0, "Fleet"),
		meta("thread_name", tracePIDFleet, 0, "scale-in actions"),
		meta("thread_name", tracePIDFleet, 1, "time series"),
	}
	for _, w := range rep.Workers {
		counts := map[string]any{"pulls_served": w.PullsServed, "pulls_received": w.PullsReceived,
			"requests_completed": w.RequestsCompleted, "requests_killed": w.RequestsKilled, "final_state": w.FinalState}
		if w.PullsReceived > 0 {
			ev = append(ev, meta("thread_name", tracePIDPeers, w.ID, fmt.Sprintf("worker %d", w.ID)),
				traceEvent{Name: "pulls received", Cat: "pull", Ph: "i", S: "t", TS: 0, PID: tracePIDPeers, TID: w.ID, Args: counts})
		}
		if w.MarkedAtMS == nil {
			continue
		}
		marked, lastWork, removed := charts.DrainSegments(w, end)
		ev = append(ev, meta("thread_name", tracePIDDrained, w.ID, fmt.Sprintf("worker %d", w.ID)))
		drainName := "drain → removal"
		if w.RemovedAtMS == nil {
			drainName = "draining (not removed by the end of the run)"
		}
		ev = append(ev, span(drainName, "drain", tracePIDDrained, w.ID, marked, removed, counts))
		if lastWork > marked {
			ev = append(ev, span("own work", "drain", tracePIDDrained, w.ID, marked, lastWork, nil))
		}
		if removed > lastWork {
			ev = append(ev, span("pin wait", "drain", tracePIDDrained, w.ID, lastWork, removed,
				map[string]any{"pulls_served": w.PullsServed}))
		}
		if w.GraceDeadlineMS != nil {
			ev = append(ev, traceEvent{Name: "grace deadline", Cat: "drain", Ph: "i", S: "t", TS: usOf(*w.GraceDeadlineMS), PID: tracePIDDrained, TID: w.ID})
		}
		if w.Forced && w.RemovedAtMS != nil {
			ev = append(ev, traceEvent{Name: "forced removal", Cat: "drain", Ph: "i", S: "t", TS: usOf(*w.RemovedAtMS), PID: tracePIDDrained, TID: w.ID,
				Args: map[string]any{"requests_killed": w.RequestsKilled}})
		}
	}
	for i, a := range rep.ScaleIn {
		ev = append(ev, traceEvent{Name: fmt.Sprintf("scale-in action %d", i+1), Cat: "scale-in", Ph: "i", S: "p", TS: usOf(a.AtMS),
			PID: tracePIDFleet, TID: 0, Args: map[string]any{"drained": a.Drained, "skipped": a.Skipped}})
	}
	for _, b := range rep.Timeseries.Buckets {
		ev = append(ev,
			traceEvent{Name: "workers", Ph: "C", TS: usOf(b.TMS), PID: tracePIDFleet, TID: 1, Args: map[string]any{"active": b.Active, "draining": b.Draining}},
			traceEvent{Name: "requests", Ph: "C", TS: usOf(b.TMS), PID: tracePIDFleet, TID: 1, Args: map[string]any{"waiting": b.Waiting, "running": b.Running}},
			traceEvent{Name: "pulls", Ph: "C", TS: usOf(b.TMS), PID: tracePIDFleet, TID: 1,
				Args: map[string]any{"staged": b.PullsStaged, "landed": b.PullsLanded, "rejected": b.PullsRejected}})
	}
	spans, dropped := requestSpans(rep)
	ev = append(ev, spans...)
	ev = append(ev, passSpans(passes.passes)...)
	ev = append(ev, autoscalerTrace(rep)...)
	sort.SliceStable(ev, func(i, j int) bool { return ev[i].Ph == "M" && ev[j].Ph != "M" })
	return traceFile{TraceEvents: ev, DisplayTimeUnit: "ms", Metadata: map[string]any{
		"run_id": runID, "name": rep.Name, "scenario_id": rep.ScenarioID, "model_version": rep.ModelVersion,
		"duration_ms": rep.Summary.DurationMS, "request_spans_dropped": dropped,
		"passes": len(passes.passes), "passes_note": passes.note,
		"note": "Times are simulated. The report has no per-pull records, so pulls appear as counts and as the spans of the requests that staged them; passes are simulated again for the drain window.",
	}}
}

// passSpans draws each pass on its worker's track of the "Passes" process, with the pass's
// prefill tokens (P), decoding requests (D) and decode KV tokens (K).
func passSpans(passes []sim.PassRecord) []traceEvent {
	if len(passes) == 0 {
		return nil
	}
	out := []traceEvent{meta("process_name", tracePIDPasses, 0, "Passes")}
	named := map[int]bool{}
	for _, p := range passes {
		if !named[p.Worker] {
			named[p.Worker] = true
			out = append(out, meta("thread_name", tracePIDPasses, p.Worker, fmt.Sprintf("worker %d passes", p.Worker)))
		}
		out = append(out, span("pass", "pass", tracePIDPasses, p.Worker, float64(p.StartNS)/1e6, float64(p.EndNS)/1e6,
			map[string]any{"prefill_tokens": p.PrefillTokens, "prefill_requests": p.PrefillRequests,
				"decode_requests": p.DecodeRequests, "decode_kv_tokens": p.DecodeKVTokens}))
	}
	return out
}

// requestSpans draws each request that staged a pull on the peer it ran on: arrival → first
// token (or → done for a request killed before it), named by the pull's outcome. At most
// maxTraceRequestSpans, the earliest; dropped counts the rest.
func requestSpans(rep *sim.Report) (out []traceEvent, dropped int) {
	for _, q := range rep.Requests {
		if q.PullOutcome == nil || q.Worker == nil {
			continue
		}
		switch *q.PullOutcome {
		case sim.OutcomeSuccess, sim.OutcomePartial, sim.OutcomeAborted:
		default:
			continue
		}
		if len(out) >= maxTraceRequestSpans {
			dropped++
			continue
		}
		endMS := q.ArrivalMS
		switch {
		case q.FirstTokenMS != nil:
			endMS = *q.FirstTokenMS
		case q.DoneMS != nil:
			endMS = *q.DoneMS
		}
		out = append(out, span("request "+q.ID+": pull "+*q.PullOutcome, "pull", tracePIDPeers, *q.Worker, q.ArrivalMS, endMS,
			map[string]any{"kvcr_pulled_tokens": q.KVCRPulledTokens, "status": q.Status}))
	}
	return out, dropped
}

// handleTraceJSON is GET /runs/{id}/trace.json.
func (s *Server) handleTraceJSON(w http.ResponseWriter, r *http.Request) error {
	run, err := s.doneRun(r)
	if err != nil {
		return err
	}
	body, ok := s.exports().traces.get(run.ID)
	if !ok {
		if body, err = s.buildTraceJSON(w, r, run.ID, run.ScenarioJSON); err != nil {
			return err
		}
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Disposition", `attachment; filename="`+run.ID+`-trace.json"`)
	_, err = w.Write(body)
	return err
}

// buildTraceJSON builds a done run's trace.json, simulating its passes again within the export
// budget (exports.go), and caches it: a done run's export never changes.
func (s *Server) buildTraceJSON(w http.ResponseWriter, r *http.Request, id string, scenarioJSON []byte) ([]byte, error) {
	rep, err := s.runs.LoadReport(r.Context(), id) // the request spans need the per-request rows
	if err != nil {
		return nil, err
	}
	var passes tracePasses
	if sc, err := sim.Parse(scenarioJSON, sim.ParseEnv{Traces: s.store}); err != nil {
		passes.note = "the run's scenario no longer validates, so its passes cannot be simulated again"
	} else if sc.ID() != id {
		passes.note = "this run was simulated by an earlier model version (" + rep.ModelVersion + "), so its passes are not simulated again under " + sim.ModelVersion
	} else {
		release, err := s.admitExport(w, r, sc)
		if err != nil {
			return nil, err
		}
		defer release()
		if body, ok := s.exports().traces.get(id); ok { // built by another request meanwhile
			return body, nil
		}
		passes = simulatePasses(r.Context(), sc, sim.RunOptions{Traces: s.store}, rep)
	}
	body, err := json.Marshal(chromeTrace(id, rep, passes))
	if err != nil {
		return nil, fmt.Errorf("encode trace of run %s: %w", id, err)
	}
	if !passes.timedOut && r.Context().Err() == nil {
		s.exports().traces.put(id, body)
	}
	return body, nil
}
