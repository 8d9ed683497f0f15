package web

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"strings"

	"github.com/go-chi/chi/v5"
	"github.com/scalein-planner/scalein/sim"
	"github.com/scalein-planner/scalein/sim/whatif"
	"github.com/scalein-planner/scalein/store"
	"github.com/scalein-planner/scalein/templates"
)

// sweepTableKeys are the headline figures the sweep table shows.
var sweepTableKeys = []string{"latest_removal_ms", "total_pin_wait_ms", "ttft_p99_ms", "requests_killed", "worker_seconds"}

// maxFormAxes is how many axis rows the sweep form offers (the API's limit).
const maxFormAxes = whatif.MaxAxes

// maxRangeValues bounds the values a start/stop/step range expands to.
const maxRangeValues = 1000

// handleSweep is GET /sweeps/{id}.
func (s *Server) handleSweep(w http.ResponseWriter, r *http.Request) error {
	sw, err := s.loadSweep(r.Context(), chi.URLParam(r, "id"))
	if err != nil {
		return err
	}
	labels := map[string]string{}
	var figures []templates.Option
	for _, f := range sim.Headline(nil) {
		labels[f.Key] = f.Label + " (" + f.Unit + ")"
		figures = append(figures, templates.Option{Value: f.Key, Label: labels[f.Key], Selected: f.Key == "latest_removal_ms"})
	}
	p := templates.SweepPage{Page: s.pageInfo("Sweep: "+sw.Name, "runs"), ID: sw.ID, Name: sw.Name, Status: sw.Status,
		Done: sw.Done, Total: len(sw.Points), Final: isFinal(sw.Status), APIURL: "/api/v1/sweeps/" + sw.ID, CSVURL: sw.CSVURL,
		Figures: figures, ColumnKeys: strings.Join(sweepTableKeys, ",")}
	p.Page.Charts = true
	if !p.Final {
		p.Page.RefreshSeconds = 3
	}
	for _, k := range sweepTableKeys {
		p.Columns = append(p.Columns, labels[k])
	}
	for i, ax := range sw.Axes {
		vals := make([]string, len(ax.Values))
		numeric := true
		for j, v := range ax.Values {
			vals[j] = whatif.ValueText(v)
			if _, ok := v.(json.Number); !ok {
				numeric = false
			}
		}
		_ = i
		p.Axes = append(p.Axes, templates.SweepAxisView{Path: ax.Path, Numeric: numeric, Values: strings.Join(vals, ", ")})
	}
	for _, pt := range sw.Points {
		row := templates.SweepPointRow{RunID: pt.RunID, Status: pt.Status}
		for _, v := range pt.Values {
			row.Values = append(row.Values, whatif.ValueText(v))
		}
		var figs []sim.Figure
		if len(pt.Headline) > 0 {
			_ = json.Unmarshal(pt.Headline, &figs)
		}
		for _, k := range sweepTableKeys {
			row.Figures = append(row.Figures, withUnit(figureValue(figs, k), ""))
		}
		p.Rows = append(p.Rows, row)
	}
	return s.render(w, r, http.StatusOK, templates.SweepView(p))
}

func figureValue(figs []sim.Figure, key string) *float64 {
	for _, f := range figs {
		if f.Key == key {
			return f.Value
		}
	}
	return nil
}

// handleCancelSweep is POST /sweeps/{id}/cancel.
func (s *Server) handleCancelSweep(w http.ResponseWriter, r *http.Request) error {
	id := chi.URLParam(r, "id")
	if err := s.cancelSweep(r.Context(), id); err != nil {
		return err
	}
	http.Redirect(w, r, "/sweeps/"+id, http.StatusSeeOther)
	return nil
}

// newPage is the sweep or plan form, prefilled from a run (?from=ID), a preset (?preset=KEY),
// or the scenario form posted to it.
func (s *Server) newPage(r *http.Request, kind string) (templates.WhatIfNewPage, error) {
	title := "Sweep a field"
	if kind == "plan" {
		title = "Plan a scale-in"
	}
	p := templates.WhatIfNewPage{Page: s.pageInfo(title, "new"), Kind: kind, Remove: "1", MaxKilled: "0",
		MaxRuns: strconv.Itoa(s.cfg.MaxPlanRuns)}
	p.AxisPaths, p.AxisLists = make([]string, maxFormAxes), make([]string, maxFormAxes)
	p.AxisStarts, p.AxisStops, p.AxisSteps = make([]string, maxFormAxes), make([]string, maxFormAxes), make([]string, maxFormAxes)
	p.AxisPaths[0], p.AxisLists[0] = "kvcr.bandwidth_gbps", "5, 10, 20, 40"
	p.AxisPaths[1], p.AxisLists[1] = "kvcr.reject_draining_sources", "true, false"
	var sc *sim.Scenario
	q := r.URL.Query()
	switch {
	case r.Method == http.MethodPost:
		// The scenario form's fields, posted here by its "Sweep a field" or "Plan a scale-in".
		if err := r.ParseForm(); err != nil {
			return p, badRequest("the form could not be read: " + err.Error())
		}
		doc, errs, _ := formFromValues(r.PostForm).toJSON()
		for _, fe := range errs {
			p.Errors = append(p.Errors, fe.String())
		}
		p.Scenario = string(doc)
		if parsed, err := sim.Parse(doc, sim.ParseEnv{Traces: s.store}); err == nil {
			sc = parsed
		} else {
			var ve *sim.ValidationError
			if errors.As(err, &ve) {
				for _, fe := range ve.Errors {
					p.Errors = append(p.Errors, fe.String())
				}
			}
		}
	case q.Get("from") != "":
		id := q.Get("from")
		if !runIDPattern.MatchString(id) {
			return p, notFound("no run has this id; run ids are 16 characters of a–z and 2–7")
		}
		run, err := s.store.GetRun(r.Context(), id)
		if err != nil {
			return p, err
		}
		p.Scenario, p.Notice = string(run.ScenarioJSON), "The scenario of run "+id+" ("+run.Name+")."
		sc, _ = sim.Parse(run.ScenarioJSON, sim.ParseEnv{Traces: s.store})
	default:
		key := q.Get("preset")
		if key == "" {
			key = "mooncake-16to12"
		}
		pr, ok := findPreset(key)
		if !ok {
			return p, notFound(fmt.Sprintf("there is no preset %q; pick one of the presets listed on the form", key))
		}
		p.Scenario, p.Notice = string(pr.JSON), "The preset "+pr.Title+"; paste or edit any scenario."
		sc, _ = sim.Parse(pr.JSON, sim.ParseEnv{Traces: s.store})
	}
	if sc != nil && len(sc.ScaleIn) > 0 {
		a := sc.ScaleIn[0]
		p.StartMS = strconv.FormatFloat(a.AtMS, 'f', -1, 64)
		n := a.Count + len(a.Workers)
		for _, b := range sc.ScaleIn[1:] {
			n += b.Count + len(b.Workers)
		}
		p.Remove = strconv.Itoa(max(n, 1))
	} else {
		p.StartMS = "0"
	}
	return p, nil
}

// handleNewSweep is GET and POST /sweeps/new.
func (s *Server) handleNewSweep(w http.ResponseWriter, r *http.Request) error {
	p, err := s.newPage(r, "sweep")
	if err != nil {
		return err
	}
	return s.render(w, r, http.StatusOK, templates.WhatIfNewView(p))
}

// handleNewPlan is GET and POST /plans/new.
func (s *Server) handleNewPlan(w http.ResponseWriter, r *http.Request) error {
	p, err := s.newPage(r, "plan")
	if err != nil {
		return err
	}
	return s.render(w, r, http.StatusOK, templates.WhatIfNewView(p))
}

// formAxes reads the sweep form's axis rows: a list of values, or start, stop and step.
func formAxes(r *http.Request) ([]whatif.Axis, []string) {
	var axes []whatif.Axis
	var errs []string
	for i := range maxFormAxes {
		name := "axis" + strconv.Itoa(i)
		path := strings.TrimSpace(r.PostForm.Get(name + ".path"))
		list := strings.TrimSpace(r.PostForm.Get(name + ".values"))
		start, stop, step := r.PostForm.Get(name+".start"), r.PostForm.Get(name+".stop"), r.PostForm.Get(name+".step")
		if path == "" {
			continue
		}
		ax := whatif.Axis{Path: path}
		switch {
		case list != "":
			for _, tok := range strings.Split(list, ",") {
				ax.Values = append(ax.Values, formValue(strings.TrimSpace(tok)))
			}
		case start != "" || stop != "" || step != "":
			vals, err := valueRange(start, stop, step)
			if err != "" {
				errs = append(errs, fmt.Sprintf("field %d (%s): %s", i+1, path, err))
				continue
			}
			ax.Values = vals
		default:
			errs = append(errs, fmt.Sprintf("field %d (%s): give a list of values, or a start, stop and step", i+1, path))
			continue
		}
		axes = append(axes, ax)
	}
	return axes, errs
}

// formValue reads a number, true/false or a quoted string; anything else is taken as a choice.
func formValue(tok string) any {
	dec := json.NewDecoder(strings.NewReader(tok))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err == nil && !dec.More() {
		switch v.(type) {
		case json.Number, bool, string:
			return v
		}
	}
	return tok
}

// valueRange expands start, stop, step into numbers (stop included when the steps land on it).
// Every bound is checked before the loop: the numbers must be finite, and each step must move
// the value (at 1e300 a step of 1 does not), so the loop ends after at most maxRangeValues.
func valueRange(start, stop, step string) ([]any, string) {
	a, err1 := strconv.ParseFloat(strings.TrimSpace(start), 64)
	b, err2 := strconv.ParseFloat(strings.TrimSpace(stop), 64)
	d, err3 := strconv.ParseFloat(strings.TrimSpace(step), 64)
	finite := func(v float64) bool { return !math.IsInf(v, 0) && !math.IsNaN(v) }
	switch {
	case err1 != nil && !errors.Is(err1, strconv.ErrRange), err2 != nil && !errors.Is(err2, strconv.ErrRange),
		err3 != nil && !errors.Is(err3, strconv.ErrRange):
		return nil, "start, stop and step must all be numbers"
	case !finite(a) || !finite(b) || !finite(d):
		return nil, "start, stop and step must be finite numbers (not NaN, Inf or beyond ±1.8e308)"
	case d <= 0:
		return nil, "step must be a positive number"
	case b < a:
		return nil, "stop must not be below start"
	case (b-a)/d+1 > maxRangeValues:
		return nil, fmt.Sprintf("the range gives more than %d values; use a larger step", maxRangeValues)
	case a != b && (a+d == a || b-d == b):
		return nil, "the step is too small for numbers this large: each step must change the value; use a larger step"
	}
	var out []any
	for k := 0; k < maxRangeValues; k++ {
		v := a + float64(k)*d
		if v > b+d*1e-9 {
			break
		}
		if r := math.Round(v*1e9) / 1e9; finite(r) { // 0.1 + 0.2 is 0.3 here
			v = r
		}
		out = append(out, json.Number(strconv.FormatFloat(v, 'f', -1, 64)))
		if a == b {
			break
		}
	}
	return out, ""
}

// handleCreateSweep is POST /sweeps (the sweep form): it starts the sweep and shows it, or
// shows the form again with every problem.
func (s *Server) handleCreateSweep(w http.ResponseWriter, r *http.Request) error {
	if err := r.ParseForm(); err != nil {
		return badRequest("the form could not be read: " + err.Error())
	}
	axes, errs := formAxes(r)
	scenario := r.PostForm.Get("scenario")
	if len(errs) == 0 {
		id, _, _, err := s.createSweep(r.Context(), sweepRequest{Scenario: json.RawMessage(scenario), Axes: axes})
		if err == nil {
			http.Redirect(w, r, "/sweeps/"+id, http.StatusSeeOther)
			return nil
		}
		msgs, ok := problemMessages(err)
		if !ok {
			return err
		}
		errs = msgs
	}
	p, _ := s.newPage(&http.Request{Method: http.MethodGet, URL: r.URL}, "sweep")
	p.Errors, p.Scenario, p.Notice = errs, scenario, ""
	for i := range maxFormAxes {
		name := "axis" + strconv.Itoa(i)
		p.AxisPaths[i], p.AxisLists[i] = r.PostForm.Get(name+".path"), r.PostForm.Get(name+".values")
		p.AxisStarts[i], p.AxisStops[i], p.AxisSteps[i] = r.PostForm.Get(name+".start"), r.PostForm.Get(name+".stop"), r.PostForm.Get(name+".step")
	}
	return s.render(w, r, http.StatusBadRequest, templates.WhatIfNewView(p))
}

// problemMessages turns a bad-request error into lines for the form; ok is false for errors that
// are not the user's to fix (they go to the error page).
func problemMessages(err error) ([]string, bool) {
	p := problemOf(err)
	if p.Status != http.StatusBadRequest {
		return nil, false
	}
	if len(p.Fields) == 0 {
		return []string{p.Message}, true
	}
	var out []string
	for _, fe := range p.Fields {
		out = append(out, fe.String())
	}
	return out, true
}

// handleCreatePlan is POST /plans (the plan form).
func (s *Server) handleCreatePlan(w http.ResponseWriter, r *http.Request) error {
	if err := r.ParseForm(); err != nil {
		return badRequest("the form could not be read: " + err.Error())
	}
	f := r.PostForm
	var errs []string
	req := planRequest{Scenario: json.RawMessage(f.Get("scenario"))}
	intField := func(name, label string, dst *int) {
		v, err := strconv.Atoi(strings.TrimSpace(f.Get(name)))
		if err != nil {
			errs = append(errs, label+" must be a whole number")
			return
		}
		*dst = v
	}
	intField("remove", "Remove how many workers", &req.Goal.Remove)
	if v := strings.TrimSpace(f.Get("max_runs")); v != "" {
		intField("max_runs", "Runs at most", &req.Search.MaxRuns)
	}
	if v, err := strconv.ParseFloat(strings.TrimSpace(f.Get("start_ms")), 64); err == nil {
		req.Goal.StartMS = v
	} else {
		errs = append(errs, "Not before (ms) must be a number")
	}
	if t := strings.TrimSpace(f.Get("ttft_p99_ms")); t != "" {
		v, err := strconv.ParseFloat(t, 64)
		if err != nil {
			errs = append(errs, "TTFT p99 at most must be a number of ms, or empty for no limit")
		} else {
			req.Constraints.TTFTP99MS = &v
		}
	}
	if k := strings.TrimSpace(f.Get("max_killed")); k != "" {
		v, err := strconv.ParseInt(k, 10, 64)
		if err != nil {
			errs = append(errs, "Requests killed at most must be a whole number")
		} else {
			req.Constraints.MaxKilled = &v
		}
	}
	if len(errs) == 0 {
		plan, _, err := s.createPlan(r.Context(), req)
		if err == nil {
			http.Redirect(w, r, "/plans/"+plan.ID, http.StatusSeeOther)
			return nil
		}
		msgs, ok := problemMessages(err)
		if !ok {
			return err
		}
		errs = msgs
	}
	p, _ := s.newPage(&http.Request{Method: http.MethodGet, URL: r.URL}, "plan")
	p.Errors, p.Scenario, p.Notice = errs, f.Get("scenario"), ""
	p.Remove, p.StartMS, p.TTFTP99MS, p.MaxKilled, p.MaxRuns = f.Get("remove"), f.Get("start_ms"), f.Get("ttft_p99_ms"), f.Get("max_killed"), f.Get("max_runs")
	return s.render(w, r, http.StatusBadRequest, templates.WhatIfNewView(p))
}

// handlePlan is GET /plans/{id}.
func (s *Server) handlePlan(w http.ResponseWriter, r *http.Request) error {
	plan, err := s.loadPlan(r.Context(), chi.URLParam(r, "id"))
	if err != nil {
		return err
	}
	p := templates.PlanPage{Page: s.pageInfo("Plan: "+plan.Name, "runs"), ID: plan.ID, Name: plan.Name, Status: plan.Status,
		Error: plan.Error, Final: isFinal(plan.Status), APIURL: "/api/v1/plans/" + plan.ID, Reason: plan.Reason,
		Notes: plan.Notes, Runs: plan.Runs, Reused: plan.Reused}
	p.Goal = fmt.Sprintf("remove %s, none before %s", whatif.Workers(plan.Goal.Remove), whatif.FormatMS(plan.Goal.StartMS))
	var limits []string
	if t := plan.Constraints.TTFTP99MS; t != nil {
		limits = append(limits, "TTFT p99 ≤ "+whatif.FormatMS(*t))
	}
	if k := plan.Constraints.MaxKilled; k != nil {
		limits = append(limits, fmt.Sprintf("at most %d killed", *k))
	}
	p.Constraints = strings.Join(limits, ", ")
	if !p.Final {
		p.Page.RefreshSeconds = 3
	}
	for _, sub := range plan.Submitted {
		p.Submitted = append(p.Submitted, templates.RunLink{ID: sub.RunID, Name: sub.Label, Status: sub.Status})
	}
	if rec := plan.Recommended; rec != nil {
		p.Recommendation, p.RecommendedID = rec.Reason, rec.RunID
		p.Schedule = scheduleTable(rec.ScaleIn)
		for _, c := range plan.Candidates {
			if c.RunID != rec.RunID && c.Status == store.StatusDone {
				p.RunnerUpID = c.RunID
				break
			}
		}
	}
	for _, c := range plan.Candidates {
		p.Candidates = append(p.Candidates, templates.PlanCandidateRow{Rank: c.Rank, Label: c.Label, RunID: c.RunID,
			Status: c.Status, Feasible: c.Feasible, Pareto: c.Pareto,
			Latest:     withUnit(figureValue(c.Headline, "latest_removal_ms"), "ms"),
			TTFTP99:    withUnit(figureValue(c.Headline, "ttft_p99_ms"), "ms"),
			Killed:     withUnit(figureValue(c.Headline, "requests_killed"), ""),
			WorkerSecs: withUnit(figureValue(c.Headline, "worker_seconds"), ""),
			Violations: strings.Join(c.Violations, "; ")})
	}
	if p.Final && len(plan.Candidates) > 0 {
		p.Page.Charts = true
		p.Scatter = planScatter(plan.Candidates)
	}
	return s.render(w, r, http.StatusOK, templates.PlanView(p))
}

// scheduleTable lists a schedule's actions.
func scheduleTable(acts []sim.ScaleInAction) templates.DataTable {
	t := templates.DataTable{Caption: "The recommended schedule",
		Columns: []templates.Column{{Label: "At (ms)", Num: true}, {Label: "Drains"}, {Label: "Grace (ms)", Num: true}}}
	for _, a := range acts {
		who := idList(a.Workers)
		if len(a.Workers) == 0 {
			who = fmt.Sprintf("%d by %s", a.Count, a.Select)
		}
		grace := "none"
		if a.GraceMS != nil {
			grace = formatNumber(*a.GraceMS)
		}
		t.Rows = append(t.Rows, []string{formatNumber(a.AtMS), who, grace})
	}
	return t
}

// handleCancelPlan is POST /plans/{id}/cancel.
func (s *Server) handleCancelPlan(w http.ResponseWriter, r *http.Request) error {
	id := chi.URLParam(r, "id")
	if err := s.cancelPlan(r.Context(), id); err != nil {
		return err
	}
	http.Redirect(w, r, "/plans/"+id, http.StatusSeeOther)
	return nil
}
