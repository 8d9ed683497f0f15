package runs

import (
	"context"
	"sync"
	"time"

	"github.com/scalein-planner/scalein/store"
)

// A run's live progress has one way out, Follow, which the run page's event stream and any
// other follower subscribe to. It has two sources. A run this process is running is followed
// in memory: its worker reports every change here (setProgress), and its followers are woken
// at once. Any other run (queued, or running in another worker process, which saves its
// progress to the run's row once a second) is followed through the store: one poller per run
// reads the row every followPoll and fans the state out to every follower of that run in this
// process (issue 19 M10: each event stream used to poll the database 5 times a second, so
// 2,000 streams made 11,000 PostgreSQL transactions a second).

// followPoll is how often the shared poller of a run that this process is not running reads the
// run's row. A worker saves its progress once a second (progressSaveInterval), so a faster poll
// only shortens how late a stream learns that a queued run started or a run ended elsewhere.
const followPoll = 200 * time.Millisecond

// feedReadTimeout bounds one read of a run's row by its poller, so a stuck database stalls the
// followers for a while rather than for ever (they end on the error and their clients retry).
const feedReadTimeout = 2 * time.Second

// RunState is a run's state as its followers see it: its status, how far it got (0 to 1) and,
// once it failed or was cancelled, why. It is final when IsFinal(Status).
type RunState struct {
	Status   string
	Fraction float64
	Error    string
}

// stateOf is the state a run's row records.
func stateOf(run store.Run) RunState {
	return RunState{Status: run.Status, Fraction: run.Progress, Error: run.Error}
}

// liveRuns is what this process knows of runs beyond the store: the runs it is running itself,
// each with a runWatch woken on every change, and the shared pollers (storeFeed) of the runs it
// follows through the store. The queue itself is River's (queue.go).
type liveRuns struct {
	mu      sync.Mutex
	watches map[string]*runWatch
	cancels map[string]context.CancelCauseFunc
	// anyChange is closed (and replaced) when a run starts or ends here, so a follower of a run
	// followed through the store learns at once that this process started or finished it.
	anyChange chan struct{}
	// feeds are the store pollers of the runs followed through the store, by run id.
	feeds map[string]*storeFeed
}

// runWatch is the live state of one running run. changed is closed (and replaced) on every
// change, which wakes every follower waiting on it.
type runWatch struct {
	status   string
	progress float64
	changed  chan struct{}
}

// watchState is a copy of a runWatch, safe to read without the lock, with the channel closed at
// the run's next change.
type watchState struct {
	Status   string
	Fraction float64
	Changed  <-chan struct{}
}

// storeFeed is the one poller of a run's row for all the followers of the run in this process.
type storeFeed struct {
	subs  int
	state RunState
	err   error
	// ready is false until the first read, and again after the run ended here (reset): until
	// the next read, the last one may predate the end.
	ready bool
	// gen counts resets; a read begun before one is not published, for the same reason.
	gen int
	// changed is closed (and replaced) on every change; kick asks for a read now rather than at
	// the next tick (buffered: one pending read is enough).
	changed chan struct{}
	kick    chan struct{}
}

// feedSnapshot is a copy of a storeFeed, safe to read without the lock.
type feedSnapshot struct {
	state   RunState
	err     error
	ready   bool
	changed <-chan struct{}
}

func newLiveRuns() *liveRuns {
	return &liveRuns{
		watches:   map[string]*runWatch{},
		cancels:   map[string]context.CancelCauseFunc{},
		anyChange: make(chan struct{}),
		feeds:     map[string]*storeFeed{},
	}
}

// setRunning records a run this process has started and its cancel function.
func (q *liveRuns) setRunning(id string, cancel context.CancelCauseFunc) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.cancels[id] = cancel
	w, ok := q.watches[id]
	if !ok {
		w = &runWatch{changed: make(chan struct{})}
		q.watches[id] = w
	}
	w.status = store.StatusRunning
	q.notifyLocked(w)
	q.broadcastLocked()
}

// cancelRunning cancels a run running here; it reports whether it was.
func (q *liveRuns) cancelRunning(id string) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	cancel, ok := q.cancels[id]
	if ok {
		cancel(errCancelledByUser)
	}
	return ok
}

// setProgress updates a running run's progress and wakes its followers.
func (q *liveRuns) setProgress(id string, p float64) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if w, ok := q.watches[id]; ok {
		w.progress = p
		q.notifyLocked(w)
	}
}

// finish forgets a run that ended here (done, failed, cancelled or requeued at shutdown) and
// wakes its followers, who then read its final state from the store. The run's poller, if one
// is still about, forgets what it read before and reads the row again at once: its last read
// may predate the end, and its followers would see the run go back to an older state.
func (q *liveRuns) finish(id, status string) {
	q.mu.Lock()
	defer q.mu.Unlock()
	delete(q.cancels, id)
	if w, ok := q.watches[id]; ok {
		w.status = status
		close(w.changed)
		delete(q.watches, id)
	}
	if f, ok := q.feeds[id]; ok {
		f.ready = false
		f.gen++
		select {
		case f.kick <- struct{}{}:
		default:
		}
	}
	q.broadcastLocked()
}

func (q *liveRuns) broadcastLocked() {
	close(q.anyChange)
	q.anyChange = make(chan struct{})
}

// changes returns a channel closed at the next start or end of a run in this process.
func (q *liveRuns) changes() <-chan struct{} {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.anyChange
}

func (q *liveRuns) notifyLocked(w *runWatch) {
	close(w.changed)
	w.changed = make(chan struct{})
}

// watch returns the live state of a run this process is running, or false.
func (q *liveRuns) watch(id string) (watchState, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	w, ok := q.watches[id]
	if !ok {
		return watchState{}, false
	}
	return watchState{Status: w.status, Fraction: w.progress, Changed: w.changed}, true
}

// join adds a follower to the run's poller; isNew says the caller must start the poller.
func (q *liveRuns) join(id string) (f *storeFeed, isNew bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	f, ok := q.feeds[id]
	if !ok {
		f = &storeFeed{changed: make(chan struct{}), kick: make(chan struct{}, 1)}
		q.feeds[id] = f
	}
	f.subs++
	return f, !ok
}

// leave removes a follower from a poller, which stops after its next read if it has no more.
func (q *liveRuns) leave(f *storeFeed) {
	q.mu.Lock()
	defer q.mu.Unlock()
	f.subs--
}

func (q *liveRuns) snapshot(f *storeFeed) feedSnapshot {
	q.mu.Lock()
	defer q.mu.Unlock()
	return feedSnapshot{state: f.state, err: f.err, ready: f.ready, changed: f.changed}
}

func (q *liveRuns) generation(f *storeFeed) int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return f.gen
}

// publish records a poller's read of the run, begun at generation gen, and wakes the followers
// if it changed anything. It reports whether the poller is done: no followers are left, or the
// run has ended (a later follower starts a new poller, or reads the end state itself).
func (q *liveRuns) publish(id string, f *storeFeed, gen int, state RunState, err error) (done bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if gen != f.gen {
		return false // reset meanwhile: the kick is pending, and the next read is the one to trust
	}
	if !f.ready || (err != nil) != (f.err != nil) || state != f.state {
		f.state, f.err, f.ready = state, err, true
		close(f.changed)
		f.changed = make(chan struct{})
	}
	done = f.subs == 0 || (err == nil && IsFinal(state.Status))
	if done && q.feeds[id] == f {
		delete(q.feeds, id)
	}
	return done
}

// Progress is the state of a run this process is running, now, without waiting; false for any
// other run (queued, ended, or running in another process), whose state is its row's.
func (s *Service) Progress(id string) (RunState, bool) {
	w, ok := s.live.watch(id)
	return RunState{Status: w.Status, Fraction: w.Fraction}, ok
}

// Follow returns the run's state now and at each change until it ends. The first state comes at
// once, then one whenever the status, the fraction or the error changes, the last one final
// (IsFinal); a follower slower than the run misses the states in between, never the last one.
// A run this process is running is followed in memory, any other through the store by the
// run's one shared poller; a run that starts or ends here meanwhile switches source without a
// start or an end going unseen. The channel closes after the final state, when ctx ends, or
// when the store cannot be read (then without a final state: the caller may follow again).
// The error is the first read's (store.ErrNotFound for an unknown run).
func (s *Service) Follow(ctx context.Context, id string) (<-chan RunState, error) {
	run, err := s.store.GetRunStatus(ctx, id)
	if err != nil {
		return nil, err
	}
	out := make(chan RunState)
	go s.follow(ctx, id, stateOf(run), out)
	return out, nil
}

// follow sends the run's states to out until the final one, starting from first (the row as
// Follow read it), and closes out.
func (s *Service) follow(ctx context.Context, id string, first RunState, out chan<- RunState) {
	defer close(out)
	var feed *storeFeed // the run's shared poller, while the run is followed through the store
	defer func() {
		if feed != nil {
			s.live.leave(feed)
		}
	}()
	var last RunState
	sent := false
	for {
		anyChange := s.live.changes() // before the look-up, so no start or end here is missed
		var (
			next RunState
			have bool
			wake <-chan struct{}
		)
		if w, live := s.live.watch(id); live {
			if feed != nil { // followed in memory now: the poller need not read for this one
				s.live.leave(feed)
				feed = nil
			}
			next, have, wake = RunState{Status: w.Status, Fraction: w.Fraction}, true, w.Changed
		} else {
			if feed == nil {
				if !sent && IsFinal(first.Status) { // ended already: nothing to follow
					sendState(ctx, out, first)
					return
				}
				var isNew bool
				if feed, isNew = s.live.join(id); isNew {
					go s.pollFeed(id, feed)
				}
			}
			snap := s.live.snapshot(feed)
			wake = snap.changed
			switch {
			case snap.err != nil:
				return // the caller follows again or gives up
			case snap.ready:
				next, have = snap.state, true
			case !sent:
				// The poller has not read the row yet: the row as Follow read it is the state
				// now. After a start or an end here, nothing is sent until the poller reads.
				next, have = first, true
			}
		}
		if have && (!sent || next != last) {
			if !sendState(ctx, out, next) {
				return
			}
			last, sent = next, true
			if IsFinal(next.Status) {
				return
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-wake: // a change here, or the poller read a change
		case <-anyChange: // this process started or finished a run: maybe this one
		}
	}
}

// sendState sends st unless ctx ends first; it reports whether it sent.
func sendState(ctx context.Context, out chan<- RunState, st RunState) bool {
	select {
	case out <- st:
		return true
	case <-ctx.Done():
		return false
	}
}

// pollFeed reads the run's row every followPoll (or at once when kicked) while the poller has
// followers and the run has not ended, publishing every change to them.
func (s *Service) pollFeed(id string, f *storeFeed) {
	t := time.NewTicker(s.followPoll)
	defer t.Stop()
	for {
		gen := s.live.generation(f)
		ctx, cancel := context.WithTimeout(context.Background(), feedReadTimeout)
		run, err := s.store.GetRunStatus(ctx, id)
		cancel()
		if s.live.publish(id, f, gen, stateOf(run), err) {
			return
		}
		select {
		case <-t.C:
		case <-f.kick:
		}
	}
}
