package web

import (
	"io"
	"log/slog"
	"net/http"

	"github.com/go-chi/chi/v5/middleware"
	"github.com/go-chi/httplog/v3"
)

// Nothing reads a request body before the gates, and nothing reads the rest of it after the
// answer (finding H1 of the 2026-12c probe: the request logger copied every body into memory,
// whole, and read what the handler left once it had answered, so a 1 GiB body to /livez cost
// 3 GB for a 405). The logger is given no body hook (routes.go); the request id reaches its
// line through logRequestID. A request whose body the handler did not read to its end — a gate
// refused it, or the route takes no body — is answered with Connection: close, so net/http
// closes the connection instead of reading what is left (it would read up to 256 KiB).

// closeUnread marks the answer of a request whose body was left unread Connection: close.
func closeUnread(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Body == nil || r.Body == http.NoBody || r.ContentLength == 0 {
			next.ServeHTTP(w, r)
			return
		}
		b := &watchedBody{ReadCloser: r.Body, declared: r.ContentLength}
		r.Body = b
		next.ServeHTTP(&closeUnreadWriter{ResponseWriter: w, body: b}, r)
	})
}

// watchedBody is a request body that knows whether it was read to its end.
type watchedBody struct {
	io.ReadCloser
	declared int64 // Content-Length, or -1 when unknown (chunked)
	read     int64
	eof      bool
}

func (b *watchedBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.read += int64(n)
	switch {
	case err == io.EOF:
		b.eof = true
	case err != nil:
		err = &bodyReadError{err: err}
	}
	return n, err
}

// bodyReadError is a request body that stopped before its end: the client went away, the
// connection broke or its read deadline passed (finding L4 of 2026-12c: a closed upload was
// answered 503 and logged as a server error). problemOf makes it a 400 (408 past a deadline),
// logged at WARN as the client's doing.
type bodyReadError struct{ err error }

func (e *bodyReadError) Error() string { return "reading the request body: " + e.err.Error() }
func (e *bodyReadError) Unwrap() error { return e.err }

// clientAborted is the problem of a body that stopped before its end.
func clientAborted(e *bodyReadError) *Error {
	if isTimeout(e) {
		return &Error{Status: http.StatusRequestTimeout, Title: "Request too slow", Err: e,
			Message: "the request body did not arrive within its deadline; send it again from a faster connection"}
	}
	return &Error{Status: http.StatusBadRequest, Title: "Request cut short", Err: e,
		Message: "the request body stopped before its end: the client went away or the connection broke; send it again"}
}

// done reports whether the whole body was read: EOF seen, or its declared length.
func (b *watchedBody) done() bool {
	return b.eof || (b.declared >= 0 && b.read >= b.declared)
}

// closeUnreadWriter sets Connection: close on an answer whose request body is not done when
// the answer starts.
type closeUnreadWriter struct {
	http.ResponseWriter
	body    *watchedBody
	started bool
}

func (w *closeUnreadWriter) start() {
	if w.started {
		return
	}
	w.started = true
	if !w.body.done() {
		w.ResponseWriter.Header().Set("Connection", "close")
	}
}

func (w *closeUnreadWriter) WriteHeader(code int) {
	if code >= 200 { // an informational answer (103) starts nothing
		w.start()
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *closeUnreadWriter) Write(p []byte) (int, error) {
	w.start()
	return w.ResponseWriter.Write(p)
}

// Flush keeps progress streams working through the logger's writer, which offers Flush only
// when what it wraps does.
func (w *closeUnreadWriter) Flush() {
	w.start()
	_ = http.NewResponseController(w.ResponseWriter).Flush()
}

// Unwrap lets http.ResponseController reach the connection (read deadlines, flushes).
func (w *closeUnreadWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// logRequestID puts the request id on the request's log line (the logger's body hook did, at
// the cost of H1).
func logRequestID(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		httplog.SetAttrs(r.Context(), slog.String("request_id", middleware.GetReqID(r.Context())))
		next.ServeHTTP(w, r)
	})
}
