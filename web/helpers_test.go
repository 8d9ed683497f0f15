package web

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
	"github.com/scalein-planner/scalein/internal/runtest"
	"github.com/scalein-planner/scalein/runs"
	"github.com/scalein-planner/scalein/store"
	"github.com/stretchr/testify/require"
)

// testScenario is runtest.Scenario: a tiny scenario the real engine runs in well under a
// millisecond; name makes each call a distinct scenario.
func testScenario(name string) string { return runtest.Scenario(name) }

func openStore(t *testing.T, path string) *store.Store { return runtest.OpenStore(t, path) }

// newTestServer builds the run service and a server over it on a fresh database, as scalein
// serve does. start=false leaves the workers stopped, so submitted runs stay queued. It builds
// River and its tables: tests of HTTP use newFakeServer (inline_runs_test.go) instead, and what
// the queue itself does is tested on the service (runs/*_test.go); this is for what needs a
// real worker behind the handlers (a running run's event stream, the browser tests).
func newTestServer(t *testing.T, cfg runs.Config, start bool) *Server {
	t.Helper()
	if cfg.Store == nil {
		cfg.Store = openStore(t, filepath.Join(t.TempDir(), "test.db"))
	}
	s, err := newApp(cfg, 1000)
	require.NoError(t, err)
	if start {
		require.NoError(t, s.startRuns(context.Background()))
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = s.stopRuns(ctx)
	})
	return s
}

// newApp builds the run service of cfg and the web server over it (runsPerMinute 0: the
// default rate limit).
func newApp(cfg runs.Config, runsPerMinute int) (*Server, error) {
	svc, err := runs.New(cfg)
	if err != nil {
		return nil, err
	}
	return New(Config{Runs: svc, Store: cfg.Store, Logger: cfg.Logger, RunsPerMinute: runsPerMinute})
}

// service is the server's run service, as the tests built it.
func (s *Server) service() *runs.Service { return s.runs.(*runs.Service) }

// startRuns starts the service's workers; stopRuns shuts them down.
func (s *Server) startRuns(ctx context.Context) error { return s.service().Start(ctx) }

func (s *Server) stopRuns(ctx context.Context) error { return s.service().Shutdown(ctx) }

// do serves req; an exchange with /api/v1 is checked against the OpenAPI document
// (openapi_test.go).
func do(t *testing.T, h http.Handler, req *http.Request) *httptest.ResponseRecorder {
	t.Helper()
	var body []byte
	if strings.HasPrefix(req.URL.Path, "/api/v1/") && req.Body != nil {
		var err error
		body, err = io.ReadAll(req.Body)
		require.NoError(t, err)
		req.Body = io.NopCloser(bytes.NewReader(body))
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	checkAPIExchange(t, req, body, rec)
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
	return runtest.WaitStatus(t, s.store, id, want)
}

// newBlockingRun is runtest's fake simulator, which holds runs running until released.
var newBlockingRun = runtest.NewBlockingRun

// submitAPI posts a scenario and returns its id.
func submitAPI(t *testing.T, s *Server, body string) string {
	t.Helper()
	rec := postJSON(t, s, "/api/v1/runs", body)
	require.Contains(t, []int{http.StatusAccepted, http.StatusOK}, rec.Code, rec.Body.String())
	var out apiCreated
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &out))
	return out.ID
}

func ptr(v float64) *float64 { return &v }
