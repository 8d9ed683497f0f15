package web

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/go-chi/chi/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// What the routes are for, as the gates must know it. A new route that stores, creates runs,
// takes an upload or is for admins must be named here, or TestRouteGates fails: the point is
// that adding a route makes one think about its gates.
var (
	// probeRoutes come from the node: no host check, no identity, no body.
	probeRoutes = []string{"GET /healthz", "GET /livez"}
	// staticRoutes are public files: no identity, no body.
	staticRoutes = []string{"GET /static/*"}
	// viewerForms take a body and store nothing: viewers of a read-only server may use them.
	viewerForms = []string{"POST /", "POST /sweeps/new", "POST /plans/new"}
	// transforms parse a scenario or a large answer and store nothing, with a creation's
	// admission: viewers refused, a rate of their own (POST / checks its import actions in its
	// handler), the large-body slots in their handlers (finding M2 of 2026-12c).
	transformRoutes = []string{"POST /plans/import-hpa", "POST /api/v1/hpa/import", "POST /api/v1/load/prometheus"}
	// creations start runs (a sweep's points are bounded by its own quota, in createSweep);
	// the value says whether the route has the run quota.
	creations = map[string]bool{
		"POST /runs": true, "POST /pairs": true, "POST /sweeps": false, "POST /plans": true,
		"POST /api/v1/runs": true, "POST /api/v1/pairs": true, "POST /api/v1/sweeps": false, "POST /api/v1/plans": true,
	}
	// uploads store a file: the larger body limit, the rate limit, paced bodies.
	uploads = []string{"POST /traces", "POST /calibrations", "POST /api/v1/calibrations"}
	// adminRoutes are for the admins once there are identities.
	adminRoutes = []string{"GET /admin/queue", "POST /calibrations/{sha}/delete", "DELETE /api/v1/calibrations/{sha}"}
)

// routeGate is one gate before a route: its name and how it is set ("32 MiB").
type routeGate struct{ name, param string }

// gatedRoute is a route and the gates before it, in the order they run.
type gatedRoute struct {
	method, pattern string
	gates           []routeGate
}

func (r gatedRoute) key() string { return r.method + " " + r.pattern }

func (r gatedRoute) has(name string) bool {
	return slices.ContainsFunc(r.gates, func(g routeGate) bool { return g.name == name })
}

func (r gatedRoute) param(name string) string {
	for _, g := range r.gates {
		if g.name == name {
			return g.param
		}
	}
	return ""
}

// walkGates lists every route of router with the gates chi holds for it: each middleware is
// applied to a handler of its own, and a named gate (gates.go) says its name.
func walkGates(t *testing.T, router chi.Routes) []gatedRoute {
	t.Helper()
	var out []gatedRoute
	require.NoError(t, chi.Walk(router, func(method, pattern string, _ http.Handler, mws ...func(http.Handler) http.Handler) error {
		r := gatedRoute{method: method, pattern: pattern}
		for _, mw := range mws {
			if g, ok := mw(http.NotFoundHandler()).(gated); ok {
				r.gates = append(r.gates, routeGate{g.gate, g.param})
			}
		}
		out = append(out, r)
		return nil
	}))
	slices.SortFunc(out, func(a, b gatedRoute) int { return strings.Compare(a.pattern+" "+a.method, b.pattern+" "+b.method) })
	return out
}

// gateTable prints routes and their gates, one a line.
func gateTable(routes []gatedRoute) string {
	var b strings.Builder
	for _, r := range routes {
		names := make([]string, len(r.gates))
		for i, g := range r.gates {
			names[i] = g.name
			if g.param != "" {
				names[i] += " (" + g.param + ")"
			}
		}
		fmt.Fprintf(&b, "  %-7s %-34s %s\n", r.method, r.pattern, strings.Join(names, ", "))
	}
	return b.String()
}

// gateProblems says what is wrong with the gates of routes, a line per problem.
func gateProblems(routes []gatedRoute) []string {
	var out []string
	bad := func(r gatedRoute, format string, args ...any) {
		out = append(out, r.key()+": "+fmt.Sprintf(format, args...))
	}
	for _, r := range routes {
		k := r.key()
		probe, static := slices.Contains(probeRoutes, k), slices.Contains(staticRoutes, k)
		mutating := r.method == http.MethodPost || r.method == http.MethodPut || r.method == http.MethodPatch || r.method == http.MethodDelete
		switch {
		case probe:
			if len(r.gates) > 0 {
				bad(r, "a probe is answered to the node without gates, has %v", r.gates)
			}
		case static:
			if !r.has(gateHosts) || !r.has(gateCrossOrigin) || r.has(gateIdentity) {
				bad(r, "static files are behind the host and cross-origin checks and no identity")
			}
		default:
			for _, g := range []string{gateCrossOrigin, gateHosts, gateIdentity} {
				if !r.has(g) {
					bad(r, "no %s gate", g)
				}
			}
		}
		if mutating && !r.has(gateReadOnly) {
			bad(r, "changes something but has no read-only gate")
		}
		if mutating && !r.has(gateBodyLimit) {
			bad(r, "takes a body but has no body limit")
		}
		if open := r.param(gateReadOnly) == "stores nothing: viewers may"; open != slices.Contains(viewerForms, k) {
			bad(r, "open to viewers of a read-only server: %v, in viewerForms: %v", open, !open)
		}
		if admin := slices.Contains(adminRoutes, k); admin != r.has(gateAdmin) {
			bad(r, "in adminRoutes: %v, admin gate: %v", admin, !admin)
		}
		quota, creates := creations[k]
		upload := slices.Contains(uploads, k)
		if (creates || upload) != r.has(gateRateLimit) {
			bad(r, "creates runs or stores an upload: %v, rate limit: %v", creates || upload, !(creates || upload))
		}
		if transform := slices.Contains(transformRoutes, k); transform != r.has(gateTransform) {
			bad(r, "a transform: %v, transform rate: %v", transform, !transform)
		}
		if creates && quota != r.has(gateRunQuota) {
			bad(r, "queues runs: %v, run quota: %v", quota, !quota)
		}
		if upload && (!r.has(gateUploadPace) || r.param(gateBodyLimit) != "65 MiB") {
			bad(r, "an upload is paced and takes up to 65 MiB, has %v", r.gates)
		}
		// Every upload is judged by its owner's upload quota from Content-Length before its body
		// is read (finding H1): the calibration form once lacked it while the trace form had it.
		if upload && !r.has(gateUploadQuota) {
			bad(r, "an upload is judged by the upload quota before its body is read, has %v", r.gates)
		}
		if !upload && r.has(gateBodyLimit) && r.param(gateBodyLimit) != "32 MiB" {
			bad(r, "a form or JSON body takes up to 32 MiB, has %s", r.param(gateBodyLimit))
		}
		if strings.HasPrefix(r.pattern, "/api/") && mutating && !r.has(gateBodyType) {
			bad(r, "an API route that takes a body has no JSON body gate")
		}
	}
	return out
}

func TestRouteGates(t *testing.T) {
	s := newPageServer(t)
	g := s.gates()
	ok := func(w http.ResponseWriter, _ *http.Request) {}
	for _, c := range []struct {
		name   string
		routes func(t *testing.T) []gatedRoute
		want   []string
	}{
		{"TheServersRoutes", func(t *testing.T) []gatedRoute {
			router, isRouter := s.Handler().(chi.Routes)
			require.True(t, isRouter, "the handler is the router")
			routes := walkGates(t, router)
			if testing.Verbose() {
				t.Log("routes and their gates:\n" + gateTable(routes))
			}
			require.Greater(t, len(routes), 40, "the walk sees the routes of the subrouters too:\n%s", gateTable(routes))
			return routes
		}, nil},
		{"MutatingWithoutReadOnly", func(t *testing.T) []gatedRoute {
			r := chi.NewRouter()
			r.Use(g.crossOrigin, g.hosts, g.identity)
			r.With(g.formBody).Post("/runs/{id}/archive", ok)
			return walkGates(t, r)
		}, []string{"POST /runs/{id}/archive: changes something but has no read-only gate"}},
		{"BodyWithoutLimit", func(t *testing.T) []gatedRoute {
			r := chi.NewRouter()
			r.Use(g.crossOrigin, g.hosts, g.identity)
			r.With(g.stores).Delete("/runs/{id}", ok)
			return walkGates(t, r)
		}, []string{"DELETE /runs/{id}: takes a body but has no body limit"}},
		{"AdminWithoutAdminGate", func(t *testing.T) []gatedRoute {
			r := chi.NewRouter()
			r.With(g.crossOrigin, g.hosts, g.identity).Get("/admin/queue", ok)
			return walkGates(t, r)
		}, []string{"GET /admin/queue: in adminRoutes: true, admin gate: false"}},
		{"CreationWithoutRateLimit", func(t *testing.T) []gatedRoute {
			r := chi.NewRouter()
			r.With(g.crossOrigin, g.hosts, g.identity, g.stores, g.formBody, g.runQuota1).Post("/runs", ok)
			return walkGates(t, r)
		}, []string{"POST /runs: creates runs or stores an upload: true, rate limit: false"}},
		{"UploadWithoutQuota", func(t *testing.T) []gatedRoute {
			r := chi.NewRouter()
			r.With(g.crossOrigin, g.hosts, g.identity, g.stores, g.uploadBody, g.rateLimit, g.uploadPace).Post("/calibrations", ok)
			return walkGates(t, r)
		}, []string{"POST /calibrations: an upload is judged by the upload quota before its body is read, has [{cross-origin } {allowed hosts } {identity } {read-only stores: viewers refused} {body limit 65 MiB} {rate limit 1000 a minute} {upload pace }]"}},
		{"ProbeBehindIdentity", func(t *testing.T) []gatedRoute {
			r := chi.NewRouter()
			r.With(g.identity).Get("/healthz", ok)
			return walkGates(t, r)
		}, []string{"GET /healthz: a probe is answered to the node without gates, has [{identity }]"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			routes := c.routes(t)
			assert.Equal(t, c.want, gateProblems(routes), "routes and their gates:\n%s", gateTable(routes))
		})
	}
}
