package runs

import (
	"context"
	"errors"

	"github.com/scalein-planner/scalein/sim"
	"github.com/scalein-planner/scalein/store"
)

// reuseOrRun gives the report of run id: for a sweep point or plan candidate, that of a done run
// which simulates the same scenario under another name (a point equal to a stored run but for
// the suffix the sweep gives its name), relabelled; else a new simulation. A run asked for
// directly is always simulated itself (store.FindDoneRunBySimKey). Reuse goes by what is simulated
// (sim.Scenario.SimulationKey), not by the label, so a run is never paid for twice, while each
// name keeps its own permalink.
func (s *Service) reuseOrRun(ctx context.Context, id string, sc *sim.Scenario, opt sim.RunOptions) (*sim.Report, error) {
	if rep := s.reusableReport(ctx, id, sc); rep != nil {
		return rep, nil
	}
	rep, err := s.safeRun(ctx, sc, opt)
	if rep != nil && rep.Sim != nil {
		s.stats.simulated(rep.Sim)
	}
	return rep, err
}

// reusableReport returns the relabelled report of another done run that simulates sc, or nil.
func (s *Service) reusableReport(ctx context.Context, id string, sc *sim.Scenario) *sim.Report {
	other, err := s.store.FindDoneRunBySimKey(ctx, sc.SimulationKey(), id)
	if err != nil {
		if !errors.Is(err, store.ErrNotFound) {
			s.log.Warn("looking for a run that simulates the same failed; simulating", "run", id, "err", err)
		}
		return nil
	}
	rep, err := s.LoadReport(ctx, other)
	if err != nil || rep.ModelVersion != sim.ModelVersion {
		return nil
	}
	rep.Relabel(sc.Name, sc.ID())
	s.log.Info("run reused the report of a run that simulates the same", "run", id, "from", other)
	return rep
}
