package web

import (
	"log/slog"
	"net/http"
	"regexp"
	"strconv"

	"github.com/go-chi/chi/v5"
	"github.com/go-chi/chi/v5/middleware"
	"github.com/go-chi/httplog/v3"
	"github.com/scalein-planner/scalein/templates"
)

// routes wires README.md. Every request is traced, logged, kept from panics and given the
// security headers; what else it passes depends on its route's group, stated below group by
// group (docs/deploy.md, "How a request is checked", has the table; TestRouteGates walks the
// routes and checks it). The gates are in gates.go; no gate keeps a list of paths.
func (s *Server) routes() http.Handler {
	root := chi.NewRouter()
	root.Use(closeUnread)     // no body is read after its answer (unread_body.go)
	root.Use(s.countRequests) // GET /metrics' requests by route and status (metrics.go)
	root.Use(middleware.RequestID)
	root.Use(middleware.ClientIPFromRemoteAddr)
	root.Use(httplog.RequestLogger(s.log, &httplog.Options{
		Level:  slog.LevelInfo,
		Schema: httplog.SchemaECS.Concise(true),
		// No body hook (LogRequestBody, LogExtraAttrs): either makes the logger copy the whole
		// body into memory and read the rest of it after the answer (finding H1).
	}))
	root.Use(logRequestID)
	root.Use(withAnswerForm) // errors are pages unless the API group says otherwise (errors.go)
	root.Use(s.recoverer)
	root.Use(securityHeaders)
	root.Use(middleware.GetHead) // HEAD answers like GET (monitors, link checkers)

	g := s.gates()
	// signedIn is what every request from a user passes first: the cross-origin check, the
	// allowed hosts, the identity the proxy names; then its answer's Cache-Control (which
	// depends on the identity) and compression.
	signedIn := []func(http.Handler) http.Handler{g.crossOrigin, g.hosts, g.identity, cacheHeaders, compress}

	// A path no route has, and a method its routes lack, are answered behind signedIn too.
	notFoundPage := s.page(func(w http.ResponseWriter, r *http.Request) error {
		return notFound("there is no page at " + r.URL.Path)
	})
	methodNotAllowed := s.methodNotAllowed(root)
	root.NotFound(chi.Chain(signedIn...).HandlerFunc(notFoundPage).ServeHTTP)
	root.MethodNotAllowed(chi.Chain(signedIn...).HandlerFunc(methodNotAllowed).ServeHTTP)
	// inGroup gives a subrouter mounted in a group, whose requests passed the group's gates
	// already, the same answers without the gates again.
	inGroup := func(r chi.Router) {
		r.NotFound(notFoundPage)
		r.MethodNotAllowed(methodNotAllowed)
	}

	// Probes come from the node, by any Host name and without a user; they take no body.
	root.With(cacheHeaders, compress).Get("/healthz", s.healthz)
	root.With(cacheHeaders, compress).Get("/livez", livez)
	// Static files are public: no identity, no body.
	root.With(g.crossOrigin, g.hosts, cacheHeaders, compress).Get("/static/*", s.assets.ServeHTTP)

	root.Group(func(r chi.Router) {
		r.Use(signedIn...)

		// Pages and exports that read (no body).
		r.Get("/", s.page(s.handleForm))
		r.Get("/runs", s.page(s.handleRuns))
		r.Get("/plans", s.page(s.handlePlans))
		r.Get("/compare", s.page(s.handleCompare))
		r.Get("/sweeps/new", s.page(s.handleNewSweep))
		r.Get("/plans/new", s.page(s.handleNewPlan))
		r.Get("/traces", s.page(s.handleTraces))
		r.Get("/calibrations", s.page(s.handleCalibrations))
		r.Get("/calibrations/{sha}", s.page(s.handleCalibration))
		// A run, sweep or plan and its exports; its cancel writes, and only its owner may.
		r.Route("/runs/{id}", func(r chi.Router) {
			inGroup(r)
			r.Use(g.runID)
			r.Use(middleware.GetHead) // the top-level GetHead does not see into this subrouter
			r.Get("/", s.page(s.handleRun))
			r.Get("/report.json", s.page(s.handleReportJSON))
			r.Get("/scenario.json", s.page(s.handleScenarioJSON))
			r.Get("/workers.csv", s.page(s.handleWorkersCSV))
			r.Get("/passes.jsonl", s.page(s.handlePassesJSONL)) // rate-limited as an export (exports.go)
			r.Get("/trace.json", s.page(s.handleTraceJSON))
			r.Get("/events", s.page(s.handleEvents))
			r.With(g.stores, g.formBody, g.cancelRun).Post("/cancel", s.page(s.handleCancel))
		})
		r.Route("/sweeps/{id}", func(r chi.Router) {
			inGroup(r)
			r.Use(g.sweepID)
			r.Use(middleware.GetHead) // HEAD answers like GET, as on /runs/{id}
			r.Get("/", s.page(s.handleSweep))
			r.Get("/sweep.csv", s.page(s.handleSweepCSV))
			r.With(g.stores, g.formBody, g.cancelSweep).Post("/cancel", s.page(s.handleCancelSweep))
		})
		r.Route("/plans/{id}", func(r chi.Router) {
			inGroup(r)
			r.Use(g.planID)
			r.Use(middleware.GetHead) // HEAD answers like GET, as on /runs/{id}
			r.Get("/", s.page(s.handlePlan))
			r.Get("/hpa.yaml", s.page(s.handlePlanHPA))
			r.With(g.stores, g.formBody, g.cancelPlan).Post("/cancel", s.page(s.handleCancelPlan))
		})

		// Page forms that only re-render (a preset picked, a row added, a manifest imported):
		// they store nothing, so viewers of a read-only server may use them.
		r.Group(func(r chi.Router) {
			r.Use(g.storesNothing, g.formBody)
			r.Post("/", s.page(s.handleFormEdit))
			r.Post("/sweeps/new", s.page(s.handleNewSweep))
			r.Post("/plans/new", s.page(s.handleNewPlan))
		})
		// Importing a manifest into the plan form: a transform (transforms.go).
		r.With(g.prepares, g.formBody, g.transform).Post("/plans/import-hpa", s.page(s.handleImportHPA))

		// Creating runs, pairs, sweeps and plans: rate-limited, and bounded by the user's
		// queued runs (a sweep's points by its own quota, in createSweep).
		r.Group(func(r chi.Router) {
			r.Use(g.stores, g.formBody, g.rateLimit)
			r.With(g.runQuota1).Post("/runs", s.page(s.handleCreateRun))
			r.With(g.runQuota2).Post("/pairs", s.page(s.handleCreatePair))
			r.Post("/sweeps", s.page(s.handleCreateSweep))
			r.With(g.runQuota1).Post("/plans", s.page(s.handleCreatePlan))
		})

		// Uploads: the larger body, counted like run creation, judged by the user's upload
		// quota before the body is read, and paced as it arrives (upload_body.go).
		r.Group(func(r chi.Router) {
			r.Use(g.stores, g.uploadBody, g.rateLimit)
			r.With(g.formUploadQuota, g.uploadPace).Post("/traces", s.page(s.handleUploadTrace))
			r.With(g.formUploadQuota, g.uploadPace).Post("/calibrations", s.page(s.handleUploadCalibration))
		})

		// Admins only, once there are identities.
		r.With(g.admin).Get("/admin/queue", s.page(s.handleQueue))
		r.With(g.stores, g.formBody, g.admin).Post("/calibrations/{sha}/delete", s.page(s.handleDeleteCalibration))
	})

	// The API: every error is JSON; behind the same gates as the pages, and every body is JSON.
	root.Route("/api/v1", func(r chi.Router) {
		r.Use(answerAsAPI)
		r.Use(signedIn...)
		r.NotFound(s.api(func(w http.ResponseWriter, r *http.Request) error {
			return notFound("no API route " + r.Method + " " + r.URL.Path)
		}))
		r.MethodNotAllowed(methodNotAllowed)

		// Reads; the API's own contract (openapi.go).
		r.Get("/openapi.json", s.api(s.apiOpenAPI))
		r.Get("/runs", s.api(s.apiListRuns))
		r.With(g.runID).Get("/runs/{id}", s.api(s.apiGetRun))
		r.With(g.sweepID).Get("/sweeps/{id}", s.api(s.apiGetSweep))
		r.With(g.planID).Get("/plans/{id}", s.api(s.apiGetPlan))
		r.Get("/calibrations/{sha}", s.api(s.apiGetCalibration))

		// Transforms: importing a manifest, reading a Prometheus answer into stages. They store
		// nothing but pass a creation's admission (transforms.go): viewers of a read-only server
		// refused, a rate per client, the large-body slots and a memory grant while parsing.
		r.With(g.prepares, g.formBody, g.jsonBody, g.transform).Post("/hpa/import", s.api(s.apiImportHPA))
		r.With(g.prepares, g.formBody, g.jsonBody, g.transform).Post("/load/prometheus", s.api(s.apiLoadPrometheus))

		// Creating runs, pairs, sweeps and plans, as on the pages.
		r.Group(func(r chi.Router) {
			r.Use(g.stores, g.formBody, g.jsonBody, g.rateLimit)
			r.With(g.runQuota1).Post("/runs", s.api(s.apiCreateRun))
			r.With(g.runQuota2).Post("/pairs", s.api(s.apiCreatePair))
			r.Post("/sweeps", s.api(s.apiCreateSweep))
			r.With(g.runQuota1).Post("/plans", s.api(s.apiCreatePlan))
		})

		// Uploading a calibration: JSON lines, as an upload.
		r.With(g.stores, g.uploadBody, g.fpmBody, g.rateLimit, g.bareUploadQuota, g.uploadPace).
			Post("/calibrations", s.api(s.apiCreateCalibration))

		// Cancels, by the owner; deleting a calibration, by an admin.
		r.Group(func(r chi.Router) {
			r.Use(g.stores, g.formBody, g.jsonBody)
			r.With(g.sweepID, g.cancelSweep).Post("/sweeps/{id}/cancel", s.api(s.apiCancelSweep))
			r.With(g.planID, g.cancelPlan).Post("/plans/{id}/cancel", s.api(s.apiCancelPlan))
			r.With(g.admin).Delete("/calibrations/{sha}", s.api(s.apiDeleteCalibration))
		})
	})
	return root
}

// idPattern is the shape of every id in a URL (runs, sweeps, plans): 16 characters of
// lower-case base32, the alphabet of content ids.
var idPattern = regexp.MustCompile(`^[a-z2-7]{16}$`)

// requireID answers 404 for a malformed id of a what ("run", "sweep", "plan") without touching
// the store.
func (s *Server) requireID(what string) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if !idPattern.MatchString(chi.URLParam(r, "id")) {
				s.writeError(w, r, notFound("no "+what+" has this id; "+what+" ids are 16 characters of a–z and 2–7"))
				return
			}
			next.ServeHTTP(w, r)
		})
	}
}

func (s *Server) healthz(w http.ResponseWriter, r *http.Request) {
	// A one-row read proves the database answers (store has no Ping of its own).
	if _, _, err := s.store.ListRuns(r.Context(), 1, 0); err != nil {
		s.log.ErrorContext(r.Context(), "health check failed", "err", err)
		w.Header().Set("Retry-After", strconv.Itoa(dbRetryAfterSeconds))
		http.Error(w, "database unavailable", http.StatusServiceUnavailable)
		return
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	_, _ = w.Write([]byte("ok\n"))
}

// pageInfo is the layout data every page starts from.
func (s *Server) pageInfo(title, nav string) templates.Page {
	return templates.Page{Title: title, Nav: nav, Assets: s.assets.templ(), ReadOnly: s.cfg.Access.ReadOnly}
}
