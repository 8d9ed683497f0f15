package web

import (
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"net/http"
	"runtime/debug"

	"github.com/a-h/templ"
)

// Body limits (docs/performance.md): forms and scenario JSON up to 32 MiB, trace uploads up to 64 MiB plus
// room for the multipart framing.
const (
	maxFormBytes      = 32 << 20
	maxTraceBytes     = 64 << 20
	maxUploadBodySize = maxTraceBytes + 1<<20
)

// securityHeaders sets a strict CSP with a fresh nonce per request (put in the context for
// templ's script tags) and the usual hardening headers.
func securityHeaders(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		nonce := newNonce()
		h := w.Header()
		h.Set("Content-Security-Policy", "default-src 'self'; script-src 'self' 'nonce-"+nonce+"'; "+
			"style-src 'self'; img-src 'self' data:; object-src 'none'; base-uri 'none'; "+
			"frame-ancestors 'none'; form-action 'self'")
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "same-origin")
		h.Set("X-Frame-Options", "DENY")
		next.ServeHTTP(w, r.WithContext(templ.WithNonce(r.Context(), nonce)))
	})
}

func newNonce() string {
	var b [18]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go ≥ 1.24)
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// limitBody bounds the request body of a route that takes one to limit bytes: maxFormBytes for
// forms and JSON, maxUploadBodySize for uploads (routes.go says which route has which). A body
// whose declared length is over the limit is refused before a byte of it is read.
func (s *Server) limitBody(limit int64) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.ContentLength > limit {
				s.writeError(w, r, &http.MaxBytesError{Limit: limit})
				return
			}
			if r.Body != nil && r.Body != http.NoBody {
				r.Body = http.MaxBytesReader(w, r.Body, limit)
			}
			next.ServeHTTP(w, r)
		})
	}
}

// recoverer turns a panic into a logged 500, written as the route's group says (writeError). It
// should never fire.
func (s *Server) recoverer(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			v := recover()
			if v == nil || v == http.ErrAbortHandler {
				if v != nil {
					panic(v)
				}
				return
			}
			s.log.ErrorContext(r.Context(), "panic while serving", "path", r.URL.Path, "panic", v, "stack", string(debug.Stack()))
			err := &Error{Status: http.StatusInternalServerError, Title: "Something went wrong",
				Message: "an internal error stopped this page; it has been logged", Err: fmt.Errorf("panic: %v", v)}
			s.writeError(w, r, err)
		}()
		next.ServeHTTP(w, r)
	})
}
