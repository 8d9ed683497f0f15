package web

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/scalein-planner/scalein/internal/runtest"
	"github.com/scalein-planner/scalein/runs"
	"github.com/scalein-planner/scalein/store"
)

// discardResponse is a ResponseWriter that keeps nothing of the body, so a benchmark measures
// what the server holds, not a recorder's copy of the response.
type discardResponse struct {
	h      http.Header
	code   int
	nBytes int64
}

func (d *discardResponse) Header() http.Header { return d.h }
func (d *discardResponse) WriteHeader(code int) {
	if d.code == 0 {
		d.code = code
	}
}
func (d *discardResponse) Write(p []byte) (int, error) {
	if d.code == 0 {
		d.code = http.StatusOK
	}
	d.nBytes += int64(len(p))
	return len(p), nil
}

// BenchmarkReportJSONDownload downloads report.json of a done run with many per-request rows
// (runtest.ManyRowsScenario: 50,000 rows by default; SCALEIN_BENCH_REPORT_SESSIONS=100000 gives 200,000
// rows): plain (a client without gzip), gzip (a browser), and 16 downloads at once (gzip). It
// reports the bytes the report takes in the database (stored-bytes) and the database file after a
// checkpoint (db-bytes), and per download the peak heap above the heap before it (peak-heap-MB,
// sampled every 200 µs; the 16 downloads' peak together).
func BenchmarkReportJSONDownload(b *testing.B) {
	sessions := 25000
	if v, err := strconv.Atoi(os.Getenv("SCALEIN_BENCH_REPORT_SESSIONS")); err == nil && v > 0 {
		sessions = v
	}
	ctx := context.Background()
	dbPath := filepath.Join(b.TempDir(), "bench.db")
	st, err := store.Open(ctx, dbPath)
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
	req := httptest.NewRequest(http.MethodPost, "/api/v1/runs", strings.NewReader(runtest.ManyRowsScenario(sessions)))
	req.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	s.Handler().ServeHTTP(rec, req)
	var created apiCreated
	if err := json.Unmarshal(rec.Body.Bytes(), &created); err != nil || created.ID == "" {
		b.Fatalf("submit: %d %s", rec.Code, rec.Body.String())
	}
	for deadline := time.Now().Add(10 * time.Minute); ; time.Sleep(50 * time.Millisecond) {
		run, err := st.GetRunStatus(ctx, created.ID)
		if err != nil || run.Status == store.StatusFailed || time.Now().After(deadline) {
			b.Fatalf("run %s: %v %s %s", created.ID, err, run.Status, run.Error)
		}
		if run.Status == store.StatusDone {
			break
		}
	}
	// What the report takes in the database: its chunks, or (before them) runs.report_json.
	var stored int64
	if err := st.DB().QueryRowContext(ctx, `SELECT coalesce(sum(length(data)), 0) FROM run_report_chunks`).Scan(&stored); err != nil || stored == 0 {
		if err := st.DB().QueryRowContext(ctx, `SELECT length(report_json) FROM runs WHERE id = ?`, created.ID).Scan(&stored); err != nil {
			b.Fatal(err)
		}
	}
	if _, err := st.DB().ExecContext(ctx, `PRAGMA wal_checkpoint(TRUNCATE)`); err != nil {
		b.Fatal(err)
	}
	fi, err := os.Stat(dbPath)
	if err != nil {
		b.Fatal(err)
	}
	download := func(acceptEncoding string) int64 {
		req := httptest.NewRequest(http.MethodGet, "/runs/"+created.ID+"/report.json", nil)
		if acceptEncoding != "" {
			req.Header.Set("Accept-Encoding", acceptEncoding)
		}
		w := &discardResponse{h: http.Header{}}
		s.Handler().ServeHTTP(w, req)
		if w.code != http.StatusOK {
			panic(fmt.Sprintf("report.json: %d", w.code))
		}
		return w.nBytes
	}
	reportBytes := download("")
	for _, c := range []struct {
		name           string
		acceptEncoding string
		parallel       int
	}{{"plain", "", 1}, {"gzip", "gzip", 1}, {"gzip-16-at-once", "gzip", 16}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			var peak, sent uint64
			for b.Loop() {
				runtime.GC()
				base := runtest.HeapObjects()
				h := runtest.StartHeapPeak()
				var wg sync.WaitGroup
				var n atomic.Int64
				for range c.parallel {
					wg.Go(func() { n.Add(download(c.acceptEncoding)) })
				}
				wg.Wait()
				if p := h.End(); p > base {
					peak = max(peak, p-base)
				}
				sent = uint64(n.Load())
			}
			b.ReportMetric(float64(peak)/1e6, "peak-heap-MB")
			b.ReportMetric(float64(sent)/float64(c.parallel), "sent-bytes")
			b.ReportMetric(float64(reportBytes), "report-bytes")
			b.ReportMetric(float64(stored), "stored-bytes")
			b.ReportMetric(float64(fi.Size()), "db-bytes")
		})
	}
}
