package web

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/scalein-planner/scalein/runs"
	"github.com/scalein-planner/scalein/store"
)

// BenchmarkTinyRunSubmitToDone is the latency a user sees on the SQLite default: from POST
// /api/v1/runs of a tiny scenario to the "done" event of the run page's live stream
// (/runs/{id}/events), with the real simulator and River polling SQLite. The target is under
// 300 ms (docs/performance.md).
func BenchmarkTinyRunSubmitToDone(b *testing.B) {
	st, err := store.Open(context.Background(), filepath.Join(b.TempDir(), "bench.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	s, err := newApp(runs.Config{Store: st, Workers: 1}, 1<<30)
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
	ts := httptest.NewServer(s.Handler())
	defer ts.Close()

	i := 0
	var worst time.Duration
	for b.Loop() {
		begin := time.Now()
		i++
		resp, err := http.Post(ts.URL+"/api/v1/runs", "application/json", strings.NewReader(testScenario(fmt.Sprintf("tiny %d", i))))
		if err != nil {
			b.Fatal(err)
		}
		var created apiCreated
		err = jsonUnmarshalReader(resp, &created)
		if err != nil || resp.StatusCode != http.StatusAccepted {
			b.Fatalf("submit: %d %v", resp.StatusCode, err)
		}
		ev, err := http.Get(ts.URL + "/runs/" + created.ID + "/events")
		if err != nil {
			b.Fatal(err)
		}
		sc := bufio.NewScanner(ev.Body)
		done := false
		for sc.Scan() {
			if sc.Text() == "event: done" {
				done = true
				break
			}
		}
		ev.Body.Close()
		if !done {
			b.Fatalf("run %s: the stream ended without done", created.ID)
		}
		worst = max(worst, time.Since(begin))
	}
	b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N), "ms/run")
	b.ReportMetric(float64(worst.Milliseconds()), "worst-ms")
}

func jsonUnmarshalReader(resp *http.Response, v any) error {
	defer resp.Body.Close()
	return json.NewDecoder(resp.Body).Decode(v)
}
