package web

import (
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/scalein-planner/scalein/runs"
)

// sseKeepAlive is how often an idle stream gets a comment line.
const sseKeepAlive = time.Second

// ssePoll is how often a stream re-reads a run that this process is not running (queued, or
// running in another worker process, which saves its progress to the run's row).
const ssePoll = 200 * time.Millisecond

type progressEvent struct {
	Status   string  `json:"status"`
	Progress float64 `json:"progress"`
	Error    string  `json:"error,omitempty"`
}

// handleEvents is GET /runs/{id}/events: "progress" events while the run is queued or running,
// then one final event named after its end state (done, failed or cancelled), then the stream
// ends. It has no timeout: a run may take minutes.
func (s *Server) handleEvents(w http.ResponseWriter, r *http.Request) error {
	id := chi.URLParam(r, "id")
	run, err := s.store.GetRunStatus(r.Context(), id)
	if err != nil {
		return err
	}
	closeStream, ok := s.pollers().openStream(r)
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
	var poller *runPoller // the run's shared poller, once a look-up has to go to the store
	defer func() {
		if poller != nil {
			s.leavePoller(poller)
		}
	}()
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
	last := -1.0
	lastStatus := ""
	ticker := time.NewTicker(sseKeepAlive)
	defer ticker.Stop()
	for {
		anyChange := s.runs.Changes() // before the look-up, so no start or end is missed
		snap, live := s.runs.Progress(id)
		if !live {
			// Not (or no longer) held here: the store has the truth, read by the run's one
			// shared poller for every stream of it (event_pollers.go).
			if poller == nil {
				if runs.IsFinal(run.Status) { // as read above: nothing to follow
					_ = send(run.Status, progressEvent{Status: run.Status, Progress: run.Progress, Error: run.Error})
					return nil
				}
				poller = s.subscribe(id)
			}
			ps := s.snapshot(poller)
			polled, changed := ps.run, ps.changed
			switch {
			case !ps.ready:
				snap = runs.Progress{Status: run.Status, Fraction: run.Progress, Changed: changed}
			case ps.err != nil:
				return nil // headers are sent; the client reconnects or gives up
			case runs.IsFinal(polled.Status):
				_ = send(polled.Status, progressEvent{Status: polled.Status, Progress: polled.Progress, Error: polled.Error})
				return nil
			default:
				snap = runs.Progress{Status: polled.Status, Fraction: polled.Progress, Changed: changed}
			}
		}
		if snap.Fraction != last || snap.Status != lastStatus {
			last, lastStatus = snap.Fraction, snap.Status
			if err := send("progress", progressEvent{Status: snap.Status, Progress: snap.Fraction}); err != nil {
				return nil
			}
		}
		select {
		case <-r.Context().Done():
			return nil
		case <-snap.Changed: // a change here, or the shared poller read a change
		case <-anyChange: // this process started or finished a run: maybe this one
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
