package web

import (
	"context"
	"encoding/json"
	"math"
	"net/url"
	"strconv"
	"strings"

	"github.com/scalein-planner/scalein/runs"
	"github.com/scalein-planner/scalein/sim"
	"github.com/scalein-planner/scalein/sim/whatif"
	"github.com/scalein-planner/scalein/templates"
)

// tuneSearched is what a tune plan on the scenario searches: whatif's default lists for its
// autoscaler, each in words. Nil when the scenario has no autoscaler or the defaults cannot be
// drawn (the form then names the problem when it is posted).
func tuneSearched(sc *sim.Scenario) []templates.SearchedList {
	if sc == nil || sc.Autoscaler == nil {
		return nil
	}
	req, err := whatif.Normalize(sc, whatif.Request{Goal: whatif.Goal{Tune: whatif.TuneAutoscaler}})
	if err != nil {
		return nil
	}
	s := req.Search
	join := func(n int, item func(i int) string) string {
		parts := make([]string, n)
		for i := range parts {
			parts[i] = item(i)
		}
		return strings.Join(parts, "; ")
	}
	out := []templates.SearchedList{
		{Label: "Targets (" + sc.Autoscaler.Metric + ")", Values: join(len(s.Targets), func(i int) string { return sim.FormatNumber(s.Targets[i]) })},
		{Label: "Scale-down windows", Values: join(len(s.ScaleDownWindowsMS), func(i int) string { return whatif.FormatMS(s.ScaleDownWindowsMS[i]) })},
	}
	if len(s.ScaleDownPolicies) > 0 {
		out = append(out, templates.SearchedList{Label: "Scale-down policies", Values: join(len(s.ScaleDownPolicies), func(i int) string { return whatif.PolicyPhrase(s.ScaleDownPolicies[i]) })})
	} else {
		out = append(out, templates.SearchedList{Label: "Step limits (workers removed per tick)", Values: join(len(s.MaxRemovePerTick), func(i int) string {
			if v := s.MaxRemovePerTick[i]; v != nil {
				return whatif.Workers(*v)
			}
			return "no limit"
		})})
	}
	out = append(out,
		templates.SearchedList{Label: "Selection (which worker drains)", Values: strings.Join(s.Selections, "; ")},
		templates.SearchedList{Label: "Grace before a kill", Values: join(len(s.GraceMS), func(i int) string {
			if g := s.GraceMS[i]; g != nil {
				return whatif.FormatMS(*g)
			}
			return "no grace"
		})},
		templates.SearchedList{Label: "Migration limits (migrations per request)", Values: join(len(s.MigrationLimits), func(i int) string { return strconv.Itoa(s.MigrationLimits[i]) })},
	)
	return out
}

// fillFromPlan prefills the plan form from an earlier plan (GET /plans/new?plan=ID): its
// scenario, goal, limits and run bound, so that a link can offer the same plan with a limit
// relaxed or the search widened (query parameters named as the form's fields override).
func (s *Server) fillFromPlan(ctx context.Context, p *templates.PlanNewPage, id string) (*sim.Scenario, error) {
	if !idPattern.MatchString(id) {
		return nil, notFound("no plan has this id; plan ids are 16 characters of a–z and 2–7")
	}
	view, err := s.runs.Plan(ctx, id)
	if err != nil {
		return nil, err
	}
	stored, _, err := s.store.GetPlan(ctx, id)
	if err != nil {
		return nil, err
	}
	p.Scenario, p.Notice = string(stored.ScenarioJSON), "The scenario and limits of plan "+id+" ("+view.Name+")."
	if view.Origin != nil {
		if o, err := json.Marshal(view.Origin); err == nil {
			p.Origin = string(o)
		}
	}
	p.Goal = planGoalOf(view)
	c := view.Constraints
	p.TTFTP99MS, p.E2EP99MS, p.MaxKilled, p.MinAttainment = optNumber(c.TTFTP99MS), optNumber(c.E2EP99MS), "", optNumber(c.MinAttainment)
	if c.MaxKilled != nil {
		p.MaxKilled = strconv.FormatInt(*c.MaxKilled, 10)
	}
	if n := view.Goal.BaselineWorkers; n > 0 {
		p.BaselineWorkers = strconv.Itoa(n)
	}
	if view.Search.MaxRuns > 0 {
		p.MaxRuns = strconv.Itoa(view.Search.MaxRuns)
	}
	sc, _ := sim.Parse(stored.ScenarioJSON, sim.ParseEnv{Traces: s.store})
	return sc, nil
}

// planGoalOf is the plan form's goal field for a plan: its kind's name.
func planGoalOf(v runs.PlanView) string {
	return v.Goal.Kind().String()
}

func optNumber(v *float64) string {
	if v == nil {
		return ""
	}
	return strconv.FormatFloat(*v, 'f', -1, 64)
}

// applyPlanQuery lets a link set the plan form's goal, limits and run bound by the form's own
// field names (the "nothing feasible" message's relaxed limit).
func applyPlanQuery(p *templates.PlanNewPage, q url.Values) {
	set := func(name string, dst *string) {
		if v, ok := q[name]; ok && len(v) > 0 {
			*dst = v[0]
		}
	}
	set("goal", &p.Goal)
	set("ttft_p99_ms", &p.TTFTP99MS)
	set("e2e_p99_ms", &p.E2EP99MS)
	set("max_killed", &p.MaxKilled)
	set("min_attainment", &p.MinAttainment)
	set("max_runs", &p.MaxRuns)
	set("remove", &p.Remove)
	set("start_ms", &p.StartMS)
	set("baseline_workers", &p.BaselineWorkers)
}

// relaxLink is the "nothing feasible" message's way out: the closest candidate (the first of
// the ranked list), the limit it breaks, and GET /plans/new prefilled from the plan with that
// limit relaxed to what the candidate reached; with no limit broken (or no candidate) the
// search is widened: twice the runs, up to the server's bound.
func relaxLink(view runs.PlanView, maxRuns int) templates.RelaxLink {
	q := url.Values{"plan": {view.ID}}
	out := templates.RelaxLink{}
	if len(view.Candidates) > 0 {
		best := view.Candidates[0]
		out.Closest, out.ClosestRunID = best.Label, best.RunID
		c := view.Constraints
		fig := func(key string) *float64 { return sim.FigureValue(best.Headline, key) }
		if t, v := c.TTFTP99MS, fig(sim.HeadlineTTFTP99MS); t != nil && v != nil && *v > *t {
			relaxed := ceilSignificant(*v, 2)
			q.Set("ttft_p99_ms", optNumber(&relaxed))
			out.Breaks = "TTFT p99 " + whatif.FormatMS(*v) + " > " + whatif.FormatMS(*t)
			out.Action = "Plan again with TTFT p99 at most " + whatif.FormatMS(relaxed)
		} else if t, v := c.E2EP99MS, fig(sim.HeadlineE2EP99MS); t != nil && v != nil && *v > *t {
			relaxed := ceilSignificant(*v, 2)
			q.Set("e2e_p99_ms", optNumber(&relaxed))
			out.Breaks = "end-to-end p99 " + whatif.FormatMS(*v) + " > " + whatif.FormatMS(*t)
			out.Action = "Plan again with end-to-end p99 at most " + whatif.FormatMS(relaxed)
		} else if k, v := c.MaxKilled, fig(sim.HeadlineRequestsKilled); k != nil && v != nil && *v > float64(*k) {
			q.Set("max_killed", strconv.FormatFloat(math.Ceil(*v), 'f', -1, 64))
			out.Breaks = sim.FormatNumber(*v) + " requests killed > " + strconv.FormatInt(*k, 10)
			out.Action = "Plan again allowing " + sim.FormatNumber(math.Ceil(*v)) + " killed"
		} else if len(best.Violations) > 0 {
			out.Breaks = strings.Join(best.Violations, "; ")
		}
	}
	if out.Action == "" {
		runs := min(max(2*view.Search.MaxRuns, 2*view.Runs, 4), maxRuns)
		q.Set("max_runs", strconv.Itoa(runs))
		out.Action = "Plan again with up to " + strconv.Itoa(runs) + " runs"
	}
	out.URL = "/plans/new?" + q.Encode()
	return out
}

// ceilSignificant rounds v up to n significant digits, so that the relaxed limit admits v.
func ceilSignificant(v float64, n int) float64 {
	if v <= 0 || math.IsNaN(v) || math.IsInf(v, 0) {
		return v
	}
	p := math.Pow(10, float64(n)-math.Ceil(math.Log10(v)))
	return math.Ceil(v*p) / p
}
