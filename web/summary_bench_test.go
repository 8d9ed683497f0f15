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

	"github.com/scalein-planner/scalein/store"
)

// perRequestScenario is testScenario with n scripted requests and per-request rows in the report.
func perRequestScenario(name string, n int) string {
	reqs := make([]string, n)
	for i := range reqs {
		reqs[i] = fmt.Sprintf(`{"id": "r%d", "at_ms": %d, "blocks": ["P%d*2"], "output_tokens": 2, "route_to": %d}`, i, i/4, i%50, i%2)
	}
	return fmt.Sprintf(`{"name": %q,
	  "fleet": {"workers": 2, "gpu_blocks": 256, "host_blocks": 0, "block_size": 16, "max_num_seqs": 8,
	    "max_batched_tokens": 256, "timing": {"prefill_ms": 2, "decode_ms": 1, "prefill_ms_per_1k_tokens": 0, "decode_ms_per_seq": 0, "decode_ms_per_1k_kv_tokens": 0}},
	  "kvcr": {"enabled": false},
	  "scale_in": [{"at_ms": 100, "workers": [1]}],
	  "report": {"per_request": true},
	  "workload": {"type": "requests", "requests": [%s]}}`, name, strings.Join(reqs, ","))
}

// manyRowsScenario is a small scenario whose report has 2 × sessions per-request rows.
func manyRowsScenario(sessions int) string {
	return fmt.Sprintf(`{"name": "many rows",
	  "fleet": {"workers": 4, "gpu_blocks": 4096, "host_blocks": 0, "block_size": 16, "max_num_seqs": 64,
	    "max_batched_tokens": 4096, "timing": {"prefill_ms": 1, "decode_ms": 1, "prefill_ms_per_1k_tokens": 0, "decode_ms_per_seq": 0, "decode_ms_per_1k_kv_tokens": 0}},
	  "kvcr": {"enabled": false},
	  "scale_in": [{"at_ms": 1000, "workers": [3]}],
	  "report": {"per_request": true},
	  "workload": {"type": "sessions", "sessions": {"count": %d, "turns": 2, "rate_per_s": 2000,
	    "system_prompt_tokens": 32, "new_input_tokens": 32, "output_tokens": 4, "think_time_ms": 10}}}`, sessions)
}

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
	s, err := New(Config{Store: st, RunsPerMinute: 1000})
	if err != nil {
		b.Fatal(err)
	}
	if err := s.Start(ctx); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		sctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		_ = s.Shutdown(sctx)
		_ = st.Close()
	})
	serve := func(req *http.Request) *httptest.ResponseRecorder {
		rec := httptest.NewRecorder()
		s.Handler().ServeHTTP(rec, req)
		return rec
	}
	req := httptest.NewRequest(http.MethodPost, "/api/v1/runs", strings.NewReader(manyRowsScenario(25000)))
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
