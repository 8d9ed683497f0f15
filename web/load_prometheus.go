package web

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"

	"github.com/scalein-planner/scalein/sim"
	"github.com/scalein-planner/scalein/sim/load"
	"github.com/scalein-planner/scalein/templates"
	"github.com/scalein-planner/scalein/web/form"
)

// Last night's load from Prometheus (sim/load): the scenario form's "Load from Prometheus" and
// POST /api/v1/load/prometheus.

// formPromAnswer reads the form's Prometheus answer: the uploaded file (prom_file) if one was
// chosen, else the pasted text (prom_answer). The form must have been parsed.
func formPromAnswer(r *http.Request) ([]byte, error) {
	if r.MultipartForm != nil {
		if file, _, err := r.FormFile("prom_file"); err == nil {
			defer file.Close()
			b, err := io.ReadAll(io.LimitReader(file, load.MaxPrometheusBytes+1))
			if err != nil {
				return nil, err
			}
			if len(bytes.TrimSpace(b)) > 0 {
				return b, nil
			}
		}
	}
	return []byte(r.PostFormValue("prom_answer")), nil
}

// formLoadPrometheus is the scenario form's "Fill the rate stages from Prometheus" (POST / with
// action=load_prometheus): the stages replace the form's rate stages, the workload becomes
// sessions and its count is raised to cover them; what was merged or changed is the notice.
// An answer that cannot be read comes back with its message (400), the pasted text kept.
func (s *Server) formLoadPrometheus(w http.ResponseWriter, r *http.Request, f *form.Form) error {
	answer, err := formPromAnswer(r)
	if err != nil {
		return err
	}
	reading, tolText := r.PostFormValue("prom_reading"), strings.TrimSpace(r.PostFormValue("prom_tolerance"))
	replicasText := strings.TrimSpace(r.PostFormValue("prom_replicas"))
	keep := func(v *templates.FormPage) {
		v.PromAnswer, v.PromReading, v.PromTolerance, v.PromReplicas = string(answer), reading, tolText, replicasText
	}
	fail := func(msg string) error {
		return s.renderFormWith(w, r, http.StatusBadRequest, f, form.NoErrors(), "The Prometheus answer was not read: "+msg, keep)
	}
	if len(bytes.TrimSpace(answer)) == 0 {
		return fail("prom_answer: paste the JSON that GET /api/v1/query_range answers, or choose a file, then press Fill again.")
	}
	tol := 0.0
	if tolText != "" {
		if tol, err = strconv.ParseFloat(tolText, 64); err != nil {
			return fail("prom_tolerance: " + strconv.Quote(tolText) + " is not a number; write a fraction such as 0.05, or leave it empty.")
		}
	}
	replicas := 0
	if replicasText != "" {
		if replicas, err = strconv.Atoi(replicasText); err != nil || replicas < 1 {
			return fail("prom_replicas: " + strconv.Quote(replicasText) + " is not a whole number of at least 1; write the replicas running when the night started, or leave it empty to keep Workers as it is.")
		}
	}
	turns, err := strconv.Atoi(strings.TrimSpace(f.Get("workload.sessions.turns")))
	if err != nil || turns < 1 {
		turns = load.TurnsOf(nil)
	}
	c, err := load.FromPrometheus(answer, load.Options{Reading: reading, Turns: turns, Tolerance: tol})
	if err != nil {
		return fail(err.Error())
	}
	f.SetRateStages(c.Stages)
	notes := append([]string{}, c.Notes...)
	count, err := strconv.Atoi(strings.TrimSpace(f.Get("workload.sessions.count")))
	if err != nil || count < 1 {
		count = 100
	}
	if n := load.SessionsCount(c, count); n != count {
		f.Set("workload.sessions.count", strconv.Itoa(n))
		notes = append(notes, "the sessions' count is now "+strconv.Itoa(n)+", so the stages end the arrivals")
	}
	if replicas > 0 {
		f.Set("fleet.workers", strconv.Itoa(replicas))
		notes = append(notes, "the night starts with "+strconv.Itoa(replicas)+" workers (Workers), the replicas at the start")
	}
	notice := "Rate stages filled from Prometheus: " + strconv.Itoa(len(c.Stages)) + " stages from " + strconv.Itoa(c.Samples) + " samples starting " + c.Start.Format("2006-01-02 15:04 MST") + "."
	if len(notes) > 0 {
		notice += " " + strings.Join(notes, "; ") + "."
	}
	return s.renderFormWith(w, r, http.StatusOK, f, form.NoErrors(), notice, func(v *templates.FormPage) { v.PromReplicas = replicasText })
}

// apiLoadPrometheus is POST /api/v1/load/prometheus: {"scenario"?: {…}, "answer": {the
// query_range JSON}, "reading"?: "requests"|"sessions", "tolerance"?: 0.05, "sum_series"?: bool,
// "replicas"?: N} → the scenario with the stages (and count, and fleet.workers = replicas: the
// replicas running when the night started), the curve and notes.
func (s *Server) apiLoadPrometheus(w http.ResponseWriter, r *http.Request) error {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return err
	}
	var req struct {
		Scenario  json.RawMessage `json:"scenario"`
		Answer    json.RawMessage `json:"answer"`
		Reading   string          `json:"reading"`
		Tolerance float64         `json:"tolerance"`
		SumSeries bool            `json:"sum_series"`
		Replicas  *int            `json:"replicas"`
	}
	if err := decodeStrict(body, &req, `{"scenario"?: {…}, "answer": {"status": "success", "data": {"resultType": "matrix", …}}, "reading"?: "requests", "tolerance"?: 0.05}`); err != nil {
		return err
	}
	if len(bytes.TrimSpace(req.Answer)) == 0 {
		return badRequest("answer: required: the JSON that GET /api/v1/query_range answers")
	}
	if len(req.Scenario) == 0 {
		req.Scenario = defaultScenarioBody
	}
	env := sim.ParseEnv{Traces: s.store}
	var out []byte
	var c *load.Curve
	if err := s.parseBody(r.Context(), int64(len(body)), func() error {
		base, err := sim.Parse(req.Scenario, env)
		if err != nil {
			return err
		}
		c, err = load.FromPrometheus(req.Answer, load.Options{Reading: req.Reading, Turns: load.TurnsOf(base), Tolerance: req.Tolerance, SumSeries: req.SumSeries})
		if err != nil {
			return badRequest("answer: " + err.Error())
		}
		var notes []string
		out, notes, err = load.ApplyJSON(req.Scenario, base, c)
		if err != nil {
			return badRequest("scenario: " + err.Error())
		}
		if req.Replicas != nil {
			if out, err = load.WithReplicas(out, *req.Replicas); err != nil {
				return badRequest(err.Error())
			}
		}
		parsed, err := sim.Parse(out, env)
		if err != nil {
			return err
		}
		if w := sim.FleetOutsideBounds(parsed); w != "" {
			notes = append(notes, w)
		}
		c.Notes = append(c.Notes, notes...)
		return nil
	}); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"scenario": json.RawMessage(out), "load": c})
	return nil
}

// defaultScenarioBody is the scenario the transform routes (POST /api/v1/load/prometheus,
// /api/v1/hpa/import) start from when the request has none: the default scenario, whose
// workload must still be named.
var defaultScenarioBody = json.RawMessage(`{"workload": {"type": "sessions", "sessions": {}}}`)
