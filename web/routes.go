package web

import (
	"log/slog"
	"net/http"
	"regexp"
	"strconv"
	"strings"

	"github.com/go-chi/chi/v5"
	"github.com/go-chi/chi/v5/middleware"
	"github.com/go-chi/httplog/v3"
	"github.com/scalein-planner/scalein/store"
	"github.com/scalein-planner/scalein/templates"
)

// routes wires README.md. The cross-origin check wraps everything (it only looks at unsafe
// methods); the rate limit applies to run creation only.
func (s *Server) routes() http.Handler {
	r := chi.NewRouter()
	r.Use(middleware.RequestID)
	r.Use(middleware.ClientIPFromRemoteAddr)
	r.Use(httplog.RequestLogger(s.log, &httplog.Options{
		Level:  slog.LevelInfo,
		Schema: httplog.SchemaECS.Concise(true),
		LogExtraAttrs: func(req *http.Request, _ string, _ int) []slog.Attr {
			return []slog.Attr{slog.String("request_id", middleware.GetReqID(req.Context()))}
		},
	}))
	r.Use(s.recoverer)
	r.Use(securityHeaders)
	r.Use(s.guardHosts, s.identify, s.guardWrites) // auth.go, hosts.go
	r.Use(cacheHeaders)                            // after identify: private once users are told apart
	r.Use(compress)
	r.Use(limitBody)
	r.Use(middleware.GetHead) // HEAD answers like GET (monitors, link checkers)

	r.NotFound(s.page(func(w http.ResponseWriter, r *http.Request) error {
		return notFound("there is no page at " + r.URL.Path)
	}))
	r.MethodNotAllowed(s.methodNotAllowed(r))

	createLimit := s.createLimit() // create_limit.go

	r.Get("/healthz", s.healthz)
	r.Get("/livez", livez)
	r.Handle("/static/*", s.assets)

	r.Get("/", s.page(s.handleForm))
	r.Post("/", s.page(s.handleFormEdit))
	r.With(createLimit, s.runQuota(1)).Post("/runs", s.page(s.handleCreateRun))
	r.With(createLimit, s.runQuota(2)).Post("/pairs", s.page(s.handleCreatePair))
	r.Get("/runs", s.page(s.handleRuns))
	r.Route("/runs/{id}", func(r chi.Router) {
		r.Use(s.requireID("run", false))
		r.Use(middleware.GetHead) // the top-level GetHead does not see into this subrouter
		r.Get("/", s.page(s.handleRun))
		r.Get("/report.json", s.page(s.handleReportJSON))
		r.Get("/scenario.json", s.page(s.handleScenarioJSON))
		r.Get("/workers.csv", s.page(s.handleWorkersCSV))
		r.Get("/passes.jsonl", s.page(s.handlePassesJSONL)) // rate-limited as an export (exports.go)
		r.Get("/trace.json", s.page(s.handleTraceJSON))
		r.Get("/events", s.page(s.handleEvents))
		r.With(s.mayCancel(store.OwnedRun)).Post("/cancel", s.page(s.handleCancel))
	})
	r.Get("/compare", s.page(s.handleCompare))
	s.whatIfRoutes(r, createLimit)
	r.Get("/traces", s.page(s.handleTraces))
	r.With(s.requireAdmin).Get("/admin/queue", s.page(s.handleQueue))
	r.With(createLimit).Post("/traces", s.page(s.handleUploadTrace)) // counted like run creation
	r.Get("/calibrations", s.page(s.handleCalibrations))
	r.With(createLimit).Post("/calibrations", s.page(s.handleUploadCalibration)) // counted like run creation
	r.Get("/calibrations/{sha}", s.page(s.handleCalibration))
	r.With(s.requireAdmin).Post("/calibrations/{sha}/delete", s.page(s.handleDeleteCalibration))

	r.Route("/api/v1", func(r chi.Router) {
		r.NotFound(s.api(func(w http.ResponseWriter, r *http.Request) error {
			return notFound("no API route " + r.Method + " " + r.URL.Path)
		}))
		r.Use(s.requireJSONBody)
		r.With(createLimit, s.runQuota(1)).Post("/runs", s.api(s.apiCreateRun))
		r.With(createLimit, s.runQuota(2)).Post("/pairs", s.api(s.apiCreatePair))
		r.Get("/runs", s.api(s.apiListRuns))
		r.With(createLimit).Post("/calibrations", s.api(s.apiCreateCalibration))
		r.Get("/calibrations/{sha}", s.api(s.apiGetCalibration))
		r.With(s.requireAdmin).Delete("/calibrations/{sha}", s.api(s.apiDeleteCalibration))
		r.With(s.requireID("run", true)).Get("/runs/{id}", s.api(s.apiGetRun))
		s.whatIfAPIRoutes(r, createLimit)
	})

	protect := http.NewCrossOriginProtection()
	protect.SetDenyHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		err := &Error{Status: http.StatusForbidden, Title: "Cross-origin request refused",
			Message: "this form was posted from another site; open the page on this server and submit it from there"}
		if strings.HasPrefix(r.URL.Path, "/api/") {
			s.writeAPIError(w, r, err)
			return
		}
		s.renderError(w, r, err)
	}))
	return protect.Handler(r)
}

// idPattern is the shape of every id in a URL (runs, sweeps, plans): 16 characters of
// lower-case base32, the alphabet of content ids.
var idPattern = regexp.MustCompile(`^[a-z2-7]{16}$`)

// requireID answers 404 for a malformed id of a what ("run", "sweep", "plan") without touching
// the store.
func (s *Server) requireID(what string, isAPI bool) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if !idPattern.MatchString(chi.URLParam(r, "id")) {
				err := notFound("no " + what + " has this id; " + what + " ids are 16 characters of a–z and 2–7")
				if isAPI {
					s.writeAPIError(w, r, err)
				} else {
					s.renderError(w, r, err)
				}
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
