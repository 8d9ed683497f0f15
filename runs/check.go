package runs

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/scalein-planner/scalein/sim"
	"github.com/scalein-planner/scalein/sim/hpa"
	"github.com/scalein-planner/scalein/sim/whatif"
	"github.com/scalein-planner/scalein/store"
)

// Checker is every check made before anything is stored: a scenario against the per-run memory
// budget (Admit), and a sweep's or a plan's request whole (Sweep, Plan), with the ids and names
// they are stored under. It stores nothing and queues nothing, so the service holds one, and so
// can a fake of the service in another package's tests (web's), which then refuses what the
// service refuses, with the same errors, and stores sweeps and plans under the same ids.
type Checker struct {
	cfg       Config
	traces    *store.Store
	estimates *estimateCache
}

// NewChecker builds the checker of a configuration, with its defaults filled in as New fills them.
func NewChecker(cfg Config) (*Checker, error) {
	if cfg.Store == nil {
		return nil, errors.New("runs: Config.Store is nil; open a store with store.Open first")
	}
	cfg, err := withDefaults(cfg)
	if err != nil {
		return nil, err
	}
	return &Checker{cfg: cfg, traces: cfg.Store, estimates: newEstimateCache()}, nil
}

// Limits is the configuration the checker checks against, its defaults filled in.
func (c *Checker) Limits() Config { return c.cfg }

// Admit refuses a scenario whose memory estimate exceeds the per-run budget, with a
// *sim.ValidationError naming the driving fields (the web server shows them beside the form's
// fields, or lists them in the API's answer).
func (c *Checker) Admit(sc *sim.Scenario) error {
	return c.estimates.estimate(sc).Check(c.cfg.MaxRunMemory, "this server")
}

// Estimate is the scenario's memory estimate in bytes, remembered by scenario.
func (c *Checker) Estimate(sc *sim.Scenario) int64 { return c.estimates.estimate(sc).Bytes }

// jobBase reads what every job starts from: its name (trimmed, under the scenario name rules)
// and its base scenario, parsed with the stored traces and within the per-run memory budget.
// kind names the job in errors; needScenario is the message for a request without one.
func (c *Checker) jobBase(kind, name string, scenario json.RawMessage, needScenario string) (string, *sim.Scenario, error) {
	if len(bytes.TrimSpace(scenario)) == 0 {
		return "", nil, InvalidRequest(kind, &sim.ValidationError{Errors: []sim.FieldError{{Path: "scenario", Message: needScenario}}})
	}
	name = strings.TrimSpace(name)
	if msg := sim.NameProblem(name); msg != "" { // the scenario name rules (issue 19 L1)
		return "", nil, InvalidRequest(kind, &sim.ValidationError{Errors: []sim.FieldError{{Path: "name", Message: msg}}})
	}
	base, err := sim.Parse(scenario, sim.ParseEnv{Traces: c.traces})
	if err != nil {
		if _, ok := errors.AsType[*sim.ValidationError](err); ok {
			return "", nil, err
		}
		return "", nil, &UnreadableScenarioError{Err: err}
	}
	if err := c.Admit(base); err != nil {
		return "", nil, err
	}
	return name, base, nil
}

// CheckedSweep is a sweep request that passed every check: the sweep as it is stored, and its
// points in row-major order.
type CheckedSweep struct {
	Sweep  store.Sweep
	Points []whatif.Point
}

// Sweep checks a sweep request whole: the name, the base scenario, the axes, and every point
// against the per-run memory budget, so that a point fed later is not refused for it. A request
// that does not validate gives a *RequestError, or the scenario's *sim.ValidationError.
func (c *Checker) Sweep(req SweepRequest) (CheckedSweep, error) {
	name, base, err := c.jobBase("sweep", req.Name, req.Scenario, `required: the scenario to sweep, as in POST /api/v1/runs`)
	if err != nil {
		return CheckedSweep{}, err
	}
	pts, err := whatif.Expand(base, req.Axes, sim.ParseEnv{Traces: c.traces}, c.cfg.MaxSweepPoints)
	if err != nil {
		return CheckedSweep{}, InvalidRequest("sweep", err)
	}
	for _, p := range pts {
		if err := c.Admit(p.Scenario); err != nil {
			return CheckedSweep{}, err
		}
	}
	axesJSON, err := json.Marshal(req.Axes)
	if err != nil {
		return CheckedSweep{}, err
	}
	canonical := base.CanonicalJSON()
	if name == "" {
		name = base.Name
	}
	sw := store.Sweep{ID: contentID("sweep", canonical, axesJSON), Name: name, ScenarioJSON: canonical, AxesJSON: axesJSON}
	return CheckedSweep{Sweep: sw, Points: pts}, nil
}

// CheckedPlan is a plan request that passed every check: the plan as it is stored (its request
// normalised, with the imported object), and what its planner starts from.
type CheckedPlan struct {
	Plan    store.Plan
	Base    *sim.Scenario
	Request whatif.Request
}

// Plan checks a plan request whole: the name, the base scenario, the goal, limits, search and
// the imported object. A request that does not validate gives a *RequestError, or the
// scenario's *sim.ValidationError.
func (c *Checker) Plan(req PlanRequest) (CheckedPlan, error) {
	name, base, err := c.jobBase("plan", req.Name, req.Scenario, "required: the scenario to plan on, as in POST /api/v1/runs (its scale_in is replaced)")
	if err != nil {
		return CheckedPlan{}, err
	}
	wreq := whatif.Request{Goal: req.Goal, Constraints: req.Constraints, Search: req.Search}
	origin, err := planOrigin(req.Origin, base, wreq)
	if err != nil {
		return CheckedPlan{}, err
	}
	if wreq.Search.MaxRuns > c.cfg.MaxPlanRuns {
		return CheckedPlan{}, InvalidRequest("plan", &sim.ValidationError{Errors: []sim.FieldError{{Path: "search.max_runs",
			Message: fmt.Sprintf("must be at most %d on this server (-max-plan-runs) (got %d)", c.cfg.MaxPlanRuns, wreq.Search.MaxRuns)}}})
	}
	// A plan that leaves search.max_runs out takes its goal's default, within -max-plan-runs
	// (finding L1 of 2026-12c: capacity and diagnose plans took 12 and 23 runs on a server
	// allowing 2, and a tune plan was refused for a value the user never sent).
	defaulted := wreq.Search.MaxRuns == 0
	if defaulted {
		switch wreq.Goal.Kind() {
		case whatif.KindCapacity:
			wreq.Search.MaxRuns = min(whatif.DefaultCapacityMaxRuns, c.cfg.MaxPlanRuns)
		case whatif.KindDiagnose:
			wreq.Search.MaxRuns = min(whatif.DefaultDiagnoseMaxRuns, c.cfg.MaxPlanRuns)
		case whatif.KindDrain, whatif.KindTune:
			wreq.Search.MaxRuns = c.cfg.MaxPlanRuns
		}
	}
	norm, err := whatif.Normalize(base, wreq)
	if err != nil {
		if defaulted {
			err = serverBoundRuns(err, c.cfg.MaxPlanRuns)
		}
		return CheckedPlan{}, InvalidRequest("plan", err)
	}
	reqJSON, err := json.Marshal(planRequestDoc{Request: norm, Origin: origin})
	if err != nil {
		return CheckedPlan{}, err
	}
	canonical := base.CanonicalJSON()
	if name == "" {
		switch norm.Goal.Kind() {
		case whatif.KindCapacity:
			name = "One worker's capacity at the SLO of " + base.Name
		case whatif.KindDiagnose:
			name = "How far from ideal: the autoscaler of " + base.Name
		case whatif.KindTune:
			name = "Tune the autoscaler of " + base.Name
			if r := norm.Goal.Role; r != "" {
				name = "Tune the " + r + " pool's autoscaler of " + base.Name
			}
		case whatif.KindDrain:
			name = fmt.Sprintf("Remove %s from %s", whatif.Workers(norm.Goal.Remove), base.Name)
			if r := norm.Goal.Role; r != "" {
				name = fmt.Sprintf("Remove %s from %s", strings.Replace(whatif.Workers(norm.Goal.Remove), " ", " "+r+" ", 1), base.Name)
			}
		}
	}
	plan := store.Plan{ID: contentID("plan", canonical, reqJSON), Name: name, ScenarioJSON: canonical, RequestJSON: reqJSON}
	return CheckedPlan{Plan: plan, Base: base, Request: norm}, nil
}

// planOrigin checks a plan request's origin (none, or JSON null, is none): only a tune plan of
// a scenario with an autoscaler writes manifests, and Export must be able to write the
// scenario's settings into the object (hpa.ReadOrigin). It returns the origin as stored.
func planOrigin(raw json.RawMessage, base *sim.Scenario, wreq whatif.Request) (json.RawMessage, error) {
	o := bytes.TrimSpace(raw)
	if len(o) == 0 || bytes.Equal(o, []byte("null")) {
		return nil, nil
	}
	a := base.Autoscaler
	if pa := base.PoolAutoscalers; pa != nil {
		// A tune plan of one pool writes into that pool's object: the origin is the import's
		// pools.<role>.origin.
		switch wreq.Goal.Role {
		case sim.RolePrefill:
			a = pa.Prefill
		case sim.RoleDecode:
			a = pa.Decode
		}
	}
	if wreq.Goal.Kind() != whatif.KindTune || a == nil {
		return nil, InvalidRequest("plan", &sim.ValidationError{Errors: []sim.FieldError{{Path: "origin",
			Message: "only a tune plan (goal.tune) of a scenario with an autoscaler (with pools: of the pool goal.role names) writes manifests; leave origin out"}}})
	}
	origin, err := hpa.ReadOrigin(o, *a)
	if err != nil {
		return nil, InvalidRequest("plan", &sim.ValidationError{Errors: []sim.FieldError{{Path: "origin", Message: err.Error()}}})
	}
	return json.Marshal(origin)
}

// serverBoundRuns rewrites the search.max_runs problem of a plan that left it out: the value
// was the server's bound (-max-plan-runs), too few for the goal, not the user's.
func serverBoundRuns(err error, maxPlanRuns int) error {
	invalid, ok := errors.AsType[*sim.ValidationError](err)
	if !ok {
		return err
	}
	out := &sim.ValidationError{Errors: make([]sim.FieldError, len(invalid.Errors))}
	for i, fe := range invalid.Errors {
		if fe.Path == "search.max_runs" {
			fe.Message = fmt.Sprintf("this server allows at most %d runs a plan (-max-plan-runs), fewer than this goal needs (%s); ask the server's admin to raise -max-plan-runs",
				maxPlanRuns, strings.TrimSuffix(strings.SplitN(fe.Message, " (got", 2)[0], ";"))
		}
		out.Errors[i] = fe
	}
	return out
}
