package form

import (
	"encoding/json"
	"net/url"
	"strconv"
	"strings"

	"github.com/scalein-planner/scalein/runs"
	"github.com/scalein-planner/scalein/sim"
	"github.com/scalein-planner/scalein/sim/whatif"
	"github.com/scalein-planner/scalein/templates"
)

// Plan is the plan form, each field's text as posted: the scenario as JSON, the goal (drain a
// number of workers, or tune the autoscaler) and the limits.
type Plan struct {
	Scenario string
	// Goal is "tune" for the autoscaler's settings; anything else drains Remove workers, none
	// before StartMS.
	Goal                                                     string
	Remove, StartMS, TTFTP99MS, E2EP99MS, MaxKilled, MaxRuns string
	// Origin is the imported object (hpa.Origin as JSON) in a hidden field when the scenario
	// came from a manifest, so that the plan's manifest download writes into the user's object.
	Origin string
	// MinAttainment is the least share of requests meeting the slo: a limit of a drain or tune
	// plan, the goal of a capacity search (capacity and diagnose plans).
	MinAttainment string
	// RatePerWorker is a diagnose plan's μ; empty finds it with a capacity search.
	RatePerWorker string
	// BaselineWorkers is the fixed fleet a tune or diagnose plan compares with; empty is the
	// autoscaler's max_workers.
	BaselineWorkers string
	// Role is the pool a drain or tune plan works on, with prefill and decode pools.
	Role string
}

// The plan form's goals: each kind of plan's name (whatif.Kind.String).
var (
	GoalDrain    = whatif.KindDrain.String()
	GoalTune     = whatif.KindTune.String()
	GoalCapacity = whatif.KindCapacity.String()
	GoalDiagnose = whatif.KindDiagnose.String()
)

// GoalKind reads the plan form's goal field: a kind's name; anything else (empty, "drain") is
// a drain.
func GoalKind(goal string) whatif.Kind {
	for _, k := range []whatif.Kind{whatif.KindTune, whatif.KindCapacity, whatif.KindDiagnose} {
		if goal == k.String() {
			return k
		}
	}
	return whatif.KindDrain
}

// The plan form's field names, as the template names its inputs.
const (
	planGoal      = "goal"
	planRemove    = "remove"
	planStartMS   = "start_ms"
	planTTFTP99MS = "ttft_p99_ms"
	planE2EP99MS  = "e2e_p99_ms"
	planMaxKilled = "max_killed"
	planMaxRuns   = "max_runs"
	planOrigin    = "origin"
	planMinAttain = "min_attainment"
	planRate      = "rate_per_worker"
	planBaseline  = "baseline_workers"
	planRole      = "role"
)

// planFieldOf is the form field of each path of a plan request the form has a field for.
var planFieldOf = map[string]string{
	"goal.tune":               planGoal,
	"goal.remove":             planRemove,
	"goal.start_ms":           planStartMS,
	"constraints.ttft_p99_ms": planTTFTP99MS,
	"constraints.e2e_p99_ms":  planE2EP99MS,
	"constraints.max_killed":  planMaxKilled,
	"search.max_runs":         planMaxRuns,
	"goal.capacity":           planGoal,
	"goal.diagnose":           planGoal,

	"constraints.min_attainment":            planMinAttain,
	"goal.capacity.min_attainment":          planMinAttain,
	"goal.diagnose.capacity.min_attainment": planMinAttain,
	"goal.diagnose.rate_per_worker_per_s":   planRate,
	"goal.baseline_workers":                 planBaseline,
	"goal.role":                             planRole,
}

// PlanFromValues reads a posted plan form.
func PlanFromValues(v url.Values) *Plan {
	return &Plan{Scenario: v.Get(ScenarioJSONField), Goal: v.Get(planGoal), Remove: v.Get(planRemove), StartMS: v.Get(planStartMS),
		TTFTP99MS: v.Get(planTTFTP99MS), E2EP99MS: v.Get(planE2EP99MS), MaxKilled: v.Get(planMaxKilled), MaxRuns: v.Get(planMaxRuns),
		Origin: v.Get(planOrigin), MinAttainment: v.Get(planMinAttain), RatePerWorker: v.Get(planRate), BaselineWorkers: v.Get(planBaseline),
		Role: v.Get(planRole)}
}

// Kind is the kind of plan the form asks for.
func (f *Plan) Kind() whatif.Kind { return GoalKind(f.Goal) }

// Request is the plan the form asks for, or the problems that keep it from being asked (a field
// that is not a number), each beside its field. An empty limit is no limit; an empty "Runs at
// most" is the server's bound.
func (f *Plan) Request() (runs.PlanRequest, JobErrors) {
	req := runs.PlanRequest{Scenario: json.RawMessage(f.Scenario)}
	if o := strings.TrimSpace(f.Origin); o != "" {
		req.Origin = json.RawMessage(o)
	}
	var errs JobErrors
	whole := func(field, text, label string, dst *int) {
		v, err := strconv.Atoi(strings.TrimSpace(text))
		if err != nil {
			msg := label + " must be a whole number"
			errs.add(field, msg, msg)
			return
		}
		*dst = v
	}
	limit := func(field, text, msg string) *float64 {
		t := strings.TrimSpace(text)
		if t == "" {
			return nil
		}
		v, err := strconv.ParseFloat(t, 64)
		if err != nil {
			errs.add(field, msg, msg)
			return nil
		}
		return &v
	}
	if strings.TrimSpace(f.MaxRuns) != "" {
		whole(planMaxRuns, f.MaxRuns, "Runs at most", &req.Search.MaxRuns)
	}
	minAttainment := limit(planMinAttain, f.MinAttainment, "SLO attainment at least must be a share of requests such as 0.99, or empty")
	if r := strings.TrimSpace(f.Role); r != "" {
		req.Goal.Role = r
	}
	switch f.Kind() {
	case whatif.KindTune, whatif.KindDiagnose: // the plans that compare with a fixed fleet
		if strings.TrimSpace(f.BaselineWorkers) != "" {
			whole(planBaseline, f.BaselineWorkers, "Fixed fleet to compare with", &req.Goal.BaselineWorkers)
		}
	case whatif.KindDrain, whatif.KindCapacity:
	}
	// A capacity or diagnose plan reads only the share and its runs; the drain's and the
	// limits' fields are not theirs, nor an imported manifest's origin (only a tune plan writes
	// manifests), so what they hold is not sent.
	switch f.Kind() {
	case whatif.KindCapacity:
		req.Origin = nil
		req.Goal.Capacity = &whatif.CapacityGoal{}
		if minAttainment != nil {
			req.Goal.Capacity.MinAttainment = *minAttainment
		}
		return req, errs
	case whatif.KindDiagnose:
		req.Origin = nil
		req.Goal.Diagnose = &whatif.DiagnoseGoal{}
		if minAttainment != nil {
			req.Goal.Diagnose.Capacity = &whatif.CapacityGoal{MinAttainment: *minAttainment}
		}
		if r := limit(planRate, f.RatePerWorker, "Requests/s one worker serves must be a number, or empty to find it"); r != nil {
			req.Goal.Diagnose.RatePerWorker = *r
		}
		return req, errs
	case whatif.KindTune:
		req.Goal.Tune = whatif.TuneAutoscaler
	case whatif.KindDrain:
		whole(planRemove, f.Remove, "Remove how many workers", &req.Goal.Remove)
		if v, err := strconv.ParseFloat(strings.TrimSpace(f.StartMS), 64); err == nil {
			req.Goal.StartMS = v
		} else {
			msg := "Not before (ms) must be a number"
			errs.add(planStartMS, msg, msg)
		}
	}
	req.Constraints.MinAttainment = minAttainment
	req.Constraints.E2EP99MS = limit(planE2EP99MS, f.E2EP99MS, "End-to-end p99 at most must be a number of ms, or empty for no limit")
	req.Constraints.TTFTP99MS = limit(planTTFTP99MS, f.TTFTP99MS, "TTFT p99 at most must be a number of ms, or empty for no limit")
	if k := strings.TrimSpace(f.MaxKilled); k != "" {
		v, err := strconv.ParseInt(k, 10, 64)
		if err != nil {
			msg := "Requests killed at most must be a whole number"
			errs.add(planMaxKilled, msg, msg)
		} else {
			req.Constraints.MaxKilled = &v
		}
	}
	return req, errs
}

// Refused places the run service's refusal of the form's request: a goal's or limit's problem
// beside its field, the scenario's beside the scenario box.
func (f *Plan) Refused(message string, fields []sim.FieldError) JobErrors {
	return refused(message, fields, func(path string) (string, bool) {
		field, ok := planFieldOf[path]
		return field, ok
	})
}

// Fill puts the form's text and problems into the page.
func (f *Plan) Fill(p *templates.PlanNewPage, errs JobErrors) {
	p.Scenario, p.Goal, p.Origin = f.Scenario, f.Goal, f.Origin
	p.Remove, p.StartMS, p.TTFTP99MS, p.E2EP99MS, p.MaxKilled, p.MaxRuns = f.Remove, f.StartMS, f.TTFTP99MS, f.E2EP99MS, f.MaxKilled, f.MaxRuns
	p.MinAttainment, p.RatePerWorker, p.BaselineWorkers = f.MinAttainment, f.RatePerWorker, f.BaselineWorkers
	if f.Role != "" {
		p.HasPools, p.Role = true, f.Role
	}
	switch f.Kind() {
	case whatif.KindTune, whatif.KindDiagnose:
		p.HasAutoscaler = true
	case whatif.KindCapacity:
		p.HasSLO = true
	case whatif.KindDrain:
	}
	p.Errors, p.FieldErrors = errs.List, errs.Beside()
}
