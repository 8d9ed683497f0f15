package web

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/scalein-planner/scalein/internal/runtest"
	"github.com/scalein-planner/scalein/runs"
	"github.com/scalein-planner/scalein/store"
)

// BenchmarkViewManyRows views a done run with 50,000 per-request rows (a small scenario): its page (each view a
// different ?wpage= so the page cache does not answer) and its workers.csv. Before the stored
// summary, each view decoded the whole report; now it decodes the summary (with the TTFT
// histogram, at most 101 counts).
func BenchmarkViewManyRows(b *testing.B) {
	ctx := context.Background()
	st, err := store.Open(ctx, filepath.Join(b.TempDir(), "bench.db"))
	if err != nil {
		b.Fatal(err)
	}
	s, err := newApp(runs.Config{Store: st}, 1000)
	if err != nil {
		b.Fatal(err)
	}
	if err := s.startRuns(ctx); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		sctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		_ = s.stopRuns(sctx)
		_ = st.Close()
	})
	serve := func(req *http.Request) *httptest.ResponseRecorder {
		rec := httptest.NewRecorder()
		s.Handler().ServeHTTP(rec, req)
		return rec
	}
	req := httptest.NewRequest(http.MethodPost, "/api/v1/runs", strings.NewReader(runtest.ManyRowsScenario(25000)))
	req.Header.Set("Content-Type", "application/json")
	rec := serve(req)
	var created apiCreated
	if err := json.Unmarshal(rec.Body.Bytes(), &created); err != nil || created.ID == "" {
		b.Fatalf("submit: %d %s", rec.Code, rec.Body.String())
	}
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(20 * time.Millisecond) {
		run, err := st.GetRunStatus(ctx, created.ID)
		if err != nil || run.Status == store.StatusFailed || time.Now().After(deadline) {
			b.Fatalf("run %s: %v %s %s", created.ID, err, run.Status, run.Error)
		}
		if run.Status == store.StatusDone {
			break
		}
	}
	reportBytes := serve(httptest.NewRequest(http.MethodGet, "/runs/"+created.ID+"/report.json", nil)).Body.Len()
	for _, c := range []struct{ name, path string }{{"page", "/runs/" + created.ID + "?wpage="}, {"workers.csv", "/runs/" + created.ID + "/workers.csv?"}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				i++
				if rec := serve(httptest.NewRequest(http.MethodGet, c.path+fmt.Sprint(i), nil)); rec.Code != http.StatusOK {
					b.Fatalf("%s: %d", c.path, rec.Code)
				}
			}
			b.ReportMetric(float64(reportBytes), "report-bytes")
		})
	}
}
