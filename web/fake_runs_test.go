package web

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/scalein-planner/scalein/runs"
	"github.com/scalein-planner/scalein/sim"
	"github.com/scalein-planner/scalein/sim/whatif"
	"github.com/scalein-planner/scalein/store"
)

// fakeRuns is the run service of page tests where the job queue is not the subject: a
// submission is stored queued (with no job, so nothing works it), and what reads runs reads
// the store. A server over it builds no River client and migrates no River tables.
type fakeRuns struct {
	st *store.Store
	// live is what Progress reports for a run this process would be running.
	live map[string]runs.RunState
	// follow scripts what Follow sends for a run, in order.
	follow map[string][]runs.RunState
}

var errNotFaked = errors.New("fakeRuns: not part of what page tests use")

func (f *fakeRuns) Submit(ctx context.Context, scenarios ...*sim.Scenario) ([]store.Submitted, error) {
	newRuns := make([]store.NewRun, len(scenarios))
	for i, sc := range scenarios {
		newRuns[i] = store.NewRun{ID: sc.ID(), Name: sc.Name, ScenarioJSON: sc.CanonicalJSON(), Direct: true}
	}
	noJob := func(context.Context, *sql.Tx, string) (int64, error) { return 0, nil }
	return f.st.SubmitRuns(ctx, newRuns, 1<<20, time.Now(), noJob)
}

func (f *fakeRuns) Admit(*sim.Scenario) error                         { return nil }
func (f *fakeRuns) QueueRoom(context.Context, ...*sim.Scenario) error { return nil }
func (f *fakeRuns) NoteBigRequest()                                   {}
func (f *fakeRuns) Estimate(*sim.Scenario) int64                      { return 0 }
func (f *fakeRuns) Reserve(context.Context, int64) (func(), error)    { return func() {}, nil }
func (f *fakeRuns) Progress(id string) (runs.RunState, bool) {
	p, ok := f.live[id]
	return p, ok
}
func (f *fakeRuns) MaxPlanRuns() int    { return whatif.DefaultMaxPlanRuns }
func (f *fakeRuns) Limits() runs.Config { return runs.Config{Store: f.st} }

// Follow sends the states scripted for the run in follow, or else its one state (live, or its
// row's: nothing works the fake's runs, so it never changes); unless the last state sent is
// final, it then waits for ctx, as a run that never ends would.
func (f *fakeRuns) Follow(ctx context.Context, id string) (<-chan runs.RunState, error) {
	run, err := f.st.GetRunStatus(ctx, id)
	if err != nil {
		return nil, err
	}
	states := f.follow[id]
	if len(states) == 0 {
		st, ok := f.live[id]
		if !ok {
			st = runs.RunState{Status: run.Status, Fraction: run.Progress, Error: run.Error}
		}
		states = []runs.RunState{st}
	}
	out := make(chan runs.RunState)
	go func() {
		defer close(out)
		for _, st := range states {
			select {
			case out <- st:
			case <-ctx.Done():
				return
			}
		}
		if !runs.IsFinal(states[len(states)-1].Status) {
			<-ctx.Done()
		}
	}()
	return out, nil
}

func (f *fakeRuns) CancelRun(ctx context.Context, id string) (bool, error) {
	err := f.st.EndRun(ctx, id, store.StatusCancelled, "cancelled by a user before it started", time.Now())
	return false, err
}

func (f *fakeRuns) LoadSummary(_ context.Context, run store.Run) (*runs.StoredSummary, error) {
	var sum runs.StoredSummary
	return &sum, json.Unmarshal(run.SummaryJSON, &sum)
}

func (f *fakeRuns) LoadReport(ctx context.Context, id string) (*sim.Report, error) {
	return nil, errNotFaked
}

func (f *fakeRuns) CreateSweep(context.Context, runs.SweepRequest) (runs.Created, error) {
	return runs.Created{}, errNotFaked
}

func (f *fakeRuns) Sweep(context.Context, string) (runs.SweepView, error) {
	return runs.SweepView{}, errNotFaked
}

func (f *fakeRuns) CancelSweep(context.Context, string) error { return errNotFaked }

func (f *fakeRuns) CreatePlan(context.Context, runs.PlanRequest) (runs.Created, error) {
	return runs.Created{}, errNotFaked
}

func (f *fakeRuns) Plan(context.Context, string) (runs.PlanView, error) {
	return runs.PlanView{}, errNotFaked
}

func (f *fakeRuns) CancelPlan(context.Context, string) error { return errNotFaked }

func (f *fakeRuns) Retrying(context.Context, int) ([]runs.RetryingRun, error) { return nil, nil }

func (f *fakeRuns) JobStates(context.Context) (map[string]int, error) { return map[string]int{}, nil }

// newPageServer is a server over fakeRuns on a fresh database, for tests of pages alone.
func newPageServer(t *testing.T) *Server {
	t.Helper()
	st := openStore(t, filepath.Join(t.TempDir(), "pages.db"))
	s, err := New(Config{Runs: &fakeRuns{st: st}, Store: st, RunsPerMinute: 1000})
	require.NoError(t, err)
	return s
}
