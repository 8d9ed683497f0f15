package whatif

import (
	"context"
	"fmt"

	"github.com/scalein-planner/scalein/sim"
)

// candidate makes a candidate with its scenario: the base with this schedule (and the guard).
func (p *planner) candidate(lbl, stage string, sched []sim.ScaleInAction) *Candidate {
	sc := *p.base // a shallow copy: the scenario's shared parts are read-only
	if sched == nil {
		sched = []sim.ScaleInAction{}
	}
	sc.ScaleIn = sched
	sc.Autoscaler, sc.PoolAutoscalers = nil, nil // a drain plan's schedule replaces the scenario's autoscalers
	if r := p.req.Goal.Role; r != "" && stage != StageBaseline {
		lbl = r + " pool: " + lbl
	}
	if g := p.req.Search.Guard; g != nil {
		sc.KVCR.RejectDrainingSources = *g
	}
	sc.Name = withNameSuffix(p.base.Name, "plan: "+lbl)
	return &Candidate{Label: lbl, Stage: stage, ScaleIn: sched, ScenarioID: sc.ID(), scenario: &sc, Violations: []string{}}
}

// fit keeps the candidates whose runs fit the budget: a scenario known already (reused) or
// listed twice costs one run at most. It returns them and how many candidates it left out.
func fit(cs []*Candidate, budget int, known func(id string) bool) ([]*Candidate, int) {
	out := cs[:0:0]
	seen := map[string]bool{}
	left := budget
	dropped := 0
	for _, c := range cs {
		if (known == nil || !known(c.ScenarioID)) && !seen[c.ScenarioID] {
			if left <= 0 {
				dropped++
				continue
			}
			left--
			seen[c.ScenarioID] = true
		}
		out = append(out, c)
	}
	return out, dropped
}

// countNew is how many distinct runs the candidates cost.
func countNew(cs []*Candidate, known func(id string) bool) int {
	seen := map[string]bool{}
	for _, c := range cs {
		if known == nil || !known(c.ScenarioID) {
			seen[c.ScenarioID] = true
		}
	}
	return len(seen)
}

func (p *planner) budgetNote(dropped int, stage string) string {
	return fmt.Sprintf("the run budget (search.max_runs %d) left out %s of the %s", p.req.Search.MaxRuns, count(dropped, "candidate"), stage)
}

// record counts a run a stage uses and remembers its outcome.
func (p *planner) record(id string, o Outcome) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if first, ok := p.firstReused[id]; ok {
		o.Reused = first
	}
	p.memo[id] = o
	p.runs++
	if o.Reused {
		p.reused++
	}
}

// known says whether this plan has run the scenario already.
func (p *planner) known(id string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	_, ok := p.memo[id]
	return ok
}

// runBatch runs the candidates' new scenarios in one call to the runner and fills in their
// outcomes. Several goroutines may call it at once.
func (p *planner) runBatch(ctx context.Context, cs []*Candidate) error {
	var todo []*sim.Scenario
	var todoIDs []string
	var ahead []*aheadRun
	queued := map[string]bool{}
	for _, c := range cs {
		if p.known(c.ScenarioID) || queued[c.ScenarioID] {
			continue
		}
		queued[c.ScenarioID] = true
		if a := p.takeAhead(c.ScenarioID); a != nil {
			ahead = append(ahead, a)
			continue
		}
		todo = append(todo, c.scenario)
		todoIDs = append(todoIDs, c.ScenarioID)
	}
	if len(todo) > 0 {
		outs, err := p.run(ctx, todo, todoIDs)
		if err != nil {
			return err
		}
		for i, o := range outs {
			p.record(todoIDs[i], o)
		}
	}
	for _, a := range ahead {
		select {
		case <-a.ended:
		case <-ctx.Done():
			return ctx.Err()
		}
		if a.err != nil {
			return a.err
		}
		p.record(a.id, a.out)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range cs {
		o := p.memo[c.ScenarioID]
		c.RunID, c.Status, c.Error, c.Digest, c.Headline = o.RunID, o.Status, o.Error, o.Digest, o.Headline
		c.fleet = o.Fleet
	}
	return nil
}
