package web

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"

	"github.com/scalein-planner/scalein/runs"
	"github.com/scalein-planner/scalein/sim"
	"github.com/scalein-planner/scalein/sim/whatif"
	"github.com/scalein-planner/scalein/templates"
	"github.com/scalein-planner/scalein/web/form"
)

// jobScenario is the scenario a sweep or plan form starts from: the scenario form posted to it
// (POST), a run's (?from=ID), or a preset's (?preset=KEY, by default the first). It fills the
// shared part of the page and returns the scenario when it parses.
func (s *Server) jobScenario(r *http.Request, p *templates.JobForm) (*sim.Scenario, error) {
	q := r.URL.Query()
	switch {
	case r.Method == http.MethodPost:
		// The scenario form's fields, posted here by its "Sweep a field" or "Plan a scale-in".
		if err := r.ParseForm(); err != nil {
			return nil, badRequest("the form could not be read: " + err.Error())
		}
		doc, errs := form.FromValues(r.PostForm).JSON()
		for _, fe := range errs {
			p.Errors = append(p.Errors, fe.String())
		}
		p.Scenario = string(doc)
		parsed, err := sim.Parse(doc, sim.ParseEnv{Traces: s.store})
		if err == nil {
			return parsed, nil
		}
		if ve, ok := errors.AsType[*sim.ValidationError](err); ok {
			for _, fe := range ve.Errors {
				p.Errors = append(p.Errors, fe.String())
			}
		}
		return nil, nil
	case q.Get("from") != "":
		id := q.Get("from")
		if !idPattern.MatchString(id) {
			return nil, notFound("no run has this id; run ids are 16 characters of a–z and 2–7")
		}
		run, err := s.store.GetRun(r.Context(), id)
		if err != nil {
			return nil, err
		}
		p.Scenario, p.Notice = string(run.ScenarioJSON), "The scenario of run "+id+" ("+run.Name+")."
		sc, _ := sim.Parse(run.ScenarioJSON, sim.ParseEnv{Traces: s.store})
		return sc, nil
	}
	key := q.Get("preset")
	if key == "" {
		key = "mooncake-16to12"
	}
	pr, ok := findPreset(key)
	if !ok {
		return nil, notFound(fmt.Sprintf("there is no preset %q; pick one of the presets listed on the form", key))
	}
	p.Scenario, p.Notice = string(pr.JSON), "The preset “"+pr.Title+"” is loaded below; paste or edit any scenario."
	sc, _ := sim.Parse(pr.JSON, sim.ParseEnv{Traces: s.store})
	return sc, nil
}

// sweepFormPage is the sweep form, prefilled from a run, a preset, or the scenario form posted
// to it.
func (s *Server) sweepFormPage(r *http.Request) (templates.SweepNewPage, error) {
	p := templates.SweepNewPage{JobForm: templates.JobForm{Page: s.pageInfo("Sweep a field", "new")}}
	form.DefaultSweep().Fill(&p, form.JobErrors{})
	_, err := s.jobScenario(r, &p.JobForm)
	return p, err
}

// planFormPage is the plan form, prefilled from a run, a preset, an earlier plan (?plan=ID,
// with the form's fields in the query overriding), or the scenario form posted to it. A scenario
// with an autoscaler opens on the tune goal.
func (s *Server) planFormPage(r *http.Request) (templates.PlanNewPage, error) {
	p := templates.PlanNewPage{JobForm: templates.JobForm{Page: s.pageInfo("Plan a scale-in", "new")}, Remove: "1", MaxKilled: "0",
		MaxRuns: strconv.Itoa(s.runs.MaxPlanRuns())}
	var (
		sc  *sim.Scenario
		err error
	)
	fromPlan := r.Method == http.MethodGet && r.URL.Query().Get("plan") != ""
	if fromPlan {
		sc, err = s.fillFromPlan(r.Context(), &p, r.URL.Query().Get("plan"))
	} else {
		sc, err = s.jobScenario(r, &p.JobForm)
		if err == nil {
			// The import the scenario came from, posted by the scenario form or named by the
			// run page's link, so the plan's download writes into the user's own file.
			if r.Method == http.MethodPost {
				s.originInto(r.Context(), &p, r.PostForm.Get("origin_key"))
			} else {
				s.originInto(r.Context(), &p, r.URL.Query().Get("origin"))
			}
		}
	}
	if err != nil {
		return p, err
	}
	if sc != nil && sc.Autoscaler != nil && !fromPlan {
		p.Goal = form.GoalTune
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
	if r.Method == http.MethodGet {
		applyPlanQuery(&p, r.URL.Query())
	}
	planFormByGoal(&p, sc)
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

// jobRequest is the form of one kind of job (form.Sweep, form.Plan): the request it asks for,
// and the run service's refusal placed on it.
type jobRequest[R any] interface {
	Request() (R, form.JobErrors)
	Refused(message string, fields []sim.FieldError) form.JobErrors
}

// submitJob is POST /sweeps and POST /plans: the form's request given to the run service,
// then 303 to the job (done). Otherwise errs holds every problem, each beside its field, for
// the caller to show the form again (400). A refusal that is not the user's to fix (not a 400)
// is err, for the error page.
func submitJob[R any](w http.ResponseWriter, r *http.Request, kind string, f jobRequest[R],
	create func(context.Context, R) (runs.Created, error)) (done bool, errs form.JobErrors, err error) {
	req, errs := f.Request()
	if errs.Count() > 0 {
		return false, errs, nil
	}
	created, err := create(r.Context(), req)
	if err == nil {
		http.Redirect(w, r, "/"+kind+"s/"+created.ID, http.StatusSeeOther)
		return true, errs, nil
	}
	p := problemOf(err)
	if p.Status != http.StatusBadRequest {
		return false, errs, err
	}
	return false, f.Refused(p.Message, p.Fields), nil
}

// postedForm reads a posted form's fields.
func postedForm(r *http.Request) (url.Values, error) {
	if err := r.ParseForm(); err != nil {
		return nil, badRequest("the form could not be read: " + err.Error())
	}
	return r.PostForm, nil
}

// planFormByGoal fits the plan form to its scenario and goal: the goals the scenario allows
// (tune and diagnose with an autoscaler, capacity and diagnose with an slo), the title, and
// what a tune plan on the scenario searches.
func planFormByGoal(p *templates.PlanNewPage, sc *sim.Scenario) {
	if sc != nil {
		p.HasAutoscaler = p.HasAutoscaler || sc.Autoscaler != nil || sc.PoolAutoscalers != nil
		p.HasPools = p.HasPools || sc.Disaggregation != nil
		if p.HasPools && p.Role == "" {
			p.Role = sim.RolePrefill
		}
		p.HasSLO = p.HasSLO || sc.SLO != nil
		if sc.Autoscaler != nil {
			p.MaxWorkers = sc.Autoscaler.MaxWorkers
		}
	}
	p.Searched = tuneSearched(sc)
	switch form.GoalKind(p.Goal) {
	case whatif.KindTune:
		p.Page.Title = "Tune the autoscaler"
	case whatif.KindCapacity:
		p.Page.Title = "One worker's capacity"
	case whatif.KindDiagnose:
		p.Page.Title = "How far from ideal"
	case whatif.KindDrain:
		p.Page.Title = "Plan a scale-in"
	}
}
