package web

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/go-chi/httprate"

	"github.com/scalein-planner/scalein/sim"
)

// The exports that simulate a run again (passes.jsonl, trace.json) allocate as much as the run
// did, so they go through the same memory budget as runs (issue 19 H3): each takes a grant of
// its run's estimate from memoryBudget, behind a small semaphore of exports at once, and a
// per-client rate limit of their own (L10: not the run-creation bucket, and only once the run is
// known to exist and be done). A run estimated above this process's whole budget is not
// exported here at all: the command line exports it (scalein sim -passes). trace.json is cached
// per run, so asking again costs nothing.

const (
	// maxExportsAtOnce is how many exports simulate at once in one process.
	maxExportsAtOnce = 2
	// exportWait is how long an export waits for a slot and for memory before a 503.
	exportWait = 10 * time.Second
	// exportRetryAfterSeconds is the Retry-After of an export refused for now.
	exportRetryAfterSeconds = 10
	// traceCacheBytes bounds the cached trace.json bodies of one process.
	traceCacheBytes = 64 << 20
)

// exportGate is the concurrency bound, the rate limit and the trace cache of the exports.
type exportGate struct {
	wait       time.Duration // exportWait; tests shorten it
	uploadWait time.Duration // uploadWait (uploads.go); tests shorten it
	// bodyGrace and minBodyRate are uploadBodyGrace and minUploadBytesPerSecond
	// (upload_body.go); tests shorten them.
	bodyGrace   time.Duration
	minBodyRate int64
	slots       chan struct{}
	limit       *httprate.RateLimiter
	traces      *bodyCache
}

func newExportGate(perMinute int) *exportGate {
	return &exportGate{
		wait:        exportWait,
		uploadWait:  uploadWait,
		bodyGrace:   uploadBodyGrace,
		minBodyRate: minUploadBytesPerSecond,
		slots:       make(chan struct{}, maxExportsAtOnce),
		limit:       httprate.NewRateLimiter(perMinute, time.Minute),
		traces:      newBodyCache(traceCacheBytes),
	}
}

// exports returns the server's export gate, made on first use.
func (s *Server) exports() *exportGate {
	s.exportOnce.Do(func() { s.exportGateV = newExportGate(s.cfg.RunsPerMinute) })
	return s.exportGateV
}

// admitExport counts an export against the client's export rate (once the run is known to be
// done), then waits for an export slot and for the run's memory estimate to fit the budget.
// release gives both back.
func (s *Server) admitExport(w http.ResponseWriter, r *http.Request, sc *sim.Scenario) (release func(), err error) {
	g := s.exports()
	key := "export:" + clientKey(r)
	if g.limit.OnLimit(w, r, key) {
		return nil, &Error{Status: http.StatusTooManyRequests, Title: "Too many exports",
			Message:    fmt.Sprintf("you asked for more than %d exports that simulate a run again (passes.jsonl, trace.json) in the last minute; wait a minute and try again", s.cfg.RunsPerMinute),
			RetryAfter: 60}
	}
	est, total := s.runs.Estimate(sc), s.runs.Limits().MaxTotalMemory
	if est > total {
		return nil, &Error{Status: http.StatusServiceUnavailable, Title: "Too large to export here",
			Message: fmt.Sprintf("simulating this run again needs about %s, more than this server's memory budget for runs and exports (-max-total-memory %s); export it on the command line: scalein sim -passes FILE -worker N",
				sim.FormatBytes(est), sim.FormatBytes(total))}
	}
	busy := &Error{Status: http.StatusServiceUnavailable, Title: "Exports busy",
		Message:    "the server is busy with other exports or runs and has no memory to simulate this run again now; try again in a few seconds",
		RetryAfter: exportRetryAfterSeconds}
	ctx, cancel := context.WithTimeout(r.Context(), g.wait)
	defer cancel()
	select {
	case g.slots <- struct{}{}:
	case <-ctx.Done():
		return nil, busy
	}
	grant, err := s.runs.Reserve(ctx, est)
	if err != nil {
		<-g.slots
		return nil, busy
	}
	return func() {
		grant() // also notes a big request: memory is handed back once idle
		<-g.slots
	}, nil
}

// bodyCache keeps response bodies by key up to a total size, dropping the oldest first.
type bodyCache struct {
	mu    sync.Mutex
	max   int
	size  int
	order []string
	m     map[string][]byte
}

func newBodyCache(maxBytes int) *bodyCache { return &bodyCache{max: maxBytes, m: map[string][]byte{}} }

func (c *bodyCache) get(key string) ([]byte, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	b, ok := c.m[key]
	return b, ok
}

// put keeps body unless it alone is larger than the cache.
func (c *bodyCache) put(key string, body []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(body) > c.max {
		return
	}
	if old, ok := c.m[key]; ok {
		c.size -= len(old)
	} else {
		c.order = append(c.order, key)
	}
	c.m[key] = body
	c.size += len(body)
	for c.size > c.max && len(c.order) > 0 {
		k := c.order[0]
		c.order = c.order[1:]
		c.size -= len(c.m[k])
		delete(c.m, k)
	}
}
