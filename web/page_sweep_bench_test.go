package web

import (
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/scalein-planner/scalein/runs"
)

// BenchmarkSweepPage serves the page of a 200-point sweep whose runs are queued (the pool is
// stopped; the points past the queue bound are expanded on each build): "cached" as it is now
// served (one version read per request), "rebuilt" with the cache emptied before each request,
// which is what every request cost before the sweep page was cached (plus the gzip the build
// now makes once).
func BenchmarkSweepPage(b *testing.B) {
	s := newTestServer(&testing.T{}, runs.Config{}, false)
	values := make([]string, 200)
	for i := range values {
		values[i] = strconv.Itoa(i + 1)
	}
	axes := `[{"path": "kvcr.bandwidth_gbps", "values": [` + strings.Join(values, ",") + `]}]`
	rec := postJSON(&testing.T{}, s, "/api/v1/sweeps", sweepBody(fourWorkers(&testing.T{}, `[{"at_ms": 100, "count": 2}]`), axes))
	if rec.Code != http.StatusAccepted {
		b.Fatal(rec.Code, rec.Body.String())
	}
	id := createdID(&testing.T{}, rec, rec.Body.Bytes())
	h := s.Handler()
	req := httptest.NewRequest(http.MethodGet, "/sweeps/"+id, nil)
	serve := func() {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != http.StatusOK {
			b.Fatal(rec.Code)
		}
	}
	b.Run("cached", func(b *testing.B) {
		serve()
		for b.Loop() {
			serve()
		}
	})
	b.Run("rebuilt", func(b *testing.B) {
		for b.Loop() {
			s.pages.pages.Purge()
			serve()
		}
	})
}
