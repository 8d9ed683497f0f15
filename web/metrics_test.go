package web

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/scalein-planner/scalein/runs"
	"github.com/scalein-planner/scalein/store"
)

// scrape reads GET /metrics of s with Prometheus' own text parser.
func scrape(t *testing.T, s *Server) map[string]*dto.MetricFamily {
	t.Helper()
	rec := do(t, s.MetricsHandler(), httptest.NewRequest(http.MethodGet, "/metrics", nil))
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	assert.Contains(t, rec.Header().Get("Content-Type"), "text/plain")
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(strings.NewReader(rec.Body.String()))
	require.NoError(t, err, "the exposition parses")
	return families
}

// sample is the value of the family's series with these labels (a counter's, a gauge's, or a
// histogram's count); ok is false when there is none.
func sample(families map[string]*dto.MetricFamily, name string, labels map[string]string) (float64, bool) {
	f, ok := families[name]
	if !ok {
		return 0, false
	}
next:
	for _, m := range f.GetMetric() {
		for k, v := range labels {
			found := false
			for _, l := range m.GetLabel() {
				if l.GetName() == k && l.GetValue() == v {
					found = true
				}
			}
			if !found {
				continue next
			}
		}
		switch {
		case m.Counter != nil:
			return m.Counter.GetValue(), true
		case m.Gauge != nil:
			return m.Gauge.GetValue(), true
		case m.Histogram != nil:
			return float64(m.Histogram.GetSampleCount()), true
		}
	}
	return 0, false
}

// TestMetrics scrapes a server that ran a run and refused requests, and reads the series an
// operator watches with Prometheus' text parser.
func TestMetrics(t *testing.T) {
	s := newTestServer(t, runs.Config{Workers: 1}, true)
	id := submitAPI(t, s, testScenario("metrics"))
	waitStatus(t, s, id, store.StatusDone)
	assert.Equal(t, http.StatusOK, get(t, s, "/runs/"+id).Code)
	assert.Equal(t, http.StatusOK, get(t, s, "/api/v1/runs/"+id).Code)
	assert.Equal(t, http.StatusMethodNotAllowed, do(t, s.Handler(), httptest.NewRequest(http.MethodPost, "/livez", strings.NewReader("x"))).Code)
	big := httptest.NewRequest(http.MethodPost, "/api/v1/runs", strings.NewReader("{}"))
	big.Header.Set("Content-Type", "application/json")
	big.ContentLength = maxFormBytes + 1
	assert.Equal(t, http.StatusRequestEntityTooLarge, do(t, s.Handler(), big).Code)

	m := scrape(t, s)
	for _, c := range []struct {
		name   string
		labels map[string]string
		want   float64
	}{
		{"scalein_http_requests_total", map[string]string{"route": "/api/v1/runs", "method": "POST", "code": "202"}, 1},
		{"scalein_http_requests_total", map[string]string{"route": "/runs/{id}", "method": "GET", "code": "200"}, 1},
		{"scalein_http_requests_total", map[string]string{"route": "/api/v1/runs/{id}", "method": "GET", "code": "200"}, 1},
		// A method or path no route has is "unmatched" (its path could hold anything).
		{"scalein_http_requests_total", map[string]string{"route": "unmatched", "method": "POST", "code": "405"}, 1},
		{"scalein_http_requests_total", map[string]string{"route": "/api/v1/runs", "method": "POST", "code": "413"}, 1},
		{"scalein_http_request_duration_seconds", map[string]string{"route": "/api/v1/runs", "method": "POST"}, 2},
		{"scalein_runs", map[string]string{"state": "done"}, 1},
		{"scalein_runs", map[string]string{"state": "queued"}, 0},
		{"scalein_queue_depth", nil, 0},
		{"scalein_queue_oldest_age_seconds", nil, 0},
		{"scalein_plans_in_flight", nil, 0},
		{"scalein_sweeps_in_flight", nil, 0},
		{"scalein_upload_slots_in_use", nil, 0},
		{"scalein_upload_slots", nil, 2},
		{"scalein_memory_granted_bytes", nil, 0},
		{"scalein_simulations_total", nil, 1},
		{"scalein_store_up", nil, 1},
		{"scalein_store_errors_total", map[string]string{"kind": "unavailable"}, 0},
	} {
		got, ok := sample(m, c.name, c.labels)
		if assert.True(t, ok, "%s%v is exported", c.name, c.labels) {
			assert.Equal(t, c.want, got, "%s%v", c.name, c.labels)
		}
	}
	for _, name := range []string{"scalein_simulation_seconds_total", "scalein_simulation_events_total", "scalein_memory_budget_bytes"} {
		got, ok := sample(m, name, nil)
		assert.True(t, ok, name)
		assert.Greater(t, got, 0.0, name)
	}
	assert.Equal(t, dto.MetricType_HISTOGRAM, m["scalein_http_request_duration_seconds"].GetType())
	assert.Contains(t, m, "go_goroutines", "the Go runtime's series")
	for _, mm := range m["scalein_http_requests_total"].GetMetric() {
		for _, l := range mm.GetLabel() {
			assert.NotContains(t, l.GetValue(), id, "ids never make series")
		}
	}

	// The public listener has no /metrics.
	assert.Equal(t, http.StatusNotFound, get(t, s, "/metrics").Code)
}

// A queued run shows in the queue's depth and age.
func TestMetricsQueue(t *testing.T) {
	s := newTestServer(t, runs.Config{Workers: 1}, false)
	submitAPI(t, s, testScenario("waits"))
	m := scrape(t, s)
	depth, ok := sample(m, "scalein_queue_depth", nil)
	require.True(t, ok)
	assert.Equal(t, 1.0, depth)
	age, ok := sample(m, "scalein_queue_oldest_age_seconds", nil)
	require.True(t, ok)
	assert.GreaterOrEqual(t, age, 0.0)
	queued, _ := sample(m, "scalein_runs", map[string]string{"state": "queued"})
	assert.Equal(t, 1.0, queued)
}

type fixedStats runs.Stats

func (f fixedStats) Stats() runs.Stats { return runs.Stats(f) }

// A worker's /metrics has the run service's series, parsed by Prometheus' text parser.
func TestWorkerMetrics(t *testing.T) {
	h := WorkerMetricsHandler(fixedStats{Simulations: 3, SimSeconds: 1.5, SimEvents: 4200, MemoryGranted: 1 << 20, MemoryBudget: 1 << 30})
	rec := do(t, h, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	require.Equal(t, http.StatusOK, rec.Code)
	parser := expfmt.NewTextParser(model.UTF8Validation)
	m, err := parser.TextToMetricFamilies(strings.NewReader(rec.Body.String()))
	require.NoError(t, err)
	for name, want := range map[string]float64{"scalein_simulations_total": 3, "scalein_simulation_seconds_total": 1.5,
		"scalein_simulation_events_total": 4200, "scalein_memory_granted_bytes": 1 << 20, "scalein_memory_budget_bytes": 1 << 30} {
		got, ok := sample(m, name, nil)
		assert.True(t, ok, name)
		assert.Equal(t, want, got, name)
	}
	assert.NotContains(t, m, "scalein_runs", "the database's series are the servers'")
}
