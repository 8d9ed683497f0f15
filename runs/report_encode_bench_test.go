package runs

import (
	"context"
	"encoding/json"
	"os"
	"runtime"
	"strconv"
	"testing"

	"github.com/scalein-planner/scalein/internal/runtest"
	"github.com/scalein-planner/scalein/sim"
	"github.com/scalein-planner/scalein/store"
)

// BenchmarkEncodeReport stores the report of a run with many per-request rows (runtest.ManyRowsScenario:
// 50,000 rows by default, SCALEIN_BENCH_REPORT_SESSIONS sessions × 2 otherwise) into its gzip
// chunks: "marshal" encodes it whole with json.Marshal first (as the server did before), and
// "streamed" encodes it row by row into the chunks (encodeReport). peak-heap-MB is the heap's
// peak above the heap before (which holds the decoded report), sampled every 200 µs.
func BenchmarkEncodeReport(b *testing.B) {
	sessions := 25000
	if v, err := strconv.Atoi(os.Getenv("SCALEIN_BENCH_REPORT_SESSIONS")); err == nil && v > 0 {
		sessions = v
	}
	sc, err := sim.Parse([]byte(runtest.ManyRowsScenario(sessions)), sim.ParseEnv{})
	if err != nil {
		b.Fatal(err)
	}
	rep, err := sim.Run(context.Background(), sc, sim.RunOptions{})
	if err != nil {
		b.Fatal(err)
	}
	for _, c := range []struct {
		name   string
		encode func(w *store.ReportWriter) error
	}{
		{"marshal", func(w *store.ReportWriter) error {
			j, err := json.Marshal(rep)
			if err == nil {
				_, err = w.Write(j)
			}
			return err
		}},
		{"streamed", func(w *store.ReportWriter) error { return encodeReport(w, rep) }},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			var peak uint64
			var jsonBytes int64
			for b.Loop() {
				runtime.GC()
				base := runtest.HeapObjects()
				h := runtest.StartHeapPeak()
				w := store.NewReportWriter()
				if err := c.encode(w); err != nil {
					b.Fatal(err)
				}
				jsonBytes = w.JSONBytes()
				if p := h.End(); p > base {
					peak = max(peak, p-base)
				}
			}
			b.ReportMetric(float64(peak)/1e6, "peak-heap-MB")
			b.ReportMetric(float64(jsonBytes), "report-bytes")
		})
	}
}
