package whatif

import (
	"context"

	"github.com/scalein-planner/scalein/sim"
)

// Runs ahead of need (issue 35). On an AheadRunner a plan may start a run before it knows it
// will use it, to keep a slot busy that would otherwise idle: a capacity search's probes of
// the rounds it may reach, a diagnose plan's fixed runs while its capacity search goes on. Such
// a run counts in the plan's runs (and so against search.max_runs) only when a stage uses it
// (runBatch takes it); one the plan does not use is cancelled and reported to the runner as
// unused. What a plan uses is a function of the request and of the outcomes of the runs it
// used, never of which run finished first, so its result is the same as without running ahead.

// aheadRun is one run started ahead of need.
type aheadRun struct {
	id     string
	cancel context.CancelFunc
	ended  chan struct{}
	out    Outcome
	err    error
}

// idRunner is a runner told the scenarios' ids, which the planner knows (LocalRunner.RunIDs).
type idRunner interface {
	RunIDs(ctx context.Context, scenarios []*sim.Scenario, ids []string) ([]Outcome, error)
}

// run asks the runner for the scenarios, whose ID()s are ids.
func (p *planner) run(ctx context.Context, scenarios []*sim.Scenario, ids []string) ([]Outcome, error) {
	if r, ok := p.runner.(idRunner); ok {
		return r.RunIDs(ctx, scenarios, ids)
	}
	return p.runner.Run(ctx, scenarios)
}

// aheadSlots is how many runs the plan may keep in flight, or 0 when its runner cannot run
// ahead of need.
func (p *planner) aheadSlots() int {
	if ar, ok := p.runner.(AheadRunner); ok {
		return max(ar.Slots(), 1)
	}
	return 0
}

// startAhead starts the run of sc, whose ID() is id, unless the plan has it already or has
// started it.
func (p *planner) startAhead(ctx context.Context, sc *sim.Scenario, id string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if _, ok := p.memo[id]; ok {
		return
	}
	if _, ok := p.ahead[id]; ok {
		return
	}
	if p.ahead == nil {
		p.ahead, p.firstReused = map[string]*aheadRun{}, map[string]bool{}
	}
	if p.wake == nil {
		p.wake = make(chan struct{}, 1)
	}
	actx, cancel := context.WithCancel(ctx)
	a := &aheadRun{id: id, cancel: cancel, ended: make(chan struct{})}
	p.ahead[id] = a
	wake := p.wake
	go func() {
		outs, err := p.run(actx, []*sim.Scenario{sc}, []string{id})
		p.mu.Lock()
		if err == nil {
			a.out = outs[0]
			if _, ok := p.firstReused[id]; !ok {
				p.firstReused[id] = a.out.Reused
			}
		}
		a.err = err
		p.mu.Unlock()
		close(a.ended)
		select {
		case wake <- struct{}{}:
		default:
		}
	}()
}

// aheadOutcome is the outcome of a run started ahead of need: ok once it has ended without
// the runner failing; err when the runner failed it.
func (p *planner) aheadOutcome(id string) (o Outcome, ok bool, err error) {
	p.mu.Lock()
	a := p.ahead[id]
	p.mu.Unlock()
	if a == nil {
		return Outcome{}, false, nil
	}
	select {
	case <-a.ended:
		return a.out, a.err == nil, a.err
	default:
		return Outcome{}, false, nil
	}
}

// inFlight is how many runs started ahead of need have not ended.
func (p *planner) inFlight() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := 0
	for _, a := range p.ahead {
		select {
		case <-a.ended:
		default:
			n++
		}
	}
	return n
}

// aheadIDs are the scenarios started ahead of need and not yet used.
func (p *planner) aheadIDs() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	ids := make([]string, 0, len(p.ahead))
	for id := range p.ahead {
		ids = append(ids, id)
	}
	return ids
}

// takeAhead hands a run started ahead of need to the stage that uses it.
func (p *planner) takeAhead(id string) *aheadRun {
	p.mu.Lock()
	defer p.mu.Unlock()
	a := p.ahead[id]
	delete(p.ahead, id)
	return a
}

// dropAhead cancels a run started ahead of need that the plan will not use (now) and tells
// the runner. It may be started again if the plan comes to need it.
func (p *planner) dropAhead(id string) {
	a := p.takeAhead(id)
	if a == nil {
		return
	}
	a.cancel()
	if ar, ok := p.runner.(AheadRunner); ok {
		ar.Unused(id)
	}
}

// dropAllAhead drops every run started ahead of need that no stage used: the plan has ended.
func (p *planner) dropAllAhead() {
	for _, id := range p.aheadIDs() {
		p.dropAhead(id)
	}
}

// awaitAhead waits until a run started ahead of need ends (or ctx does).
func (p *planner) awaitAhead(ctx context.Context) error {
	p.mu.Lock()
	wake := p.wake
	p.mu.Unlock()
	if wake == nil {
		return nil
	}
	select {
	case <-wake:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
