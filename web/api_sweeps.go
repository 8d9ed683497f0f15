package web

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/go-chi/chi/v5"
	"github.com/scalein-planner/scalein/runs"
	"github.com/scalein-planner/scalein/sim"
	"github.com/scalein-planner/scalein/sim/whatif"
	"github.com/scalein-planner/scalein/store"
)

// sweepRequest is the body of POST /api/v1/sweeps.
type sweepRequest struct {
	Name     string          `json:"name"`
	Scenario json.RawMessage `json:"scenario"`
	Axes     []whatif.Axis   `json:"axes"`
}

// apiSweepPoint is one point as GET /api/v1/sweeps/{id} shows it.
type apiSweepPoint struct {
	Values   []any           `json:"values"`
	RunID    string          `json:"run_id"`
	URL      string          `json:"url"`
	Status   string          `json:"status"`
	Error    string          `json:"error,omitempty"`
	Progress float64         `json:"progress"`
	Headline json.RawMessage `json:"headline"`
}

// apiSweep is a sweep with its points in row-major order.
type apiSweep struct {
	ID       string          `json:"id"`
	Name     string          `json:"name"`
	Status   string          `json:"status"`
	URL      string          `json:"url"`
	CSVURL   string          `json:"csv_url"`
	Done     int             `json:"done"`
	Axes     []whatif.Axis   `json:"axes"`
	Points   []apiSweepPoint `json:"points"`
	Scenario json.RawMessage `json:"scenario,omitempty"`
	// CreatedBy is who created the sweep, on a server with users (auth.go).
	CreatedBy string `json:"created_by,omitempty"`
}

// decodeStrict decodes a JSON body, keeping numbers exact and refusing unknown members.
func decodeStrict(body []byte, v any, shape string) error {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	dec.UseNumber()
	if err := dec.Decode(v); err != nil {
		return badRequest("the body must be " + shape + ": " + err.Error())
	}
	if dec.More() {
		return badRequest("the body must be one JSON object " + shape)
	}
	return nil
}

// createSweep validates a sweep request's scenario and hands it to the run service, which
// stores the sweep and submits its points. It returns the sweep id, the number of points, and
// whether every point was already done.
func (s *Server) createSweep(ctx context.Context, req sweepRequest) (id string, points int, allDone bool, err error) {
	if len(bytes.TrimSpace(req.Scenario)) == 0 {
		return "", 0, false, runs.InvalidRequest("sweep", &sim.ValidationError{Errors: []sim.FieldError{{Path: "scenario", Message: `required: the scenario to sweep, as in POST /api/v1/runs`}}})
	}
	name := strings.TrimSpace(req.Name)
	if msg := sim.NameProblem(name); msg != "" { // the scenario name rules (issue 19 L1)
		return "", 0, false, runs.InvalidRequest("sweep", &sim.ValidationError{Errors: []sim.FieldError{{Path: "name", Message: msg}}})
	}
	// The rate limit (routes.go) and the per-user quota come before any memory estimate (issue
	// 19 M8): the base's here, each point's in CreateSweep. The quota needs only the axes.
	if err := s.checkSweepQuota(ctx, runs.AxesPoints(req.Axes)); err != nil {
		return "", 0, false, err
	}
	base, err := s.readScenario(req.Scenario)
	if err != nil {
		return "", 0, false, err
	}
	return s.runs.CreateSweep(ctx, name, base, req.Axes)
}

// apiCreateSweep is POST /api/v1/sweeps: 202 with {"id", "url", "points"}, 200 when every point
// was already done, 400 with paths like axes[0].path for a bad request.
func (s *Server) apiCreateSweep(w http.ResponseWriter, r *http.Request) error {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return err
	}
	var req sweepRequest
	if err := decodeStrict(body, &req, `{"name"?: "…", "scenario": {…}, "axes": [{"path": "kvcr.bandwidth_gbps", "values": [5, 10]}]}`); err != nil {
		return err
	}
	id, n, allDone, err := s.createSweep(r.Context(), req)
	if err != nil {
		return err
	}
	status := http.StatusAccepted
	if allDone {
		status = http.StatusOK
	}
	writeJSON(w, status, map[string]any{"id": id, "url": "/sweeps/" + id, "points": n})
	return nil
}

// sweepStatus sums up the points: cancelled once a user cancelled it (until asked again),
// otherwise running while any point is unfinished, then failed if any point failed.
func sweepStatus(sw store.Sweep, points []store.SweepPoint) (status string, done int) {
	queued, running, failed, cancelled := 0, 0, 0, 0
	for _, p := range points {
		switch p.Status {
		case store.StatusDone:
			done++
		case store.StatusQueued:
			queued++
		case store.StatusRunning:
			running++
		case store.StatusFailed:
			failed++
		case store.StatusCancelled:
			cancelled++
		}
	}
	switch {
	case sw.Cancelled:
		return store.StatusCancelled, done
	case running > 0 || (queued > 0 && done+failed+cancelled > 0):
		return store.StatusRunning, done
	case queued > 0:
		return store.StatusQueued, done
	case failed > 0:
		return store.StatusFailed, done
	case cancelled > 0:
		return store.StatusCancelled, done
	}
	return store.StatusDone, done
}

// loadSweep reads a sweep as the API shows it.
func (s *Server) loadSweep(ctx context.Context, id string) (apiSweep, error) {
	sw, points, err := s.store.GetSweep(ctx, id)
	if err != nil {
		if errors.Is(err, store.ErrNotFound) {
			return apiSweep{}, &runs.NotFoundError{Kind: "sweep"}
		}
		return apiSweep{}, err
	}
	out := apiSweep{ID: sw.ID, Name: sw.Name, URL: "/sweeps/" + sw.ID, CSVURL: "/sweeps/" + sw.ID + "/sweep.csv", Points: make([]apiSweepPoint, len(points))}
	if err := decodeNumbers(sw.AxesJSON, &out.Axes); err != nil {
		return apiSweep{}, fmt.Errorf("sweep %s: stored axes: %w", id, err)
	}
	if want := runs.AxesPoints(out.Axes); len(points) < want {
		// Points not yet submitted (the queue was full): shown queued (cancelled once the
		// sweep is), with the run ids their runs will have.
		pendingStatus := store.StatusQueued
		if sw.Cancelled {
			pendingStatus = store.StatusCancelled
		}
		pending, err := s.runs.SweepPoints(sw)
		if err != nil {
			// Show the submitted points; the log says why the others cannot be.
			s.log.Error("a sweep's points not yet submitted cannot be listed", "sweep", id, "err", err)
			pending = nil
		}
		for i := len(points); i < len(pending); i++ {
			vals, err := json.Marshal(pending[i].Values)
			if err != nil {
				return apiSweep{}, err
			}
			points = append(points, store.SweepPoint{Index: i, ValuesJSON: vals, RunID: pending[i].Scenario.ID(), Status: pendingStatus})
		}
		out.Points = make([]apiSweepPoint, len(points))
	}
	out.Status, out.Done = sweepStatus(sw, points)
	for i, p := range points {
		ap := apiSweepPoint{RunID: p.RunID, URL: "/runs/" + p.RunID, Status: p.Status, Error: p.Error, Progress: p.Progress, Headline: p.HeadlineJSON}
		if p.Status == store.StatusDone {
			ap.Progress = 1
		} else if w, ok := s.runs.Progress(p.RunID); ok {
			ap.Progress = w.Fraction
		}
		if err := decodeNumbers(p.ValuesJSON, &ap.Values); err != nil {
			return apiSweep{}, fmt.Errorf("sweep %s point %d: stored values: %w", id, i, err)
		}
		if len(ap.Headline) == 0 {
			ap.Headline = json.RawMessage("null")
		}
		out.Points[i] = ap
	}
	return out, nil
}

func decodeNumbers(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	return dec.Decode(v)
}

// apiGetSweep is GET /api/v1/sweeps/{id}.
func (s *Server) apiGetSweep(w http.ResponseWriter, r *http.Request) error {
	sw, err := s.loadSweep(r.Context(), chi.URLParam(r, "id"))
	if err != nil {
		return err
	}
	sw.CreatedBy = s.createdBy(r.Context(), store.OwnedSweep, sw.ID)
	writeJSON(w, http.StatusOK, sw)
	return nil
}

// cancelSweep cancels a sweep that has not ended; one that has stays as it ended, as a plan
// does (issue 19 L2: a done sweep used to turn cancelled).
func (s *Server) cancelSweep(ctx context.Context, id string) error {
	sw, err := s.loadSweep(ctx, id)
	if err != nil {
		return err
	}
	if runs.IsFinal(sw.Status) {
		return nil
	}
	return s.runs.CancelSweep(ctx, id)
}

// apiCancelSweep is POST /api/v1/sweeps/{id}/cancel.
func (s *Server) apiCancelSweep(w http.ResponseWriter, r *http.Request) error {
	id := chi.URLParam(r, "id")
	if err := s.cancelSweep(r.Context(), id); err != nil {
		return err
	}
	sw, err := s.loadSweep(r.Context(), id)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, sw)
	return nil
}

// handleSweepCSV is GET /sweeps/{id}/sweep.csv.
func (s *Server) handleSweepCSV(w http.ResponseWriter, r *http.Request) error {
	sw, err := s.loadSweep(r.Context(), chi.URLParam(r, "id"))
	if err != nil {
		return err
	}
	points := make([]whatif.PointResult, len(sw.Points))
	for i, p := range sw.Points {
		points[i] = whatif.PointResult{Values: p.Values, RunID: p.RunID, Status: p.Status}
		if len(p.Headline) > 0 {
			_ = json.Unmarshal(p.Headline, &points[i].Headline)
		}
	}
	var buf bytes.Buffer
	if err := whatif.WriteCSV(&buf, sw.Axes, points); err != nil {
		return err
	}
	w.Header().Set("Content-Type", "text/csv; charset=utf-8")
	w.Header().Set("Content-Disposition", `attachment; filename="sweep-`+sw.ID+`.csv"`)
	_, _ = w.Write(buf.Bytes())
	return nil
}
