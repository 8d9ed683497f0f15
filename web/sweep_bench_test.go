package web

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/scalein-planner/scalein/runs"
	"github.com/scalein-planner/scalein/store"
)

// BenchmarkSecondIdenticalSweep is a 16-point sweep of the Mooncake preset asked for again
// when every point is done (docs/performance.md: "answered at once"). Each point's memory
// estimate (tens of ms for its trace workload) is remembered from the first request.
func BenchmarkSecondIdenticalSweep(b *testing.B) {
	data, err := os.ReadFile("../sim/presets/mooncake-16to12.json")
	if err != nil {
		b.Fatal(err)
	}
	st, err := store.Open(context.Background(), filepath.Join(b.TempDir(), "bench.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	s, err := newApp(runs.Config{Store: st, Workers: 2}, 1<<30)
	if err != nil {
		b.Fatal(err)
	}
	if err := s.startRuns(context.Background()); err != nil {
		b.Fatal(err)
	}
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = s.stopRuns(ctx)
	}()
	body := sweepBody(string(data), `[{"path": "kvcr.bandwidth_gbps", "values": [5, 10, 20, 40]}, {"path": "kvcr.latency_ms", "values": [1, 2, 3, 4]}]`)
	post := func() *httptest.ResponseRecorder {
		rec := httptest.NewRecorder()
		req := httptest.NewRequest(http.MethodPost, "/api/v1/sweeps", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		s.Handler().ServeHTTP(rec, req)
		return rec
	}
	first := post()
	var created struct{ ID string }
	if err := json.Unmarshal(first.Body.Bytes(), &created); err != nil || first.Code != http.StatusAccepted {
		b.Fatalf("the first sweep answered %d: %s", first.Code, first.Body.String())
	}
	for deadline := time.Now().Add(2 * time.Minute); ; time.Sleep(50 * time.Millisecond) {
		sw, err := s.runs.Sweep(context.Background(), created.ID)
		if err != nil || sw.Status == "done" || time.Now().After(deadline) {
			if err != nil || sw.Status != "done" {
				b.Fatalf("the sweep did not finish: %v %s", err, sw.Status)
			}
			break
		}
	}
	for b.Loop() {
		if rec := post(); rec.Code != http.StatusOK {
			b.Fatalf("a second identical sweep answered %d: %s", rec.Code, rec.Body.String())
		}
	}
}
