package web

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
	"github.com/scalein-planner/scalein/sim"
	"github.com/scalein-planner/scalein/store"
	"github.com/stretchr/testify/require"
)

// testScenario is a tiny scripted scenario (SPEC E1 on two workers) that the real engine runs
// in well under a millisecond; name makes each call a distinct scenario.
func testScenario(name string) string {
	return fmt.Sprintf(`{"name": %q,
	  "fleet": {"workers": 2, "gpu_blocks": 64, "host_blocks": 0, "block_size": 16, "max_num_seqs": 4,
	    "max_batched_tokens": 64, "timing": {"prefill_ms": 2, "decode_ms": 1, "prefill_ms_per_1k_tokens": 0, "decode_ms_per_seq": 0, "decode_ms_per_1k_kv_tokens": 0}},
	  "kvcr": {"enabled": false},
	  "scale_in": [{"at_ms": 1, "workers": [1]}],
	  "workload": {"type": "requests", "requests": [{"id": "a", "at_ms": 0, "blocks": ["A*4"], "output_tokens": 3, "route_to": 1}]}}`, name)
}

func openStore(t *testing.T, path string) *store.Store {
	t.Helper()
	st, err := store.Open(context.Background(), path)
	require.NoError(t, err)
	t.Cleanup(func() { _ = st.Close() })
	return st
}

// newTestServer builds a server on a fresh database. start=false leaves the pool stopped, so
// submitted runs stay queued.
func newTestServer(t *testing.T, cfg Config, start bool) *Server {
	t.Helper()
	if cfg.Store == nil {
		cfg.Store = openStore(t, filepath.Join(t.TempDir(), "test.db"))
	}
	if cfg.RunsPerMinute == 0 {
		cfg.RunsPerMinute = 1000
	}
	s, err := New(cfg)
	require.NoError(t, err)
	if start {
		require.NoError(t, s.Start(context.Background()))
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = s.Shutdown(ctx)
	})
	return s
}

func do(t *testing.T, h http.Handler, req *http.Request) *httptest.ResponseRecorder {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

func get(t *testing.T, s *Server, target string) *httptest.ResponseRecorder {
	t.Helper()
	return do(t, s.Handler(), httptest.NewRequest(http.MethodGet, target, nil))
}

func postForm(t *testing.T, s *Server, target string, form url.Values) *httptest.ResponseRecorder {
	t.Helper()
	req := httptest.NewRequest(http.MethodPost, target, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	return do(t, s.Handler(), req)
}

func postJSON(t *testing.T, s *Server, target, body string) *httptest.ResponseRecorder {
	t.Helper()
	req := httptest.NewRequest(http.MethodPost, target, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	return do(t, s.Handler(), req)
}

func parseHTML(t *testing.T, body io.Reader) *goquery.Document {
	t.Helper()
	doc, err := goquery.NewDocumentFromReader(body)
	require.NoError(t, err)
	return doc
}

func byTestID(doc *goquery.Document, id string) *goquery.Selection {
	return doc.Find(`[data-testid="` + id + `"]`)
}

// waitStatus polls the store until the run reaches want (or fails the test after 10 s).
func waitStatus(t *testing.T, s *Server, id, want string) store.Run {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		run, err := s.store.GetRun(context.Background(), id)
		require.NoError(t, err)
		if run.Status == want {
			return run
		}
		if time.Now().After(deadline) {
			t.Fatalf("run %s is %s (error %q), want %s", id, run.Status, run.Error, want)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// blockingRun is a fake simulator that signals when a run starts and then waits for release or
// for its context, so tests control when runs end.
type blockingRun struct {
	started chan string
	release chan struct{}
}

func newBlockingRun() *blockingRun {
	return &blockingRun{started: make(chan string, 16), release: make(chan struct{})}
}

func (b *blockingRun) run(ctx context.Context, sc *sim.Scenario, _ sim.RunOptions) (*sim.Report, error) {
	b.started <- sc.Name
	select {
	case <-b.release:
		return &sim.Report{Schema: sim.ReportSchema, Name: sc.Name, ScenarioID: sc.ID()}, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (b *blockingRun) waitStarted(t *testing.T) string {
	t.Helper()
	select {
	case name := <-b.started:
		return name
	case <-time.After(10 * time.Second):
		t.Fatal("no run started")
		return ""
	}
}

// submitAPI posts a scenario and returns its id.
func submitAPI(t *testing.T, s *Server, body string) string {
	t.Helper()
	rec := postJSON(t, s, "/api/v1/runs", body)
	require.Contains(t, []int{http.StatusAccepted, http.StatusOK}, rec.Code, rec.Body.String())
	var out apiCreated
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &out))
	return out.ID
}
