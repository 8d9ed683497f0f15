package web

import (
	"context"
	"net/http"
	"sync"
	"time"

	"github.com/scalein-planner/scalein/runs"
	"github.com/scalein-planner/scalein/store"
)

// Progress streams of runs this process is not running read the run's row (issue 19 M10: each
// stream used to poll the database 5 times a second, so 2,000 streams made 11,000 PostgreSQL
// transactions a second). Now one poller per run reads it every ssePoll and fans the state out
// to every stream of that run, and one client may hold at most maxStreamsPerClient streams.

// maxStreamsPerClient bounds the open progress streams of one client (clientKey: the user when
// there are identities, else the address).
const maxStreamsPerClient = 32

// runPollers are the shared pollers of this process, by run id, and the streams per client.
type runPollers struct {
	mu      sync.Mutex
	runs    map[string]*runPoller
	clients map[string]int
}

// runPoller reads one run's status for all its streams.
type runPoller struct {
	subs    int
	run     store.Run
	err     error
	ready   bool
	changed chan struct{} // closed (and replaced) on every change
}

// pollers returns the server's pollers, made on first use.
func (s *Server) pollers() *runPollers {
	s.pollersOnce.Do(func() {
		s.pollersV = &runPollers{runs: map[string]*runPoller{}, clients: map[string]int{}}
	})
	return s.pollersV
}

// openStream counts a stream of the request's client; false when it already has its maximum.
func (p *runPollers) openStream(r *http.Request) (closeStream func(), ok bool) {
	key := clientKey(r)
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.clients[key] >= maxStreamsPerClient {
		return nil, false
	}
	p.clients[key]++
	return func() {
		p.mu.Lock()
		defer p.mu.Unlock()
		if p.clients[key]--; p.clients[key] <= 0 {
			delete(p.clients, key)
		}
	}, true
}

// subscribe returns the run's poller, starting it for the first stream; leavePoller when done.
func (s *Server) subscribe(id string) *runPoller {
	p := s.pollers()
	p.mu.Lock()
	rp, ok := p.runs[id]
	if !ok {
		rp = &runPoller{changed: make(chan struct{})}
		p.runs[id] = rp
		go s.poll(id, rp)
	}
	rp.subs++
	p.mu.Unlock()
	return rp
}

func (s *Server) leavePoller(rp *runPoller) {
	p := s.pollers()
	p.mu.Lock()
	rp.subs--
	p.mu.Unlock()
}

// pollSnapshot is a poller's latest read of the run, and the channel closed at its next change.
type pollSnapshot struct {
	run     store.Run
	err     error
	ready   bool
	changed <-chan struct{}
}

// snapshot is the poller's latest read of the run.
func (s *Server) snapshot(rp *runPoller) pollSnapshot {
	p := s.pollers()
	p.mu.Lock()
	defer p.mu.Unlock()
	return pollSnapshot{run: rp.run, err: rp.err, ready: rp.ready, changed: rp.changed}
}

// poll reads the run every ssePoll while it has streams and is not final, publishing changes.
func (s *Server) poll(id string, rp *runPoller) {
	p := s.pollers()
	t := time.NewTicker(ssePoll)
	defer t.Stop()
	for {
		ctx, cancel := context.WithTimeout(context.Background(), ssePoll*10)
		run, err := s.store.GetRunStatus(ctx, id)
		cancel()
		p.mu.Lock()
		if !rp.ready || err != nil != (rp.err != nil) || run.Status != rp.run.Status || run.Progress != rp.run.Progress || run.Error != rp.run.Error {
			rp.run, rp.err, rp.ready = run, err, true
			close(rp.changed)
			rp.changed = make(chan struct{})
		}
		done := rp.subs == 0 || (err == nil && runs.IsFinal(run.Status))
		if done {
			delete(p.runs, id) // a later stream starts a new poller
		}
		p.mu.Unlock()
		if done {
			return
		}
		<-t.C
	}
}
