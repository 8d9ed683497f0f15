package web

import (
	"mime"
	"net/http"
	"strings"

	"github.com/go-chi/chi/v5"
)

// probedMethods are the methods a 405 answer lists in its Allow header when the route has them.
var probedMethods = []string{http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete}

// allowedMethods lists the methods root routes for path (HEAD wherever GET is, as GetHead
// answers it), matching path against the patterns chi.Walk lists (chi's own Find answers a
// mounted subrouter's pattern for any method).
func allowedMethods(root chi.Router, path string) []string {
	trim := func(p string) string {
		if len(p) > 1 {
			return strings.TrimSuffix(p, "/")
		}
		return p
	}
	path = trim(path)
	methods := map[string]bool{}
	_ = chi.Walk(root, func(method, route string, _ http.Handler, _ ...func(http.Handler) http.Handler) error {
		if routeMatches(trim(route), path) {
			methods[method] = true
		}
		return nil
	})
	var out []string
	for _, m := range probedMethods {
		if methods[m] || m == http.MethodHead && methods[http.MethodGet] {
			out = append(out, m)
		}
	}
	return out
}

// routeMatches reports whether a chi pattern ("/runs/{id}/cancel", "/static/*") matches path.
func routeMatches(pattern, path string) bool {
	ps, xs := strings.Split(pattern, "/"), strings.Split(path, "/")
	for i, seg := range ps {
		if seg == "*" {
			return true
		}
		if i >= len(xs) {
			return false
		}
		if strings.HasPrefix(seg, "{") && strings.HasSuffix(seg, "}") {
			if xs[i] == "" {
				return false
			}
			continue
		}
		if seg != xs[i] {
			return false
		}
	}
	return len(ps) == len(xs)
}

// methodNotAllowed answers 405 with the Allow header RFC 9110 requires (as JSON in the API
// group, writeError).
func (s *Server) methodNotAllowed(root chi.Router) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		allowed := allowedMethods(root, r.URL.Path)
		w.Header().Set("Allow", strings.Join(allowed, ", "))
		err := &Error{Status: http.StatusMethodNotAllowed, Title: "Method not allowed",
			Message: r.Method + " is not allowed on " + r.URL.Path + "; use " + strings.Join(allowed, " or ")}
		s.writeError(w, r, err)
	}
}

// requireJSONBody answers 415 to a request of the API whose body is declared as anything but
// JSON or one of also (a form post or text/plain): the API reads JSON, and a browser form cannot
// send application/json across sites. A request without a Content-Type is read as JSON.
func (s *Server) requireJSONBody(also map[string]bool) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if ct := r.Header.Get("Content-Type"); ct != "" && r.Method != http.MethodGet && r.Method != http.MethodHead {
				mt, _, err := mime.ParseMediaType(ct)
				if err != nil || (mt != "application/json" && !strings.HasSuffix(mt, "+json") && !also[mt]) {
					s.writeError(w, r, &Error{Status: http.StatusUnsupportedMediaType, Title: "Unsupported media type",
						Message: "the API reads JSON only: send the body with Content-Type: application/json (got " + ct + ")"})
					return
				}
			}
			next.ServeHTTP(w, r)
		})
	}
}
