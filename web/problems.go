package web

import (
	"net/http"
	"strconv"
	"unicode/utf8"

	"github.com/scalein-planner/scalein/sim"
)

// dbRetryAfterSeconds is the Retry-After of a 503 answered while the database is unavailable:
// a PostgreSQL restart or failover usually takes a few seconds.
const dbRetryAfterSeconds = 5

// dbUnavailable is the answer to a request the database could not serve for now (issue 19 M9):
// a 503 that says so and when to try again, not a 500 that reads as a bug.
func dbUnavailable(err error) *Error {
	return &Error{Status: http.StatusServiceUnavailable, Title: "Database unavailable",
		Message:    "database unavailable: the server cannot reach its database right now; nothing was lost, try again in a few seconds",
		RetryAfter: dbRetryAfterSeconds, Err: err}
}

// dbBusyRetryAfterSeconds is the Retry-After of a 503 answered when a write lost to
// concurrent ones on every attempt: the writes it lost to end within a second.
const dbBusyRetryAfterSeconds = 1

// dbBusy is the answer to a write that conflicted with concurrent writes past its retries
// (store.ErrBusy): the database is up and nothing was written, so the same request may be sent
// again; a 503, never a 500.
func dbBusy(err error) *Error {
	return &Error{Status: http.StatusServiceUnavailable, Title: "Database busy",
		Message:    "database busy: many writes arrived at once and this one was not made; nothing was written, send it again in a second",
		RetryAfter: dbBusyRetryAfterSeconds, Err: err}
}

// setRetryAfter writes the Retry-After header of a problem that has one.
func setRetryAfter(w http.ResponseWriter, p *Error) {
	if p.RetryAfter > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(p.RetryAfter))
	}
}

// maxEchoedRunes bounds any one message a user sees: a message that quotes a bad value (a 30 MB
// string where a number belongs) quotes its beginning only.
const maxEchoedRunes = 600

// clip shortens s to maxEchoedRunes characters, saying how much was left out.
func clip(s string) string {
	if utf8.RuneCountInString(s) <= maxEchoedRunes {
		return s
	}
	n := 0
	for i := range s {
		if n == maxEchoedRunes {
			return s[:i] + "… (" + strconv.Itoa(len(s)-i) + " more bytes)"
		}
		n++
	}
	return s
}

// clipped returns p with its message and field messages clipped, copying only when needed.
func clipped(p *Error) *Error {
	long := utf8.RuneCountInString(p.Message) > maxEchoedRunes
	for _, f := range p.Fields {
		long = long || utf8.RuneCountInString(f.Message) > maxEchoedRunes || utf8.RuneCountInString(f.Path) > maxEchoedRunes
	}
	if !long {
		return p
	}
	c := *p
	c.Message = clip(p.Message)
	c.Fields = make([]sim.FieldError, len(p.Fields))
	for i, f := range p.Fields {
		c.Fields[i] = sim.FieldError{Path: clip(f.Path), Message: clip(f.Message)}
	}
	return &c
}

// livez is GET /livez, the liveness probe: it answers as long as the process serves HTTP, and
// never asks the database, so a database outage does not make Kubernetes restart healthy pods
// (it only takes them out of the Service, through /healthz as the readiness probe).
func livez(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	_, _ = w.Write([]byte("ok\n"))
}
