package web

import (
	"context"
	"net/http"
	"strconv"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/go-chi/chi/v5/middleware"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/scalein-planner/scalein/runs"
	"github.com/scalein-planner/scalein/store"
)

// GET /metrics (docs/deploy.md, "Metrics"): the Prometheus exposition of what an operator
// watches. It is served by MetricsHandler on a listener of its own (serve -metrics-addr), not on
// the public one: the public listener is behind the proxy and its identities, and a scraper
// reaches a pod's port directly; a separate port stays off the Service and the Ingress, so
// users never see the server's internals and no scrape passes the gates.

// statser is the run service's counters (runs.Service has them; the tests' fake does not).
type statser interface{ Stats() runs.Stats }

// metrics are the server's own series, kept in a registry of its own (several servers in one
// test process do not collide).
type metrics struct {
	reg         *prometheus.Registry
	requests    *prometheus.CounterVec
	duration    *prometheus.HistogramVec
	storeErrors *prometheus.CounterVec
}

func (s *Server) newMetrics() *metrics {
	m := &metrics{
		reg: prometheus.NewRegistry(),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "scalein_http_requests_total",
			Help: "HTTP requests answered, by route pattern, method and status code (refusals included)."}, []string{"route", "method", "code"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "scalein_http_request_duration_seconds",
			Help:    "Time to answer an HTTP request, by route pattern and method (progress streams: their whole life).",
			Buckets: []float64{0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 120}}, []string{"route", "method"}),
		storeErrors: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "scalein_store_errors_total",
			Help: "Requests answered 503 because the database was unavailable or busy, by kind."}, []string{"kind"}),
	}
	m.storeErrors.WithLabelValues("unavailable")
	m.storeErrors.WithLabelValues("busy")
	m.reg.MustRegister(m.requests, m.duration, m.storeErrors, &serverCollector{s: s},
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// MetricsHandler is GET /metrics in the Prometheus text format, for a listener of its own.
func (s *Server) MetricsHandler() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(s.metrics.reg, promhttp.HandlerOpts{ErrorLog: slogErrorLog{s}, Timeout: 10 * time.Second}))
	return mux
}

type slogErrorLog struct{ s *Server }

func (l slogErrorLog) Println(v ...any) { l.s.log.Warn("metrics", "err", v) }

// countRequests records every answer by its route pattern (the path as routes.go wrote it, so
// ids do not make series), method and status.
func (s *Server) countRequests(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		ww := middleware.NewWrapResponseWriter(w, r.ProtoMajor)
		defer func() {
			route := "unmatched"
			if rc := chi.RouteContext(r.Context()); rc != nil && rc.RoutePattern() != "" {
				route = rc.RoutePattern()
			}
			status := ww.Status()
			if status == 0 {
				status = http.StatusOK
			}
			s.metrics.requests.WithLabelValues(route, r.Method, strconv.Itoa(status)).Inc()
			s.metrics.duration.WithLabelValues(route, r.Method).Observe(time.Since(start).Seconds())
		}()
		next.ServeHTTP(ww, r)
	})
}

// noteStoreError counts a 503 of the database's.
func (s *Server) noteStoreError(err error) {
	switch {
	case err == nil:
	case store.IsBusy(err):
		s.metrics.storeErrors.WithLabelValues("busy").Inc()
	case store.IsUnavailable(err):
		s.metrics.storeErrors.WithLabelValues("unavailable").Inc()
	}
}

// serverCollector reads the gauges at scrape time: the database's counts, the large-body slots,
// the memory grants and what this process simulated.
type serverCollector struct{ s *Server }

var (
	descRuns       = prometheus.NewDesc("scalein_runs", "Runs in the database by state (queued, running, done, failed, cancelled).", []string{"state"}, nil)
	descQueueDepth = prometheus.NewDesc("scalein_queue_depth", "Runs queued, waiting for a worker.", nil, nil)
	descQueueAge   = prometheus.NewDesc("scalein_queue_oldest_age_seconds", "Age of the oldest queued run (0 when none is queued).", nil, nil)
	descPlans      = prometheus.NewDesc("scalein_plans_in_flight", "Plans queued or running.", nil, nil)
	descSweeps     = prometheus.NewDesc("scalein_sweeps_in_flight", "Sweeps not cancelled with a point whose run is queued or running.", nil, nil)
	descSlotsUsed  = prometheus.NewDesc("scalein_upload_slots_in_use", "Large-body slots held: uploads and bodies over 1 MiB being parsed.", nil, nil)
	descSlots      = prometheus.NewDesc("scalein_upload_slots", "Large-body slots (at most this many large bodies are parsed at once).", nil, nil)
	descGranted    = prometheus.NewDesc("scalein_memory_granted_bytes", "Memory the budget's grants hold now: runs, uploads, large bodies.", nil, nil)
	descBudget     = prometheus.NewDesc("scalein_memory_budget_bytes", "The memory budget (-max-total-memory).", nil, nil)
	descSims       = prometheus.NewDesc("scalein_simulations_total", "Simulations this process ran (reused reports are not counted).", nil, nil)
	descSimSeconds = prometheus.NewDesc("scalein_simulation_seconds_total", "Wall-clock seconds of the simulations this process ran.", nil, nil)
	descSimEvents  = prometheus.NewDesc("scalein_simulation_events_total", "Events of the simulations this process ran.", nil, nil)
	descStoreUp    = prometheus.NewDesc("scalein_store_up", "1 when the scrape's database read succeeded, 0 when it failed.", nil, nil)
)

func (c *serverCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descRuns, descQueueDepth, descQueueAge, descPlans, descSweeps, descSlotsUsed, descSlots,
		descGranted, descBudget, descSims, descSimSeconds, descSimEvents, descStoreUp} {
		ch <- d
	}
}

func (c *serverCollector) Collect(ch chan<- prometheus.Metric) {
	s := c.s
	gauge := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
	}
	gauge(descSlotsUsed, float64(len(s.bodies.slots)))
	gauge(descSlots, float64(cap(s.bodies.slots)))
	if st, ok := s.runs.(statser); ok {
		serviceCollector{st}.Collect(ch)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	g, err := s.store.Gauges(ctx)
	if err != nil {
		s.log.Warn("metrics: reading the database's gauges failed", "err", err)
		s.noteStoreError(err)
		gauge(descStoreUp, 0)
		return
	}
	gauge(descStoreUp, 1)
	for _, state := range []string{store.StatusQueued, store.StatusRunning, store.StatusDone, store.StatusFailed, store.StatusCancelled} {
		gauge(descRuns, float64(g.RunsByStatus[state]), state)
	}
	gauge(descQueueDepth, float64(g.RunsByStatus[store.StatusQueued]))
	age := 0.0
	if !g.OldestQueued.IsZero() {
		age = max(0, s.now().Sub(g.OldestQueued).Seconds())
	}
	gauge(descQueueAge, age)
	gauge(descPlans, float64(g.PlansInFlight))
	gauge(descSweeps, float64(g.SweepsInFlight))
}

// serviceCollector is the run service's series: its memory grants and what it simulated.
type serviceCollector struct{ st statser }

func (c serviceCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descGranted, descBudget, descSims, descSimSeconds, descSimEvents} {
		ch <- d
	}
}

func (c serviceCollector) Collect(ch chan<- prometheus.Metric) {
	stats := c.st.Stats()
	ch <- prometheus.MustNewConstMetric(descGranted, prometheus.GaugeValue, float64(stats.MemoryGranted))
	ch <- prometheus.MustNewConstMetric(descBudget, prometheus.GaugeValue, float64(stats.MemoryBudget))
	ch <- prometheus.MustNewConstMetric(descSims, prometheus.CounterValue, float64(stats.Simulations))
	ch <- prometheus.MustNewConstMetric(descSimSeconds, prometheus.CounterValue, stats.SimSeconds)
	ch <- prometheus.MustNewConstMetric(descSimEvents, prometheus.CounterValue, float64(stats.SimEvents))
}

// WorkerMetricsHandler is GET /metrics of a process that serves no pages (scalein worker
// -metrics-addr): the run service's series (simulations, memory grants) and the Go runtime's and
// the process's. The database's series (runs by state, the queue) are the servers'.
func WorkerMetricsHandler(svc interface{ Stats() runs.Stats }) http.Handler {
	reg := prometheus.NewRegistry()
	reg.MustRegister(serviceCollector{svc}, collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{Timeout: 10 * time.Second}))
	return mux
}
