package web

import (
	"bytes"
	"context"
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
	Attempts int    `json:"attempts"`
	Worker   string `json:"worker,omitempty"`
	// CreatedBy is who created the run, on a server with users (auth.go). Single-run answers only.
	CreatedBy string          `json:"created_by,omitempty"`
	Headline  json.RawMessage `json:"headline,omitempty"`
	Report    json.RawMessage `json:"report,omitempty"`
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

// readRunScenario parses and validates a JSON scenario submitted as a run (traces by name from
// the store): a full queue refuses it (ErrQueueFull, 429) before its memory estimate is computed
// (issue 19 M8), then it meets the per-run memory budget.
func (s *Server) readRunScenario(ctx context.Context, data []byte) (*sim.Scenario, error) {
	sc, err := s.parseScenario(data)
	if err != nil {
		return nil, err
	}
	if err := s.runs.QueueRoom(ctx, sc); err != nil {
		return nil, err
	}
	if err := s.runs.Admit(sc); err != nil {
		return nil, err
	}
	return sc, nil
}

// parseScenario parses and validates a JSON scenario: a *sim.ValidationError lists the field
// errors; anything else is a 400 naming what failed.
func (s *Server) parseScenario(data []byte) (*sim.Scenario, error) {
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
	var sc *sim.Scenario
	if err := s.parseBody(r.Context(), int64(len(body)), func() (err error) {
		sc, err = s.readRunScenario(r.Context(), body)
		return err
	}); err != nil {
		return err
	}
	subs, err := s.runs.Submit(r.Context(), sc)
	if err != nil {
		return err
	}
	writeJSON(w, createdStatus(subs), apiCreated{ID: subs[0].Run.ID, Status: subs[0].Run.Status, URL: "/runs/" + subs[0].Run.ID})
	return nil
}

// createdStatus is 202 when a submission queued a run, and 200 when every scenario already had
// one.
func createdStatus(subs []store.Submitted) int {
	for _, sub := range subs {
		if sub.Created {
			return http.StatusAccepted
		}
	}
	return http.StatusOK
}

// pairBodyHelp describes the body of POST /api/v1/pairs.
const pairBodyHelp = `the body must be one JSON object {"kind": "hints", "guard" or "autoscaler", "scenario": {…}, and for "autoscaler" optionally "baseline_workers": N}`

// pairBody is the body of POST /api/v1/pairs.
type pairBody struct {
	Kind     string
	Scenario json.RawMessage
	// BaselineWorkers is the fixed fleet of the autoscaler pair; 0 is max_workers.
	BaselineWorkers int
}

// decodePairBody reads {"kind": …, "scenario": …, "baseline_workers"?: …} as strictly as a
// scenario is read: only these member names (in this case), each once, and nothing after the
// object.
func decodePairBody(body []byte) (out pairBody, err error) {
	dec := json.NewDecoder(bytes.NewReader(body))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return out, badRequest(pairBodyHelp)
	}
	seen := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return out, badRequest(pairBodyHelp + ": " + err.Error())
		}
		key, _ := tok.(string)
		if seen[key] {
			return out, badRequest(fmt.Sprintf("%q appears twice in the body; keep one", key))
		}
		seen[key] = true
		switch key {
		case "kind":
			if err := dec.Decode(&out.Kind); err != nil {
				return out, badRequest(`kind must be the string "hints", "guard" or "autoscaler"`)
			}
		case "scenario":
			if err := dec.Decode(&out.Scenario); err != nil {
				return out, badRequest(pairBodyHelp + ": " + err.Error())
			}
		case "baseline_workers":
			if err := dec.Decode(&out.BaselineWorkers); err != nil {
				return out, badRequest("baseline_workers must be a whole number of workers: the fixed fleet the autoscaler is compared with (leave it out for the autoscaler's max_workers)")
			}
		default:
			return out, badRequest(fmt.Sprintf("unknown member %q; %s (names are case-sensitive)", key, pairBodyHelp))
		}
	}
	if _, err := dec.Token(); err != nil {
		return out, badRequest(pairBodyHelp + ": " + err.Error())
	}
	if _, err := dec.Token(); err != io.EOF {
		return out, badRequest("unexpected data after the end of the JSON object; " + pairBodyHelp)
	}
	if out.Scenario == nil {
		return out, badRequest(`"scenario" is required; ` + pairBodyHelp)
	}
	if out.BaselineWorkers != 0 && out.Kind != sim.CounterpartAutoscaler {
		return out, badRequest(`baseline_workers is the fixed fleet of the "autoscaler" pair; leave it out for "` + out.Kind + `"`)
	}
	if msg := sim.CheckBaselineWorkers("baseline_workers", out.BaselineWorkers); msg != "" {
		return out, badRequest(msg)
	}
	return out, nil
}

// apiCreatePair is POST /api/v1/pairs with {"kind": "hints"|"guard"|"autoscaler", "scenario": {…}}: 202 when
// it queued a run, 200 when both runs already existed.
func (s *Server) apiCreatePair(w http.ResponseWriter, r *http.Request) error {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return err
	}
	var sc *sim.Scenario
	var pb pairBody
	if err := s.parseBody(r.Context(), int64(len(body)), func() error {
		pb, err = decodePairBody(body)
		if err != nil {
			return err
		}
		if !isPairKind(pb.Kind) {
			return badRequest(fmt.Sprintf("kind must be %s (got %q)", pairKinds, pb.Kind))
		}
		sc, err = s.readRunScenario(r.Context(), pb.Scenario)
		return err
	}); err != nil {
		return err
	}
	a, b, err := pairOrder(sc, pb.Kind, pb.BaselineWorkers)
	if err != nil {
		return err
	}
	subs, err := s.runs.Submit(r.Context(), a, b)
	if err != nil {
		return err
	}
	writeJSON(w, createdStatus(subs), map[string]any{
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
	out.CreatedBy = s.createdBy(r.Context(), store.OwnedRun, run.ID)
	if run.Status != store.StatusDone {
		writeJSON(w, http.StatusOK, out)
		return nil
	}
	out.Headline = run.HeadlineJSON
	report, err := s.store.OpenReport(r.Context(), run.ID)
	if err != nil {
		return err
	}
	return s.writeRunWithReport(w, r, out, report)
}

// apiListRuns is GET /api/v1/runs?page=N&per_page=M, newest first.
func (s *Server) apiListRuns(w http.ResponseWriter, r *http.Request) error {
	page := pageParam(r)
	perPage, err := perPageParam(r)
	if err != nil {
		return err
	}
	runs, total, err := s.store.ListRuns(r.Context(), perPage, (page-1)*perPage)
	if err != nil {
		return err
	}
	list := make([]apiRun, 0, len(runs))
	for _, run := range runs {
		list = append(list, apiRun{ID: run.ID, Name: run.Name, Status: run.Status, Progress: run.Progress,
			Error: run.Error, URL: "/runs/" + run.ID, CreatedAt: timePtr(run.CreatedAt),
			FinishedAt: timePtr(run.FinishedAt), Headline: run.HeadlineJSON, Attempts: run.Attempts, Worker: run.Worker})
	}
	writeJSON(w, http.StatusOK, map[string]any{"runs": list, "total": total, "page": page, "per_page": perPage})
	return nil
}
