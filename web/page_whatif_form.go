package web

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"

	"github.com/scalein-planner/scalein/runs"
	"github.com/scalein-planner/scalein/sim"
	"github.com/scalein-planner/scalein/templates"
	"github.com/scalein-planner/scalein/web/form"
)

// whatIfFormPage is the sweep or plan form, prefilled from a run (?from=ID), a preset (?preset=KEY),
// or the scenario form posted to it.
func (s *Server) whatIfFormPage(r *http.Request, kind string) (templates.WhatIfNewPage, error) {
	title := "Sweep a field"
	if kind == "plan" {
		title = "Plan a scale-in"
	}
	p := templates.WhatIfNewPage{Page: s.pageInfo(title, "new"), Kind: kind, Remove: "1", MaxKilled: "0",
		MaxRuns: strconv.Itoa(s.runs.MaxPlanRuns())}
	form.DefaultSweep().Fill(&p, form.JobErrors{})
	var sc *sim.Scenario
	q := r.URL.Query()
	fromPlan := false
	switch {
	case r.Method == http.MethodPost:
		// The scenario form's fields, posted here by its "Sweep a field" or "Plan a scale-in".
		if err := r.ParseForm(); err != nil {
			return p, badRequest("the form could not be read: " + err.Error())
		}
		s.originInto(r.Context(), &p, r.PostForm.Get("origin_key"))
		doc, errs := form.FromValues(r.PostForm).JSON()
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
	case kind == "plan" && q.Get("plan") != "":
		var err error
		if sc, err = s.fillFromPlan(r.Context(), &p, q.Get("plan")); err != nil {
			return p, err
		}
		fromPlan = true
	case q.Get("from") != "":
		id := q.Get("from")
		if !idPattern.MatchString(id) {
			return p, notFound("no run has this id; run ids are 16 characters of a–z and 2–7")
		}
		run, err := s.store.GetRun(r.Context(), id)
		if err != nil {
			return p, err
		}
		p.Scenario, p.Notice = string(run.ScenarioJSON), "The scenario of run "+id+" ("+run.Name+")."
		s.originInto(r.Context(), &p, q.Get("origin"))
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
		p.Scenario, p.Notice = string(pr.JSON), "The preset “"+pr.Title+"” is loaded below; paste or edit any scenario."
		sc, _ = sim.Parse(pr.JSON, sim.ParseEnv{Traces: s.store})
	}
	if sc != nil && sc.Autoscaler != nil {
		p.HasAutoscaler = true
		if !fromPlan {
			p.Goal = form.GoalTune
		}
	}
	p.HasSLO = sc != nil && sc.SLO != nil
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
	if kind == "plan" && r.Method == http.MethodGet {
		applyPlanQuery(&p, q)
	}
	if kind == "plan" {
		planFormByGoal(&p, sc)
	}
	return p, nil
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

// jobForm is the form of one kind of job (form.Sweep, form.Plan): the request it asks for,
// the run service's refusal placed on it, and the page it fills.
type jobForm[R any] interface {
	Request() (R, form.JobErrors)
	Refused(message string, fields []sim.FieldError) form.JobErrors
	Fill(p *templates.WhatIfNewPage, errs form.JobErrors)
}

// createFromForm is POST /sweeps and POST /plans: the form read into the run service's
// request, then 303 to the job, or the form again (400) with every problem beside its field.
// A refusal that is not the user's to fix (not a 400) goes to the error page.
func createFromForm[R any](s *Server, w http.ResponseWriter, r *http.Request, kind string,
	read func(url.Values) jobForm[R], create func(context.Context, R) (runs.Created, error)) error {
	if err := r.ParseForm(); err != nil {
		return badRequest("the form could not be read: " + err.Error())
	}
	f := read(r.PostForm)
	req, errs := f.Request()
	if errs.Count() == 0 {
		created, err := create(r.Context(), req)
		if err == nil {
			http.Redirect(w, r, "/"+kind+"s/"+created.ID, http.StatusSeeOther)
			return nil
		}
		p := problemOf(err)
		if p.Status != http.StatusBadRequest {
			return err
		}
		errs = f.Refused(p.Message, p.Fields)
	}
	p, _ := s.whatIfFormPage(&http.Request{Method: http.MethodGet, URL: r.URL}, kind)
	p.Notice = ""
	f.Fill(&p, errs)
	if kind == "plan" {
		sc, _ := sim.Parse(json.RawMessage(p.Scenario), sim.ParseEnv{Traces: s.store})
		planFormByGoal(&p, sc)
	}
	return s.render(w, r, http.StatusBadRequest, templates.WhatIfNewView(p))
}

// planFormByGoal titles the plan form for its goal and lists what a tune plan on the scenario
// searches.
func planFormByGoal(p *templates.WhatIfNewPage, sc *sim.Scenario) {
	p.Searched = tuneSearched(sc)
	p.Page.Title = "Plan a scale-in"
	if p.Goal == form.GoalTune {
		p.Page.Title = "Tune the autoscaler"
	}
}
