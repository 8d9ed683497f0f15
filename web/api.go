package web

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/scalein-planner/scalein/sim"
	"github.com/scalein-planner/scalein/store"
)

// apiRun is a run as the JSON API shows it.
type apiRun struct {
	ID         string     `json:"id"`
	Name       string     `json:"name"`
	Status     string     `json:"status"`
	Progress   float64    `json:"progress"`
	Error      string     `json:"error,omitempty"`
	URL        string     `json:"url"`
	CreatedAt  *time.Time `json:"created_at,omitempty"`
	StartedAt  *time.Time `json:"started_at,omitempty"`
	FinishedAt *time.Time `json:"finished_at,omitempty"`
	// Attempts counts the starts of the run; Worker is "host:pid" of the process that started
	// the latest (for a done run, the one that produced the report). Single-run answers only.
	Attempts int             `json:"attempts"`
	Worker   string          `json:"worker,omitempty"`
	Headline json.RawMessage `json:"headline,omitempty"`
	Report   json.RawMessage `json:"report,omitempty"`
}

func timePtr(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	u := t.UTC()
	return &u
}

// apiCreated is the answer to a submission.
type apiCreated struct {
	ID     string `json:"id"`
	Status string `json:"status"`
	URL    string `json:"url"`
}

// readScenario parses and validates a JSON scenario (traces by name from the store): a
// *sim.ValidationError lists the field errors; anything else is a 400 naming what failed.
func (s *Server) readScenario(data []byte) (*sim.Scenario, error) {
	sc, err := sim.Parse(data, sim.ParseEnv{Traces: s.store})
	if err != nil {
		var invalid *sim.ValidationError
		if errors.As(err, &invalid) {
			return nil, err
		}
		return nil, badRequest("the scenario could not be read: " + err.Error())
	}
	return sc, nil
}

// apiCreateRun is POST /api/v1/runs: 202 when queued now, 200 when the identical scenario
// already has a run, 400 with every field error.
func (s *Server) apiCreateRun(w http.ResponseWriter, r *http.Request) error {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return err
	}
	sc, err := s.readScenario(body)
	if err != nil {
		return err
	}
	subs, err := s.submit(r.Context(), sc)
	if err != nil {
		return err
	}
	status := http.StatusOK
	if subs[0].Created {
		status = http.StatusAccepted
	}
	writeJSON(w, status, apiCreated{ID: subs[0].Run.ID, Status: subs[0].Run.Status, URL: "/runs/" + subs[0].Run.ID})
	return nil
}

// apiCreatePair is POST /api/v1/pairs with {"kind": "hints"|"guard", "scenario": {…}}.
func (s *Server) apiCreatePair(w http.ResponseWriter, r *http.Request) error {
	var req struct {
		Kind     string          `json:"kind"`
		Scenario json.RawMessage `json:"scenario"`
	}
	dec := json.NewDecoder(r.Body)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			return err
		}
		return badRequest(`the body must be {"kind": "hints" or "guard", "scenario": {…}}: ` + err.Error())
	}
	if req.Kind != sim.CounterpartHints && req.Kind != sim.CounterpartGuard {
		return badRequest(fmt.Sprintf("kind must be hints or guard (got %q)", req.Kind))
	}
	sc, err := s.readScenario(req.Scenario)
	if err != nil {
		return err
	}
	a, b, err := pairOrder(sc, req.Kind)
	if err != nil {
		return err
	}
	subs, err := s.submit(r.Context(), a, b)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusAccepted, map[string]any{
		"a":           apiCreated{ID: subs[0].Run.ID, Status: subs[0].Run.Status, URL: "/runs/" + subs[0].Run.ID},
		"b":           apiCreated{ID: subs[1].Run.ID, Status: subs[1].Run.Status, URL: "/runs/" + subs[1].Run.ID},
		"compare_url": "/compare?a=" + subs[0].Run.ID + "&b=" + subs[1].Run.ID,
	})
	return nil
}

// apiGetRun is GET /api/v1/runs/{id}: status, progress, and the report when done.
func (s *Server) apiGetRun(w http.ResponseWriter, r *http.Request) error {
	run, err := s.store.GetRun(r.Context(), chi.URLParam(r, "id"))
	if err != nil {
		return err
	}
	out := apiRun{ID: run.ID, Name: run.Name, Status: run.Status, Progress: s.progressOf(run), Error: run.Error,
		URL: "/runs/" + run.ID, CreatedAt: timePtr(run.CreatedAt), StartedAt: timePtr(run.StartedAt),
		FinishedAt: timePtr(run.FinishedAt), Attempts: run.Attempts, Worker: run.Worker}
	if run.Status == store.StatusDone {
		out.Headline = run.HeadlineJSON
		out.Report = run.ReportJSON
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// apiListRuns is GET /api/v1/runs?page=N, newest first.
func (s *Server) apiListRuns(w http.ResponseWriter, r *http.Request) error {
	page := pageParam(r)
	runs, total, err := s.store.ListRuns(r.Context(), runsPerPage, (page-1)*runsPerPage)
	if err != nil {
		return err
	}
	list := make([]apiRun, 0, len(runs))
	for _, run := range runs {
		list = append(list, apiRun{ID: run.ID, Name: run.Name, Status: run.Status, Progress: run.Progress,
			Error: run.Error, URL: "/runs/" + run.ID, CreatedAt: timePtr(run.CreatedAt),
			FinishedAt: timePtr(run.FinishedAt), Headline: run.HeadlineJSON})
	}
	writeJSON(w, http.StatusOK, map[string]any{"runs": list, "total": total, "page": page, "per_page": runsPerPage})
	return nil
}
