package web

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

// BenchmarkAccessChecks measures what the host check, the proxy identity and the read-only
// guard add to every request, on a handler that does nothing.
func BenchmarkAccessChecks(b *testing.B) {
	noop := http.HandlerFunc(func(http.ResponseWriter, *http.Request) {})
	for _, c := range []struct {
		name   string
		access Access
	}{
		{"single-user", Access{}},
		{"hosts+users+read-only", withUsers(Access{AllowedHosts: DefaultAllowedHosts("planner.example.com:80"), ReadOnly: true})},
	} {
		b.Run(c.name, func(b *testing.B) {
			s := &Server{cfg: Config{Access: c.access}}
			h := s.guardHosts(s.identify(s.readOnly(true)(noop)))
			req := httptest.NewRequest(http.MethodGet, "/runs/aaaaaaaaaaaaaaaa", nil)
			req.Host = "planner.example.com"
			req.Header.Set("X-Forwarded-User", "alice")
			req.Header.Set("X-Forwarded-Groups", "dev, ops")
			w := httptest.NewRecorder()
			for b.Loop() {
				h.ServeHTTP(w, req)
			}
		})
	}
}
