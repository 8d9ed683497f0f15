package web

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"maps"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/sync/semaphore"

	"github.com/scalein-planner/scalein/runs"
	"github.com/scalein-planner/scalein/sim"
	"github.com/scalein-planner/scalein/sim/whatif"
	"github.com/scalein-planner/scalein/store"
)

// inlineRuns is the run service of web tests whose subject is HTTP (statuses, pages, gates,
// forms, exports, the page cache), not the queue: it has no job queue, builds no River client
// and migrates no River tables, so no worker, poll or shutdown stands between a request and
// what it shows. What it does check and store is the runs package's own: the checks before
// anything is stored (runs.Checker), a run's result as a worker stores it (runs.ResultOf,
// Result.Record), the summaries and reports as pages read them (runs.Reader), the views of
// sweeps and plans (runs.SweepViewOf, runs.PlanViewOf), a plan's runner and end
// (runs.NewPlanRunner, runs.PlanEnd). With work set, a submitted run is simulated with the real
// engine before Submit returns, and a plan runs its planner before CreatePlan returns; without
// it, runs and plans stay queued, as on a server whose workers are stopped. Queues,
// budgets, reuse, feeding, drives and workers are the runs package's to test (runs/*_test.go).
type inlineRuns struct {
	*fakeRuns
	check  *runs.Checker
	reader *runs.Reader
	work   bool
	// memory is the budget of Reserve, as the service's total memory budget (-max-total-memory).
	memory *semaphore.Weighted
	// jobs is what JobStates answers (River's job counts by state, on the service).
	jobs map[string]int
}

var _ RunService = (*inlineRuns)(nil)

// newInlineRuns is the inline service of cfg (its limits, its store and its Simulate, if set).
func newInlineRuns(t *testing.T, cfg runs.Config, work bool) *inlineRuns {
	t.Helper()
	if cfg.Store == nil {
		cfg.Store = openStore(t, filepath.Join(t.TempDir(), "test.db"))
	}
	check, err := runs.NewChecker(cfg)
	require.NoError(t, err)
	limits := check.Limits()
	return &inlineRuns{fakeRuns: &fakeRuns{st: cfg.Store}, check: check, reader: runs.NewReader(cfg.Store, cfg.Logger),
		work: work, memory: semaphore.NewWeighted(limits.MaxTotalMemory)}
}

// newFakeServer is newTestServer over inlineRuns: work=true finishes every run before its
// submission returns (where newTestServer's start=true has workers finish it later).
func newFakeServer(t *testing.T, cfg runs.Config, work bool) *Server {
	t.Helper()
	return newFakeApp(t, cfg, work, Config{RunsPerMinute: 1000})
}

// newFakeApp is a server with the web configuration web (its Runs and Store filled in) over
// the inline service of cfg.
func newFakeApp(t *testing.T, cfg runs.Config, work bool, web Config) *Server {
	t.Helper()
	f := newInlineRuns(t, cfg, work)
	web.Runs, web.Store, web.Logger = f, f.st, cfg.Logger
	s, err := New(web)
	require.NoError(t, err)
	return s
}

// inline is the inline service of a server built by newFakeServer.
func (s *Server) inline() *inlineRuns { return s.runs.(*inlineRuns) }

func (f *inlineRuns) Submit(ctx context.Context, scenarios ...*sim.Scenario) ([]store.Submitted, error) {
	return f.submit(ctx, true, scenarios)
}

// submitPoints is Submit for a sweep's points and a plan's candidates, as the service's.
func (f *inlineRuns) submitPoints(ctx context.Context, scenarios ...*sim.Scenario) ([]store.Submitted, error) {
	return f.submit(ctx, false, scenarios)
}

// submit stores the runs as the service does (the queue bound first for a direct submission,
// then the memory budget, then the rows, all or none) and, with work set, works each one that
// is queued. The answer is the rows as submitted, before they were worked, as the service's.
func (f *inlineRuns) submit(ctx context.Context, direct bool, scenarios []*sim.Scenario) ([]store.Submitted, error) {
	if direct {
		if err := f.QueueRoom(ctx, scenarios...); err != nil {
			return nil, err
		}
	}
	for _, sc := range scenarios {
		if err := f.Admit(sc); err != nil {
			return nil, err
		}
	}
	newRuns := make([]store.NewRun, len(scenarios))
	for i, sc := range scenarios {
		newRuns[i] = store.NewRun{ID: sc.ID(), Name: sc.Name, ScenarioJSON: sc.CanonicalJSON(), Direct: direct, SimKey: sc.SimulationKey()}
	}
	noJob := func(context.Context, *sql.Tx, string) (int64, error) { return 0, nil }
	subs, err := f.st.SubmitRuns(ctx, newRuns, f.check.Limits().QueueSize, time.Now(), noJob)
	if errors.Is(err, store.ErrQueueFull) {
		return nil, runs.ErrQueueFull
	}
	if err != nil || !f.work {
		return subs, err
	}
	for _, sub := range subs {
		if sub.Run.Status == store.StatusQueued {
			if err := f.workRun(context.WithoutCancel(ctx), sub.Run.ID); err != nil {
				return nil, err
			}
		}
	}
	return subs, nil
}

// workRun is one attempt at a queued run, as a worker makes it (runs/attempt.go): claim the
// row, simulate the stored scenario with the real engine (or cfg.Simulate), record the result.
// A run another call claimed first is left to it.
func (f *inlineRuns) workRun(ctx context.Context, id string) error {
	cfg := f.check.Limits()
	run, err := f.st.ClaimRun(ctx, id, cfg.WorkerName, cfg.MaxAttempts, time.Now())
	if errors.Is(err, store.ErrConflict) || errors.Is(err, store.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	var result runs.Result
	sc, err := sim.Parse(run.ScenarioJSON, sim.ParseEnv{Traces: f.st})
	if err != nil {
		result = runs.Result{Status: store.StatusFailed, Error: "the stored scenario no longer validates: " + err.Error()}
	} else {
		simulate := cfg.Simulate
		if simulate == nil {
			simulate = sim.Run
		}
		result = runs.ResultOf(simulate(ctx, sc, sim.RunOptions{Traces: f.st, MaxEvents: cfg.MaxEvents, MaxVirtualMS: cfg.MaxVirtualMS}))
	}
	return result.Record(ctx, f.st, id, run.Attempts, time.Now())
}

// JobStates answers the counts a test set (none by default): this service has no job queue.
func (f *inlineRuns) JobStates(context.Context) (map[string]int, error) {
	out := map[string]int{}
	maps.Copy(out, f.jobs)
	return out, nil
}

func (f *inlineRuns) Admit(sc *sim.Scenario) error    { return f.check.Admit(sc) }
func (f *inlineRuns) Estimate(sc *sim.Scenario) int64 { return f.check.Estimate(sc) }
func (f *inlineRuns) Limits() runs.Config             { return f.check.Limits() }
func (f *inlineRuns) MaxPlanRuns() int                { return f.check.Limits().MaxPlanRuns }

// QueueRoom is the service's: the store counts the runs waiting against the queue bound.
func (f *inlineRuns) QueueRoom(ctx context.Context, scenarios ...*sim.Scenario) error {
	ids := make([]string, len(scenarios))
	for i, sc := range scenarios {
		ids[i] = sc.ID()
	}
	err := f.st.QueueRoom(ctx, ids, f.check.Limits().QueueSize)
	if errors.Is(err, store.ErrQueueFull) {
		return runs.ErrQueueFull
	}
	return err
}

// Reserve takes bytes from the total memory budget until release, waiting until they fit or
// ctx ends, as the service's.
func (f *inlineRuns) Reserve(ctx context.Context, bytes int64) (func(), error) {
	n := min(max(bytes, 1), f.check.Limits().MaxTotalMemory)
	if err := f.memory.Acquire(ctx, n); err != nil {
		return nil, err
	}
	return func() { f.memory.Release(n) }, nil
}

// CancelRun ends a queued run as cancelled, with the service's message (no run is ever running
// here). A run that already ended is left as it is.
func (f *inlineRuns) CancelRun(ctx context.Context, id string) (bool, error) {
	run, err := f.st.GetRunStatus(ctx, id)
	if err != nil {
		return false, err
	}
	if run.Status != store.StatusQueued {
		return false, nil
	}
	err = f.st.EndRun(ctx, id, store.StatusCancelled, "cancelled by "+canceller(ctx)+" before it started", time.Now())
	if errors.Is(err, store.ErrConflict) {
		err = nil
	}
	return false, err
}

// canceller names who cancels, as the service does: the request's user, else "a user".
func canceller(ctx context.Context) string {
	if u := store.OwnerFrom(ctx); u != "" {
		return u
	}
	return "a user"
}

func (f *inlineRuns) LoadSummary(ctx context.Context, run store.Run) (*runs.StoredSummary, error) {
	return f.reader.LoadSummary(ctx, run)
}

func (f *inlineRuns) LoadReport(ctx context.Context, id string) (*sim.Report, error) {
	return f.reader.LoadReport(ctx, id)
}

// CreateSweep checks the request as the service does, stores the sweep and submits its points
// in order, recording each once submitted; a point the queue has no room for (work unset) is
// left unsubmitted, where the service would feed it later.
func (f *inlineRuns) CreateSweep(ctx context.Context, req runs.SweepRequest) (runs.Created, error) {
	checked, err := f.check.Sweep(req)
	if err != nil {
		return runs.Created{}, err
	}
	ctx = store.WithoutRunQuota(ctx) // a sweep's points count against the quota of sweep points
	id := checked.Sweep.ID
	if _, err := f.st.CreateSweep(ctx, checked.Sweep, nil, time.Now()); err != nil {
		return runs.Created{}, err
	}
	allDone := true
	for i, p := range checked.Points {
		subs, err := f.submitPoints(ctx, p.Scenario)
		if errors.Is(err, runs.ErrQueueFull) {
			allDone = false
			break
		}
		if err != nil {
			return runs.Created{}, err
		}
		vals, err := json.Marshal(p.Values)
		if err != nil {
			return runs.Created{}, err
		}
		if err := f.st.AddSweepPoints(ctx, id, i, []store.SweepPoint{{ValuesJSON: vals, RunID: subs[0].Run.ID}}); err != nil {
			return runs.Created{}, err
		}
		if subs[0].Run.Status != store.StatusDone {
			allDone = false
		}
	}
	status := store.StatusQueued
	if allDone {
		status = store.StatusDone
	}
	return runs.Created{ID: id, Status: status, Points: len(checked.Points), Done: allDone}, nil
}

func (f *inlineRuns) Sweep(ctx context.Context, id string) (runs.SweepView, error) {
	sw, points, err := f.st.GetSweep(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return runs.SweepView{}, &runs.NotFoundError{Kind: "sweep"}
	}
	if err != nil {
		return runs.SweepView{}, err
	}
	return runs.SweepViewOf(sw, points, nil) // no run is ever running here
}

// CancelSweep cancels an unfinished sweep and those of its runs nothing else waits on, as the
// service does (store.CancelUnlessWanted); an ended sweep stays as it ended.
func (f *inlineRuns) CancelSweep(ctx context.Context, id string) error {
	sw, err := f.Sweep(ctx, id)
	if err != nil || runs.IsFinal(sw.Status) {
		return err
	}
	if err := f.st.CancelSweep(ctx, id); err != nil {
		return err
	}
	for _, p := range sw.Points {
		if _, _, err := f.st.CancelUnlessWanted(ctx, p.RunID, id, "", time.Now()); err != nil {
			return err
		}
	}
	return nil
}

// CreatePlan checks the request as the service does and stores the plan; with work set, the
// planner runs before it returns, its candidates worked at once (a plan asked for again that
// has not finished runs again, as the service's). The answer is the plan as stored before it
// ran: 202 for a new plan, 200 for one done already, as the service's.
func (f *inlineRuns) CreatePlan(ctx context.Context, req runs.PlanRequest) (runs.Created, error) {
	checked, err := f.check.Plan(req)
	if err != nil {
		return runs.Created{}, err
	}
	plan, created, err := f.st.CreatePlan(ctx, checked.Plan, time.Now())
	if err != nil {
		return runs.Created{}, err
	}
	if f.work && (created || plan.Status == store.StatusQueued || plan.Status == store.StatusRunning) {
		if err := f.runPlan(context.WithoutCancel(ctx), plan, checked); err != nil {
			return runs.Created{}, err
		}
	}
	return runs.Created{ID: plan.ID, Status: plan.Status, Done: plan.Status == store.StatusDone}, nil
}

// runPlan runs the planner of a stored plan to its end, as the service's driver does without
// its outages, leases and cancels (runs/plan_driver.go).
func (f *inlineRuns) runPlan(ctx context.Context, plan store.Plan, checked runs.CheckedPlan) error {
	if err := f.st.SetPlanStatus(ctx, plan.ID, store.StatusRunning, "", nil, time.Now()); err != nil {
		return err
	}
	runner := runs.NewPlanRunner(f.st, plan.ID, plan.CreatedAt, f.check.Limits().QueueSize, f.submitPoints)
	res, err := whatif.Plan(ctx, runner, checked.Base, checked.Request)
	status, msg, result := runs.PlanEnd(res, err)
	if err := f.st.SetPlanStatus(ctx, plan.ID, status, msg, result, time.Now()); err != nil || status != store.StatusDone {
		return err
	}
	return runs.RecordIdealFleet(ctx, f.st, plan.ID, res, time.Now())
}

func (f *inlineRuns) Plan(ctx context.Context, id string) (runs.PlanView, error) {
	plan, points, err := f.st.GetPlan(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return runs.PlanView{}, &runs.NotFoundError{Kind: "plan"}
	}
	if err != nil {
		return runs.PlanView{}, err
	}
	return runs.PlanViewOf(plan, points)
}

// CancelPlan cancels an unfinished plan and those of its runs nothing else waits on, as the
// service does; an ended plan stays as it ended.
func (f *inlineRuns) CancelPlan(ctx context.Context, id string) error {
	plan, points, err := f.st.GetPlan(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return &runs.NotFoundError{Kind: "plan"}
	}
	if err != nil || runs.IsFinal(plan.Status) {
		return err
	}
	for _, p := range points {
		if _, _, err := f.st.CancelUnlessWanted(ctx, p.RunID, "", id, time.Now()); err != nil {
			return err
		}
	}
	return f.st.SetPlanStatus(ctx, id, store.StatusCancelled, "cancelled by "+canceller(ctx), nil, time.Now())
}
