package sim

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"hash"
	"math"
	"sort"
)

func msPtr(ns int64) *float64 {
	v := nsToMS(ns)
	return &v
}

// distribution summarises durations in ns: nearest-rank percentiles and a mean rounded half up.
func distribution(vals []int64) Distribution { return summarise(vals, rankValues) }

// distributionInPlace is distribution reordering vals, for values nothing reads in order after
// it (the E2E durations: only their percentiles are reported, whichever order they are in).
func distributionInPlace(vals []int64) Distribution { return summarise(vals, rankInPlace) }

func summarise(vals []int64, rank func([]int64, ...int) []int64) Distribution {
	if len(vals) == 0 {
		return Distribution{}
	}
	var sum int64
	for _, v := range vals {
		sum += v
	}
	n := len(vals)
	mean := int64(math.Floor(float64(sum)/float64(n) + 0.5))
	q := rank(vals, nearestRank(50, n), nearestRank(90, n), nearestRank(99, n), n-1) // results.go
	return Distribution{Mean: msPtr(mean), P50: msPtr(q[0]), P90: msPtr(q[1]), P99: msPtr(q[2]), Max: msPtr(q[3])}
}

// report builds the run's report: the summary, a row per worker and (if asked) per request,
// the time series, and the digest over them.
func (e *engine) report() *Report {
	duration := e.lastChange
	// The percentiles read only e.e2e and (copied, as the time series reads it too) e.ttft: with
	// a spare core they are selected beside the rest.
	var e2e, ttft Distribution
	pctDone := make(chan struct{})
	if e.opt.SpareCore {
		go func() {
			defer close(pctDone)
			e2e = distributionInPlace(e.e2e)
			ttft = distribution(e.ttft)
		}()
	} else {
		e2e = distributionInPlace(e.e2e)
		ttft = distribution(e.ttft)
		close(pctDone)
	}
	id := e.opt.ScenarioID
	if id == "" {
		id = e.s.ID()
	}
	r := &Report{
		Schema:       ReportSchema,
		Name:         e.s.Name,
		ScenarioID:   id,
		ModelVersion: ModelVersion,
		KVCR:         e.kv,
		// Every list is a list, never null: API clients iterate without checking.
		ScaleIn:    append([]ScaleInRow{}, e.actRows...),
		Workers:    make([]WorkerRow, 0, len(e.ws)+len(e.gen.gone)),
		Timeseries: e.ts.build(duration, e.ttftAt, e.ttft),
	}
	<-pctDone
	r.Summary = Summary{
		Requests:    RequestCounts{Total: e.total, Completed: e.completedN, Killed: e.killedN, Migrated: e.migratedN},
		TTFTMS:      ttft,
		E2EMS:       e2e,
		Tokens:      e.tokens,
		Preemptions: e.preemptions,
		DurationMS:  nsToMS(duration),
	}
	var workerNS int64
	r.Workers, workerNS = e.workerRows(r.Workers, duration)
	r.Summary.WorkerSeconds = float64(workerNS) / 1e9
	r.Summary.GPUHours = float64(r.Summary.WorkerSeconds*float64(e.s.Fleet.GPUsPerWorker)) / 3600
	r.Summary.Workers = WorkerCounts{Initial: e.s.Fleet.Workers, Peak: e.peakWorkers,
		Final: int(e.active + e.startingN + e.drainingN)}
	if e.pd != nil {
		e.reportPD(r, duration)
	}
	if e.as != nil {
		r.Autoscaler = &AutoscalerReport{Decisions: append([]Decision{}, e.as.rows...)}
		counts := e.as.counts
		if counts.Reasons == nil {
			counts.Reasons = ReasonCounts{}
		}
		r.Summary.Autoscaler = &counts
	}
	if e.slo != nil {
		r.Summary.SLO = e.slo.summary(e.s.SLO)
		e.slo.fill(&r.Timeseries)
	}
	if e.s.Report.PerRequest {
		rows := e.rows
		sort.SliceStable(rows, func(i, j int) bool { return rows[i].order < rows[j].order })
		r.Requests = make([]RequestRow, len(rows))
		for i, q := range rows {
			r.Requests[i] = requestRow(q)
			if e.pd != nil {
				requestRowPD(&r.Requests[i], q)
			}
		}
	}
	r.Digest = digest(r)
	return r
}

// workerRow is a worker's row of the report, and the instant its worker-seconds end: its
// removal, or the end of the run.
func workerRow(w *worker, duration int64) (WorkerRow, int64) {
	row := WorkerRow{ID: int(w.id), FinalState: w.state, Forced: w.forced,
		RequestsCompleted: w.completed, RequestsKilled: w.killed,
		PullsServed: w.pullsServed, PullsReceived: w.pullsReceived, Reactivations: w.reactivations}
	if w.startedAt >= 0 {
		row.StartedAtMS = msPtr(w.startedAt)
	}
	if w.activeAt >= 0 && w.state != StateStarting && w.g1 != nil {
		row.ActiveAtMS = msPtr(w.activeAt)
	}
	end := duration
	if w.everMarked {
		row.MarkedAtMS = msPtr(w.markedAt)
		if w.hasGrace && w.state != StateActive {
			row.GraceDeadlineMS = msPtr(w.graceAt)
		}
	}
	if w.state == StateRemoved && !w.everMarked {
		// A starting worker the autoscaler cancelled: removed at the decision, never drained.
		end = w.removedAt
		row.RemovedAtMS = msPtr(w.removedAt)
	} else if w.state == StateRemoved {
		end = w.removedAt
		last := w.markedAt
		if w.hadWork && w.lastWork > last {
			last = w.lastWork
		}
		row.LastWorkMS = msPtr(last)
		row.RemovedAtMS = msPtr(w.removedAt)
		row.DrainMS = msPtr(w.removedAt - w.markedAt)
		row.PinWaitMS = msPtr(w.removedAt - last)
	}
	return row, end
}

// requestRow is a finished request's row of the report.
func requestRow(q *request) RequestRow {
	row := RequestRow{ID: q.name(), ArrivalMS: nsToMS(q.atNS), PromptTokens: int64(q.promptTokens),
		G1ReusedTokens: int64(q.g1), G2ReusedTokens: int64(q.g2), KVCRPulledTokens: int64(q.kv),
		Preemptions: int64(q.preemptions), Migrations: int64(q.migrations)}
	if q.admitted {
		row.RecomputedTokens = int64(q.promptTokens - q.g1 - q.g2 - q.kv)
	}
	wid := int(q.w.id)
	row.Worker = &wid
	if q.firstToken >= 0 {
		row.FirstTokenMS = msPtr(q.firstToken)
	}
	if q.done >= 0 {
		row.DoneMS = msPtr(q.done)
	}
	if q.state == rsKilled {
		row.Status = StatusKilled
	} else {
		row.Status = StatusCompleted
	}
	if q.outcome != ocNone {
		s := outcomeNames[q.outcome]
		row.PullOutcome = &s
	}
	return row
}

// digest is the SHA-256 of the report's JSON without its sim section and digest.
//
// The JSON is streamed into the hash rather than marshalled into a copy (the same bytes: an
// Encoder writes Marshal's text and a newline, in one Write, which digestWriter leaves out), so
// a report with per-request rows is not held once more only to be hashed.
func digest(r *Report) string {
	c := *r
	c.Sim, c.Digest = nil, ""
	h := digestWriter{sha256.New()}
	if err := json.NewEncoder(h).Encode(&c); err != nil {
		return ""
	}
	return hex.EncodeToString(h.Sum(nil))
}

// digestWriter hashes what an Encoder writes but its closing newline.
type digestWriter struct{ hash.Hash }

func (w digestWriter) Write(b []byte) (int, error) {
	w.Hash.Write(bytes.TrimSuffix(b, []byte("\n")))
	return len(b), nil
}
