package runs

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/scalein-planner/scalein/internal/runtest"
	"github.com/scalein-planner/scalein/sim"
	"github.com/scalein-planner/scalein/store"
)

// steppedRun is a fake simulator whose progress and end the test drives: a send on progress
// reports that fraction, a send on release ends the run with an empty report.
type steppedRun struct {
	started  chan struct{}
	progress chan float64
	release  chan struct{}
}

func newSteppedRun() *steppedRun {
	return &steppedRun{started: make(chan struct{}, 1), progress: make(chan float64), release: make(chan struct{})}
}

func (f *steppedRun) run(ctx context.Context, sc *sim.Scenario, opt sim.RunOptions) (*sim.Report, error) {
	f.started <- struct{}{}
	for {
		select {
		case p := <-f.progress:
			opt.Progress(p)
		case <-f.release:
			return &sim.Report{Schema: sim.ReportSchema, Name: sc.Name, ScenarioID: sc.ID()}, nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// nextState is the next state a follower gets, failing the test after 10 s.
func nextState(t *testing.T, states <-chan RunState) RunState {
	t.Helper()
	select {
	case st, ok := <-states:
		require.True(t, ok, "the states ended early")
		return st
	case <-time.After(10 * time.Second):
		t.Fatal("no state within 10 s")
		return RunState{}
	}
}

// requireClosed fails the test unless the follower's channel closes (within 10 s) with no more
// states.
func requireClosed(t *testing.T, states <-chan RunState) {
	t.Helper()
	select {
	case st, ok := <-states:
		require.False(t, ok, "a state after the last one: %+v", st)
	case <-time.After(10 * time.Second):
		t.Fatal("the states did not end within 10 s")
	}
}

// feedCount is how many store pollers the service has, and the followers of id's.
func feedCount(s *Service, id string) (feeds, subs int) {
	s.live.mu.Lock()
	defer s.live.mu.Unlock()
	if f := s.live.feeds[id]; f != nil {
		subs = f.subs
	}
	return len(s.live.feeds), subs
}

// A run this process is running is followed in memory: every reported fraction arrives at
// once, with no poller in play (it would not read the row again within the hour), then the end.
func TestFollowRunningHere(t *testing.T) {
	fake := newSteppedRun()
	s := newTestService(t, Config{Workers: 1, Simulate: fake.run}, false)
	s.followPoll = time.Hour
	require.NoError(t, s.Start(context.Background()))
	id := submit(t, s, runtest.Scenario("here"))
	<-fake.started

	states, err := s.Follow(context.Background(), id)
	require.NoError(t, err)
	assert.Equal(t, RunState{Status: store.StatusRunning}, nextState(t, states))
	for _, p := range []float64{0.3, 0.6} {
		fake.progress <- p
		assert.Equal(t, RunState{Status: store.StatusRunning, Fraction: p}, nextState(t, states))
	}
	feeds, _ := feedCount(s, id)
	assert.Zero(t, feeds, "a run running here needs no poller")
	close(fake.release)
	assert.Equal(t, RunState{Status: store.StatusDone, Fraction: 1}, nextState(t, states))
	requireClosed(t, states)
}

// A run another process works is followed through its row, which that process writes (here
// the test, as the other process).
func TestFollowRunningElsewhere(t *testing.T) {
	s := newTestService(t, Config{}, false)
	s.followPoll = 10 * time.Millisecond
	id := submit(t, s, runtest.Scenario("elsewhere"))
	ctx := context.Background()

	states, err := s.Follow(ctx, id)
	require.NoError(t, err)
	assert.Equal(t, RunState{Status: store.StatusQueued}, nextState(t, states))
	require.NoError(t, s.store.StartRun(ctx, id, time.Now()))
	assert.Equal(t, RunState{Status: store.StatusRunning}, nextState(t, states))
	require.NoError(t, s.store.SetProgress(ctx, id, 0.4))
	assert.Equal(t, RunState{Status: store.StatusRunning, Fraction: 0.4}, nextState(t, states))
	require.NoError(t, s.store.EndRun(ctx, id, store.StatusFailed, "out of memory elsewhere", time.Now()))
	assert.Equal(t, RunState{Status: store.StatusFailed, Fraction: 0.4, Error: "out of memory elsewhere"}, nextState(t, states))
	requireClosed(t, states)
	assert.Eventually(t, func() bool { feeds, _ := feedCount(s, id); return feeds == 0 },
		5*time.Second, 10*time.Millisecond, "the poller stops once the run has ended")
}

// A follower that began while the run was queued switches to memory when this process starts
// it and back to the store when it ends, missing neither: with a poll of an hour, only the
// start and end here can wake it.
func TestFollowSwitchesSourceAtStartAndEnd(t *testing.T) {
	fake := newSteppedRun()
	s := newTestService(t, Config{Workers: 1, Simulate: fake.run}, false)
	s.followPoll = time.Hour
	id := submit(t, s, runtest.Scenario("switch"))

	states, err := s.Follow(context.Background(), id)
	require.NoError(t, err)
	assert.Equal(t, RunState{Status: store.StatusQueued}, nextState(t, states))
	require.Eventually(t, func() bool { feeds, subs := feedCount(s, id); return feeds == 1 && subs == 1 },
		5*time.Second, time.Millisecond, "a queued run is followed through the store")

	require.NoError(t, s.Start(context.Background()))
	<-fake.started
	assert.Equal(t, RunState{Status: store.StatusRunning}, nextState(t, states))
	fake.progress <- 0.5
	assert.Equal(t, RunState{Status: store.StatusRunning, Fraction: 0.5}, nextState(t, states))
	_, subs := feedCount(s, id)
	assert.Zero(t, subs, "followed in memory, the follower left the poller")

	close(fake.release)
	assert.Equal(t, RunState{Status: store.StatusDone, Fraction: 1}, nextState(t, states))
	requireClosed(t, states)
}

// Issue 19 M10: the followers of a run this process does not hold share one poller of the
// store, and every one of them sees the run end.
func TestFollowersShareOnePoller(t *testing.T) {
	s := newTestService(t, Config{}, false) // never started: the run stays queued in the store
	s.followPoll = 10 * time.Millisecond
	id := submit(t, s, runtest.Scenario("watched"))
	other := submit(t, s, runtest.Scenario("watched too"))

	const n = 20
	var all []<-chan RunState
	for range n {
		states, err := s.Follow(context.Background(), id)
		require.NoError(t, err)
		assert.Equal(t, RunState{Status: store.StatusQueued}, nextState(t, states))
		all = append(all, states)
	}
	feeds, subs := feedCount(s, id)
	assert.Equal(t, 1, feeds, "one poller for the run's %d followers", n)
	assert.Equal(t, n, subs)
	otherStates, err := s.Follow(context.Background(), other)
	require.NoError(t, err)
	nextState(t, otherStates)
	feeds, _ = feedCount(s, id)
	assert.Equal(t, 2, feeds, "one poller per run")

	// A cancel written to the store reaches every follower through the one poller.
	require.NoError(t, s.store.EndRun(context.Background(), id, store.StatusCancelled, "cancelled by a user", time.Now()))
	for _, states := range all {
		assert.Equal(t, RunState{Status: store.StatusCancelled, Error: "cancelled by a user"}, nextState(t, states))
		requireClosed(t, states)
	}
	require.Eventually(t, func() bool { feeds, _ := feedCount(s, id); return feeds == 1 },
		5*time.Second, 10*time.Millisecond, "the ended run's poller stops; the other run's goes on")
}

// A follower whose context ends gets no more states, and the poller it leaves stops.
func TestFollowEndsWithItsContext(t *testing.T) {
	s := newTestService(t, Config{}, false)
	s.followPoll = 10 * time.Millisecond
	id := submit(t, s, runtest.Scenario("abandoned"))
	ctx, cancel := context.WithCancel(context.Background())
	states, err := s.Follow(ctx, id)
	require.NoError(t, err)
	nextState(t, states)
	cancel()
	requireClosed(t, states)
	require.Eventually(t, func() bool { feeds, _ := feedCount(s, id); return feeds == 0 },
		5*time.Second, 10*time.Millisecond, "a poller without followers stops")
}

// A run that has ended is its final state alone; an unknown run is the store's error.
func TestFollowEndedAndUnknownRuns(t *testing.T) {
	s := newTestService(t, Config{}, false)
	id := submit(t, s, runtest.Scenario("ended"))
	require.NoError(t, s.store.EndRun(context.Background(), id, store.StatusCancelled, "cancelled by a user before it started", time.Now()))
	states, err := s.Follow(context.Background(), id)
	require.NoError(t, err)
	assert.Equal(t, RunState{Status: store.StatusCancelled, Error: "cancelled by a user before it started"}, nextState(t, states))
	requireClosed(t, states)
	feeds, _ := feedCount(s, id)
	assert.Zero(t, feeds, "nothing to poll")

	_, err = s.Follow(context.Background(), "aaaaaaaaaaaaaaaa")
	assert.ErrorIs(t, err, store.ErrNotFound)
}
