package web

import (
	"fmt"
	"net/http"
	"time"

	"github.com/go-chi/httprate"
)

// Transforms are the requests that parse a scenario or a large answer into an answer and store
// nothing: importing an HPA or KEDA manifest (POST /api/v1/hpa/import, POST /plans/import-hpa,
// the scenario form's import_hpa), and reading a Prometheus answer into stages (POST
// /api/v1/load/prometheus, the form's load_prometheus). Finding M2 of the 2026-12c probe: they
// parsed up to 32 MiB each, as many at once as clients sent (six 19 MB imports took the server
// to 3.2 GB), with no rate limit, and viewers of a read-only server could keep a core busy.
// They now pass the admission of a creation: viewers of a read-only server are refused (a
// transform is only the first step of a run or plan they may not create), a rate per client,
// and the large-body slots with a memory grant while they parse (parseBody).

// transformsPerRun is how many transforms a client may send per run it may create a minute
// (-runs-per-minute): a person importing and trying again does a few per run.
const transformsPerRun = 4

// newTransformLimiter is the per-client rate of transforms.
func newTransformLimiter(runsPerMinute int) *httprate.RateLimiter {
	return httprate.NewRateLimiter(transformsPerRun*runsPerMinute, time.Minute)
}

// admitTransform refuses a transform from a viewer of a read-only server, or over the client's
// rate; the handler then parses under parseBody.
func (s *Server) admitTransform(w http.ResponseWriter, r *http.Request) error {
	if !s.mayStore(r) {
		return &Error{Status: http.StatusForbidden, Title: "Read-only",
			Message: "this server is read-only (-read-only): importing a manifest or a Prometheus answer prepares a run or plan, which viewers cannot create; ask an admin, or use a server that is not read-only"}
	}
	return s.transformLimit(w, r)
}

// transformLimit refuses a transform over the client's rate.
func (s *Server) transformLimit(w http.ResponseWriter, r *http.Request) error {
	if s.transforms.OnLimit(w, r, clientKey(r)) {
		return &Error{Status: http.StatusTooManyRequests, Title: "Too many requests", RetryAfter: 60,
			Message: fmt.Sprintf("you sent more than %d imports (manifests, Prometheus answers) in the last minute; wait a minute and try again", transformsPerRun*s.cfg.RunsPerMinute)}
	}
	return nil
}

// transformRate is the transform rate as a route's gate (the viewer check is the read-only
// gate before it).
func (s *Server) transformRate(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := s.transformLimit(w, r); err != nil {
			s.writeError(w, r, err)
			return
		}
		next.ServeHTTP(w, r)
	})
}
