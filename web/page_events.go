package web

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/scalein-planner/scalein/runs"
)

// sseKeepAlive is how often an idle stream gets a comment line.
const sseKeepAlive = time.Second

// maxStreamsPerClient bounds the open progress streams of one client (clientKey: the user when
// there are identities, else the address). Following a run costs little (its streams share one
// reader of the store, runs.Service.Follow), but each stream holds a connection and a goroutine.
const maxStreamsPerClient = 32

type progressEvent struct {
	Status   string  `json:"status"`
	Progress float64 `json:"progress"`
	Error    string  `json:"error,omitempty"`
}

// handleEvents is GET /runs/{id}/events: "progress" events while the run is queued or running,
// then one final event named after its end state (done, failed or cancelled), then the stream
// ends. It has no timeout: a run may take minutes. The states are runs.Service.Follow's.
func (s *Server) handleEvents(w http.ResponseWriter, r *http.Request) error {
	ctx, stop := context.WithCancel(r.Context())
	defer stop() // also when refused below: the follower ends with it
	states, err := s.runs.Follow(ctx, chi.URLParam(r, "id"))
	if err != nil {
		return err
	}
	closeStream, ok := s.streams.open(r)
	if !ok {
		who := "your address has"
		if s.identities() {
			who = "you have"
		}
		return &Error{Status: http.StatusTooManyRequests, Title: "Too many progress streams",
			Message:    fmt.Sprintf("%s %d progress streams open already; close some run pages and reload this one", who, maxStreamsPerClient),
			RetryAfter: 5}
	}
	defer closeStream()
	rc := http.NewResponseController(w)
	_ = rc.SetWriteDeadline(time.Time{}) // the server's write timeout must not cut the stream
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", dynamicCacheControl(r))
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)

	send := func(name string, ev progressEvent) error {
		data, _ := json.Marshal(ev)
		if _, err := fmt.Fprintf(w, "event: %s\ndata: %s\n\n", name, data); err != nil {
			return err
		}
		return rc.Flush()
	}
	ticker := time.NewTicker(sseKeepAlive)
	defer ticker.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case st, ok := <-states:
			switch {
			case !ok:
				return nil // the store could not be read; headers are sent: the client reconnects or gives up
			case runs.IsFinal(st.Status):
				_ = send(st.Status, progressEvent{Status: st.Status, Progress: st.Fraction, Error: st.Error})
				return nil
			}
			if err := send("progress", progressEvent{Status: st.Status, Progress: st.Fraction}); err != nil {
				return nil
			}
		case <-ticker.C:
			if _, err := fmt.Fprint(w, ": keep-alive\n\n"); err != nil {
				return nil
			}
			if err := rc.Flush(); err != nil {
				return nil
			}
		}
	}
}

// streamCounts are the open progress streams of each client (issue 19 M10).
type streamCounts struct {
	mu      sync.Mutex
	clients map[string]int
}

func newStreamCounts() *streamCounts { return &streamCounts{clients: map[string]int{}} }

// open counts a stream of the request's client; false when it already has its maximum.
func (c *streamCounts) open(r *http.Request) (closeStream func(), ok bool) {
	key := clientKey(r)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.clients[key] >= maxStreamsPerClient {
		return nil, false
	}
	c.clients[key]++
	return func() {
		c.mu.Lock()
		defer c.mu.Unlock()
		if c.clients[key]--; c.clients[key] <= 0 {
			delete(c.clients, key)
		}
	}, true
}
