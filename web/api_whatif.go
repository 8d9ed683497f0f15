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
}

// requestProblem presents the field errors of a sweep's axes or a plan's goal as a bad request
// about the sweep or plan (the scenario itself was valid).
func requestProblem(what string, err error) error {
	var ve *sim.ValidationError
	if !errors.As(err, &ve) {
		return err
	}
	return &Error{Status: http.StatusBadRequest, Title: "Invalid " + what,
		Message: fmt.Sprintf("the %s is invalid: %d %s; each is listed with its path", what, len(ve.Errors), plural(int64(len(ve.Errors)), "problem", "problems")),
		Fields:  ve.Errors}
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

// createSweep validates a sweep request, stores it and submits its points: as many as the
// queue takes now, the rest in the background as room frees up (sweep_feed.go). It returns the
// sweep id, the number of points, and whether every point was already done.
func (s *Server) createSweep(ctx context.Context, req sweepRequest) (id string, points int, allDone bool, err error) {
	if len(bytes.TrimSpace(req.Scenario)) == 0 {
		return "", 0, false, requestProblem("sweep", &sim.ValidationError{Errors: []sim.FieldError{{Path: "scenario", Message: `required: the scenario to sweep, as in POST /api/v1/runs`}}})
	}
	name := strings.TrimSpace(req.Name)
	if msg := sim.NameProblem(name); msg != "" {
		return "", 0, false, requestProblem("sweep", &sim.ValidationError{Errors: []sim.FieldError{{Path: "name", Message: msg}}})
	}
	base, err := s.readScenario(req.Scenario)
	if err != nil {
		return "", 0, false, err
	}
	pts, err := whatif.Expand(base, req.Axes, sim.ParseEnv{Traces: s.store}, s.cfg.MaxSweepPoints)
	if err != nil {
		return "", 0, false, requestProblem("sweep", err)
	}
	// Every point meets the per-run memory budget before anything is stored, so that a point
	// fed later is not refused for it.
	for _, p := range pts {
		if err := s.admit(p.Scenario); err != nil {
			return "", 0, false, err
		}
	}
	axesJSON, err := json.Marshal(req.Axes)
	if err != nil {
		return "", 0, false, err
	}
	canonical := base.CanonicalJSON()
	id = contentID("sweep", canonical, axesJSON)
	if name == "" {
		name = base.Name
	}
	// A sweep asked again stops feeding the old way and starts over: every point is submitted
	// again (a cancelled or failed one is queued again; a queued or done one is left as it is).
	if err := s.stopSweepFeed(ctx, id); err != nil {
		return "", 0, false, err
	}
	if _, err := s.store.CreateSweep(ctx, store.Sweep{ID: id, Name: name, ScenarioJSON: canonical, AxesJSON: axesJSON}, nil, s.now()); err != nil {
		return "", 0, false, err
	}
	hold, ok := s.lockDrive(sweepDriveKey(id))
	if !ok {
		// Another process feeds this sweep: queue again the points it has recorded (a
		// cancelled one runs again) and leave the rest to it.
		allDone, err = s.resubmitRecorded(ctx, id, pts)
		return id, len(pts), allDone, err
	}
	defer s.unlockDrive(hold)
	next, allDone, err := s.feedSweep(ctx, id, pts, 0, false)
	if err != nil {
		return "", 0, false, err
	}
	if next < len(pts) {
		s.startSweepFeed(id, pts, next)
	}
	return id, len(pts), allDone, nil
}

// resubmitRecorded submits again the points of a sweep recorded so far, without recording
// anything (the process feeding the sweep does that); allDone says whether every point is done.
func (s *Server) resubmitRecorded(ctx context.Context, id string, pts []whatif.Point) (allDone bool, err error) {
	_, recorded, err := s.store.GetSweep(ctx, id)
	if err != nil {
		return false, err
	}
	scenarios := make([]*sim.Scenario, 0, len(recorded))
	for i := range recorded {
		if i < len(pts) {
			scenarios = append(scenarios, pts[i].Scenario)
		}
	}
	subs, err := s.submitPoints(ctx, scenarios...)
	if err != nil {
		return false, err
	}
	allDone = len(recorded) == len(pts)
	for _, sub := range subs {
		if sub.Run.Status != store.StatusDone {
			allDone = false
		}
	}
	return allDone, nil
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
			return apiSweep{}, notFound("no sweep has this id; check the link")
		}
		return apiSweep{}, err
	}
	out := apiSweep{ID: sw.ID, Name: sw.Name, URL: "/sweeps/" + sw.ID, CSVURL: "/sweeps/" + sw.ID + "/sweep.csv", Points: make([]apiSweepPoint, len(points))}
	if err := decodeNumbers(sw.AxesJSON, &out.Axes); err != nil {
		return apiSweep{}, fmt.Errorf("sweep %s: stored axes: %w", id, err)
	}
	if want := axesPoints(out.Axes); len(points) < want {
		// Points not yet submitted (the queue was full): shown queued (cancelled once the
		// sweep is), with the run ids their runs will have.
		pendingStatus := store.StatusQueued
		if sw.Cancelled {
			pendingStatus = store.StatusCancelled
		}
		pending := s.feedingPoints(id)
		if len(pending) != want {
			if pending, err = s.expandStored(sw.ScenarioJSON, sw.AxesJSON); err != nil {
				// Show the submitted points; the log says why the others cannot be.
				s.log.Error("a sweep's points not yet submitted cannot be listed", "sweep", id, "err", err)
				pending = nil
			}
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
		} else if w, ok := s.live.watch(p.RunID); ok {
			ap.Progress = w.progress
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
	writeJSON(w, http.StatusOK, sw)
	return nil
}

// cancelSweep stops feeding the sweep's points and cancels the unfinished ones submitted.
func (s *Server) cancelSweep(ctx context.Context, id string) error {
	// A sweep that has ended stays as it ended, as a plan does: a cancel is a no-op.
	if sw, err := s.loadSweep(ctx, id); err != nil {
		return err
	} else if isFinal(sw.Status) {
		return nil
	}
	if err := s.store.CancelSweep(ctx, id); err != nil {
		if errors.Is(err, store.ErrNotFound) {
			return notFound("no sweep has this id; check the link")
		}
		return err
	}
	if err := s.stopSweepFeed(ctx, id); err != nil {
		return err
	}
	_, points, err := s.store.GetSweep(ctx, id)
	if err != nil {
		return err
	}
	ids := make([]string, len(points))
	for i, p := range points {
		ids[i] = p.RunID
	}
	return s.cancelPoints(ctx, ids, id, "")
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

// planRequest is the body of POST /api/v1/plans.
type planRequest struct {
	Name        string             `json:"name"`
	Scenario    json.RawMessage    `json:"scenario"`
	Goal        whatif.Goal        `json:"goal"`
	Constraints whatif.Constraints `json:"constraints"`
	Search      whatif.Search      `json:"search"`
}

// apiPlan is a plan as GET /api/v1/plans/{id} shows it.
type apiPlan struct {
	ID          string                 `json:"id"`
	Name        string                 `json:"name"`
	Status      string                 `json:"status"`
	Error       string                 `json:"error,omitempty"`
	URL         string                 `json:"url"`
	Goal        whatif.Goal            `json:"goal"`
	Constraints whatif.Constraints     `json:"constraints"`
	Search      whatif.Search          `json:"search"`
	Candidates  []whatif.Candidate     `json:"candidates"`
	Recommended *whatif.Recommendation `json:"recommended"`
	Reason      string                 `json:"reason,omitempty"`
	Runs        int                    `json:"runs"`
	Reused      int                    `json:"reused"`
	Notes       []string               `json:"notes,omitempty"`
	Baseline    *whatif.Candidate      `json:"baseline,omitempty"`
	// Submitted lists the runs submitted so far while the plan is running.
	Submitted []apiPlanRun `json:"submitted"`
}

type apiPlanRun struct {
	Label  string `json:"label"`
	RunID  string `json:"run_id"`
	Status string `json:"status"`
}

// createPlan validates a plan request and stores and starts the plan; created is false when
// the same plan already exists (and is not being retried).
func (s *Server) createPlan(ctx context.Context, req planRequest) (store.Plan, bool, error) {
	if len(bytes.TrimSpace(req.Scenario)) == 0 {
		return store.Plan{}, false, requestProblem("plan", &sim.ValidationError{Errors: []sim.FieldError{{Path: "scenario", Message: "required: the scenario to plan on, as in POST /api/v1/runs (its scale_in is replaced)"}}})
	}
	name := strings.TrimSpace(req.Name)
	if msg := sim.NameProblem(name); msg != "" {
		return store.Plan{}, false, requestProblem("plan", &sim.ValidationError{Errors: []sim.FieldError{{Path: "name", Message: msg}}})
	}
	base, err := s.readScenario(req.Scenario)
	if err != nil {
		return store.Plan{}, false, err
	}
	wreq := whatif.Request{Goal: req.Goal, Constraints: req.Constraints, Search: req.Search}
	if wreq.Search.MaxRuns > s.cfg.MaxPlanRuns {
		return store.Plan{}, false, requestProblem("plan", &sim.ValidationError{Errors: []sim.FieldError{{Path: "search.max_runs",
			Message: fmt.Sprintf("must be at most %d on this server (-max-plan-runs) (got %d)", s.cfg.MaxPlanRuns, wreq.Search.MaxRuns)}}})
	}
	if wreq.Search.MaxRuns == 0 {
		wreq.Search.MaxRuns = s.cfg.MaxPlanRuns
	}
	norm, err := whatif.Normalize(base, wreq)
	if err != nil {
		return store.Plan{}, false, requestProblem("plan", err)
	}
	reqJSON, err := json.Marshal(planRequestDoc{Request: norm})
	if err != nil {
		return store.Plan{}, false, err
	}
	canonical := base.CanonicalJSON()
	id := contentID("plan", canonical, reqJSON)
	if name == "" {
		name = fmt.Sprintf("Remove %s from %s", whatif.Workers(norm.Goal.Remove), base.Name)
	}
	plan, created, err := s.store.CreatePlan(ctx, store.Plan{ID: id, Name: name, ScenarioJSON: canonical, RequestJSON: reqJSON}, s.now())
	if err != nil {
		return store.Plan{}, false, err
	}
	if created || plan.Status == store.StatusQueued || plan.Status == store.StatusRunning {
		s.startPlan(id)
	}
	return plan, created, nil
}

// apiCreatePlan is POST /api/v1/plans: 202 while the plan runs, 200 when it is already done.
func (s *Server) apiCreatePlan(w http.ResponseWriter, r *http.Request) error {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return err
	}
	var req planRequest
	if err := decodeStrict(body, &req, `{"name"?: "…", "scenario": {…}, "goal": {"remove": 4, "start_ms": 480000}, "constraints"?: {"ttft_p99_ms": 8000, "max_killed": 0}, "search"?: {…}}`); err != nil {
		return err
	}
	plan, _, err := s.createPlan(r.Context(), req)
	if err != nil {
		return err
	}
	status := http.StatusAccepted
	if plan.Status == store.StatusDone {
		status = http.StatusOK
	}
	writeJSON(w, status, map[string]any{"id": plan.ID, "url": "/plans/" + plan.ID, "status": plan.Status})
	return nil
}

// loadPlan reads a plan as the API shows it.
func (s *Server) loadPlan(ctx context.Context, id string) (apiPlan, error) {
	plan, points, err := s.store.GetPlan(ctx, id)
	if err != nil {
		if errors.Is(err, store.ErrNotFound) {
			return apiPlan{}, notFound("no plan has this id; check the link")
		}
		return apiPlan{}, err
	}
	out := apiPlan{ID: plan.ID, Name: plan.Name, Status: plan.Status, Error: plan.Error, URL: "/plans/" + plan.ID,
		Candidates: []whatif.Candidate{}, Submitted: make([]apiPlanRun, len(points))}
	var req planRequestDoc
	if err := json.Unmarshal(plan.RequestJSON, &req); err != nil {
		return apiPlan{}, fmt.Errorf("plan %s: stored request: %w", id, err)
	}
	out.Goal, out.Constraints, out.Search = req.Goal, req.Constraints, req.Search
	if len(plan.ResultJSON) > 0 {
		var res whatif.Result
		if err := json.Unmarshal(plan.ResultJSON, &res); err != nil {
			return apiPlan{}, fmt.Errorf("plan %s: stored result: %w", id, err)
		}
		out.Candidates, out.Recommended, out.Reason = res.Candidates, res.Recommended, res.Reason
		out.Runs, out.Reused, out.Notes, out.Baseline = res.Runs, res.Reused, res.Notes, res.Baseline
	}
	for i, p := range points {
		out.Submitted[i] = apiPlanRun{Label: p.Label, RunID: p.RunID, Status: p.Status}
	}
	return out, nil
}

// apiGetPlan is GET /api/v1/plans/{id}.
func (s *Server) apiGetPlan(w http.ResponseWriter, r *http.Request) error {
	plan, err := s.loadPlan(r.Context(), chi.URLParam(r, "id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, plan)
	return nil
}

// cancelPlan stops a queued or running plan and its unfinished runs.
func (s *Server) cancelPlan(ctx context.Context, id string) error {
	plan, err := s.loadPlan(ctx, id)
	if err != nil {
		return err
	}
	if isFinal(plan.Status) {
		return nil
	}
	s.mu.Lock()
	cancel := s.planCancels[id]
	s.mu.Unlock()
	if cancel != nil {
		cancel(errCancelledByUser)
	}
	ids := make([]string, len(plan.Submitted))
	for i, p := range plan.Submitted {
		ids[i] = p.RunID
	}
	if err := s.cancelPoints(ctx, ids, "", id); err != nil {
		return err
	}
	return s.store.SetPlanStatus(ctx, id, store.StatusCancelled, "cancelled by a user", nil, s.now())
}

// apiCancelPlan is POST /api/v1/plans/{id}/cancel.
func (s *Server) apiCancelPlan(w http.ResponseWriter, r *http.Request) error {
	id := chi.URLParam(r, "id")
	if err := s.cancelPlan(r.Context(), id); err != nil {
		return err
	}
	plan, err := s.loadPlan(r.Context(), id)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, plan)
	return nil
}
