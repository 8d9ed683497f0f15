package web

import (
	"fmt"
	"net/http"
	"time"

	"github.com/go-chi/chi/v5/middleware"
	"github.com/go-chi/httprate"
)

// creationRequestsPerRun is how many creation requests (valid or not) a client may send per
// run it may start: a bound on the validation work of bodies that start nothing.
const creationRequestsPerRun = 4

// createLimit bounds what a client (clientKey) creates per minute: -runs-per-minute creations
// that were accepted (runs, pairs, sweeps, plans, uploads), and creationRequestsPerRun times as
// many requests of any outcome. A creation is counted when its request starts, so parallel
// requests cannot pass the limit together, and given back when the answer is a 4xx or 5xx
// (nothing was created): 30 invalid bodies no longer stop the valid one that follows (finding
// L6 of 2026-12b).
func (s *Server) createLimit() func(http.Handler) http.Handler {
	perMinute := s.cfg.RunsPerMinute
	// Wall-clock windows (an explicit counter), so a refund can name the window it counted in.
	counter := httprate.NewLocalLimitCounter(time.Minute)
	created := httprate.NewRateLimiter(perMinute, time.Minute, httprate.WithLimitCounter(counter))
	requests := httprate.NewRateLimiter(creationRequestsPerRun*perMinute, time.Minute)
	refuse := func(w http.ResponseWriter, r *http.Request, msg string) {
		err := &Error{Status: http.StatusTooManyRequests, Title: "Too many requests", Message: msg, RetryAfter: 60}
		s.writeError(w, r, err)
	}
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			key := clientKey(r)
			if requests.OnLimit(w, r, key) {
				refuse(w, r, fmt.Sprintf("you sent more than %d creation requests (valid or not) in the last minute; wait a minute and try again", creationRequestsPerRun*perMinute))
				return
			}
			window := time.Now().UTC().Truncate(time.Minute)
			if created.OnLimit(w, r, key) {
				refuse(w, r, fmt.Sprintf("you started more than %d runs, sweeps, plans or uploads in the last minute; wait a minute and try again", perMinute))
				return
			}
			ww := middleware.NewWrapResponseWriter(w, r.ProtoMajor)
			next.ServeHTTP(ww, r)
			if ww.Status() >= 400 && time.Now().UTC().Truncate(time.Minute).Equal(window) {
				_ = counter.IncrementBy(key, window, -1) // nothing was created: give it back
			}
		})
	}
}
