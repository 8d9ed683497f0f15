package web

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/scalein-planner/scalein/sim"
	"github.com/scalein-planner/scalein/sim/calibrate"
)

// Bounds of GET /runs/{id}/passes.jsonl: the first maxExportPasses passes of the worker (about
// 200 bytes each, so at most about 20 MB), simulated within passesExportTimeout.
const (
	maxExportPasses     = 100_000
	passesExportTimeout = 2 * time.Minute
)

// handlePassesJSONL is GET /runs/{id}/passes.jsonl?worker=N: the passes of one worker of the
// run as FPM JSON lines (sim/calibrate.PassWriter), for comparison with measured passes or
// for the Calibrate page. The simulation is deterministic, so it is run again (it stops once
// maxExportPasses passes are written; X-Passes-Truncated: true then says so).
func (s *Server) handlePassesJSONL(w http.ResponseWriter, r *http.Request) error {
	run, err := s.doneRun(r) // 409 for a run that is not done: it has no passes to give yet
	if err != nil {
		return err
	}
	sc, err := sim.Parse(run.ScenarioJSON, sim.ParseEnv{Traces: s.store})
	if err != nil {
		return &Error{Status: http.StatusConflict, Title: "Scenario no longer valid",
			Message: "this run's scenario no longer validates, so its passes cannot be simulated again: " + err.Error()}
	}
	if sc.ID() != run.ID {
		return &Error{Status: http.StatusConflict, Title: "Run from an earlier model",
			Message: "this run was simulated by an earlier model version, so simulating it again would not give its passes; open it with Edit as new and run it again to export passes under " + sim.ModelVersion}
	}
	wv := r.URL.Query().Get("worker")
	worker, err := strconv.Atoi(wv)
	if err != nil || worker < 0 || worker >= sc.Fleet.Workers {
		return badRequest(fmt.Sprintf("worker must be a worker id from 0 to %d (got %q): add ?worker=N", sc.Fleet.Workers-1, wv))
	}
	release, err := s.admitExport(w, r, sc)
	if err != nil {
		return err
	}
	defer release()
	ctx, cancel := context.WithTimeout(r.Context(), passesExportTimeout)
	defer cancel()
	var buf bytes.Buffer
	pw := calibrate.NewPassWriter(&buf, worker, maxExportPasses)
	record := func(p sim.PassRecord) {
		pw.Record(p)
		if pw.Full {
			cancel() // enough passes: stop simulating
		}
	}
	_, err = sim.Run(ctx, sc, sim.RunOptions{Traces: s.store, Pass: record})
	if err != nil && !pw.Full {
		if errors.Is(err, context.DeadlineExceeded) {
			return &Error{Status: http.StatusServiceUnavailable, Title: "Export took too long",
				Message: fmt.Sprintf("simulating the run again took over %s; use scalein sim -passes FILE -worker %d on the command line", passesExportTimeout, worker)}
		}
		return err
	}
	if err := pw.Flush(); err != nil {
		return err
	}
	w.Header().Set("Content-Type", "application/x-ndjson")
	w.Header().Set("Content-Disposition", fmt.Sprintf(`attachment; filename="%s-worker%d-passes.jsonl"`, run.ID, worker))
	w.Header().Set("X-Passes", strconv.Itoa(pw.N))
	w.Header().Set("X-Passes-Truncated", strconv.FormatBool(pw.Full))
	_, err = w.Write(buf.Bytes())
	return err
}
