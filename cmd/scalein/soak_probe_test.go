package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The probe's patterns of issue 36 (docs/measure: the 2026-12c probe) as soak journeys, at a
// person's pace among the others: large declared bodies to every kind of route, a body
// abandoned half-way, a KEDA query nested thousands deep, and imports of large scenarios in
// parallel. Each is answered at once with its refusal (405, 413, 400; 503 "busy" for an import
// that found no large-body slot, which the soak excuses), never read whole; the server's RSS stays
// within the soak's budget (watchRSS), and GET /metrics counts the refusals.

// soakLargeBodyRoutes are the kinds of route a large body is sent to: a probe, a creation, a
// transform, the uploads (multipart and bare), a cancel.
var soakLargeBodyRoutes = []string{"livez", "api/v1/runs", "api/v1/hpa/import", "traces", "api/v1/calibrations", "runs/aaaaaaaaaaaaaaaa/cancel"}

// hostile runs one of the probe's patterns.
func (u *soakUser) hostile() {
	switch u.rng.IntN(4) {
	case 0:
		u.largeBody(soakLargeBodyRoutes[u.rng.IntN(len(soakLargeBodyRoutes))])
	case 1:
		u.abandonedBody()
	case 2:
		u.nestedQuery()
	default:
		u.parallelImports(3)
	}
}

// rawRequest sends a request whose head declares size bytes and whose body is the first sent
// bytes only, and reads the answer (it does not wait for the body to be taken). It returns the
// status (0: no answer) and whether the server closed the connection after it.
func (u *soakUser) rawRequest(path string, size int64, sent int) (status int, closed bool, err error) {
	conn, err := net.DialTimeout("tcp", u.b.addr, 5*time.Second)
	if err != nil {
		return 0, false, err
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(30 * time.Second))
	head := fmt.Sprintf("POST /%s HTTP/1.1\r\nHost: %s\r\nX-Forwarded-User: %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n", path, u.b.addr, u.name, size)
	if _, err := io.WriteString(conn, head+strings.Repeat(" ", sent)); err != nil {
		return 0, false, err
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		return 0, false, err
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
	_ = resp.Body.Close()
	return resp.StatusCode, resp.Close, nil
}

// largeBody declares 200 MiB and sends 4 KiB: the answer comes at once, and the connection is
// closed rather than drained.
func (u *soakUser) largeBody(path string) {
	start := time.Now()
	st, closed, err := u.rawRequest(path, 200<<20, 4<<10)
	s := sample{route: "hostile: 200 MiB declared to /" + soakRouteOf(path), status: st, at: start, latency: time.Since(start)}
	if err != nil {
		s.err = err.Error()
	} else if !closed {
		s.err = "the connection was kept: the rest of the body would be read"
		s.status = 0
	}
	u.b.mu.Lock()
	u.b.samples = append(u.b.samples, s)
	u.b.mu.Unlock()
}

func soakRouteOf(path string) string {
	return strings.Replace(path, "aaaaaaaaaaaaaaaa", "{id}", 1)
}

// abandonedBody starts an upload and goes away: the server logs it as the client's (finding L4)
// and answers nobody. No sample: there is no answer to judge.
func (u *soakUser) abandonedBody() {
	conn, err := net.DialTimeout("tcp", u.b.addr, 5*time.Second)
	if err != nil {
		return
	}
	fmt.Fprintf(conn, "POST /api/v1/runs HTTP/1.1\r\nHost: %s\r\nX-Forwarded-User: %s\r\nContent-Type: application/json\r\nContent-Length: 1000000\r\n\r\n{\"a\":", u.b.addr, u.name)
	time.Sleep(time.Duration(100+u.rng.IntN(400)) * time.Millisecond)
	_ = conn.Close()
}

// soakNestedKEDA is a ScaledObject whose query nests depth parentheses.
func soakNestedKEDA(depth int) string {
	q := strings.Repeat("(", depth) + "sum(vllm:num_requests_waiting)" + strings.Repeat(")", depth)
	return `apiVersion: keda.sh/v1alpha1
kind: ScaledObject
metadata: {name: vllm}
spec:
  scaleTargetRef: {name: vllm}
  minReplicaCount: 1
  maxReplicaCount: 4
  triggers:
  - type: prometheus
    metadata:
      query: '` + q + `'
      threshold: "5"
`
}

// nestedQuery imports a KEDA query nested 3,000 deep (finding M1: minutes of a core): a 400.
func (u *soakUser) nestedQuery() {
	body, _ := json.Marshal(map[string]any{"scenario": json.RawMessage(soakLull("nested")), "manifest": soakNestedKEDA(3000)})
	u.postJSON("hostile: nested KEDA query", "api/v1/hpa/import", string(body))
}

// parallelImports imports n scenarios of about 1.5 MB at once (finding M2): each takes a
// large-body slot and a memory grant, so some may be told the server is busy.
func (u *soakUser) parallelImports(n int) {
	body, _ := json.Marshal(map[string]any{"scenario": json.RawMessage(soakLull("large import") + strings.Repeat(" ", 1500<<10)), "manifest": soakHPA})
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			st, text := u.postJSON("hostile: parallel 1.5 MB imports", "api/v1/hpa/import", string(body))
			if st == http.StatusServiceUnavailable && strings.Contains(text, "busy") {
				u.b.mu.Lock()
				u.b.samples[len(u.b.samples)-1].busy = true // not necessarily this one's, but one of the same
				u.b.mu.Unlock()
			}
		})
	}
	wg.Wait()
}

// scrapeMetrics reads GET /metrics of a server with Prometheus' text parser.
func scrapeMetrics(addr string) (map[string]*dto.MetricFamily, error) {
	resp, err := (&http.Client{Timeout: 10 * time.Second}).Get("http://" + addr + "/metrics")
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET /metrics: %s", resp.Status)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	return p.TextToMetricFamilies(resp.Body)
}

// refusalsOf sums scalein_http_requests_total by status code from 400 up.
func refusalsOf(m map[string]*dto.MetricFamily) map[string]float64 {
	out := map[string]float64{}
	for _, mm := range m["scalein_http_requests_total"].GetMetric() {
		for _, l := range mm.GetLabel() {
			if l.GetName() == "code" && l.GetValue() >= "400" {
				out[l.GetValue()] += mm.GetCounter().GetValue()
			}
		}
	}
	return out
}

// TestSoakHostileJourneys runs each of the probe's journeys once against a real server (no
// SCALEIN_SLOW needed: a few seconds), with the answers the soak expects of them, and reads the
// refusals on GET /metrics.
func TestSoakHostileJourneys(t *testing.T) {
	metricsAddr := freeAddr(t)
	b := &backend{name: "hostile", dsn: t.TempDir() + "/h.db", addr: freeAddr(t), t: t,
		serveArgs: append(serveFlags(1), "-metrics-addr", metricsAddr)}
	b.startServer()
	u := &soakUser{b: b, name: "mallory", rng: newSoakRand(), client: &http.Client{Timeout: 60 * time.Second}}

	for _, path := range soakLargeBodyRoutes {
		u.largeBody(path)
	}
	u.abandonedBody()
	u.nestedQuery()
	u.parallelImports(3)

	want := map[string][]int{
		"hostile: 200 MiB declared to /livez":               {http.StatusMethodNotAllowed},
		"hostile: 200 MiB declared to /api/v1/runs":         {http.StatusRequestEntityTooLarge},
		"hostile: 200 MiB declared to /api/v1/hpa/import":   {http.StatusRequestEntityTooLarge},
		"hostile: 200 MiB declared to /traces":              {http.StatusRequestEntityTooLarge},
		"hostile: 200 MiB declared to /api/v1/calibrations": {http.StatusRequestEntityTooLarge},
		"hostile: 200 MiB declared to /runs/{id}/cancel":    {http.StatusRequestEntityTooLarge},
		"hostile: nested KEDA query":                        {http.StatusBadRequest},
		"hostile: parallel 1.5 MB imports":                  {http.StatusOK, http.StatusServiceUnavailable, http.StatusTooManyRequests},
	}
	b.mu.Lock()
	samples := append([]sample(nil), b.samples...)
	b.mu.Unlock()
	seen := map[string]int{}
	for _, s := range samples {
		t.Logf("%s: %d %.200s", s.route, s.status, s.body)
		seen[s.route]++
		codes, ok := want[s.route]
		require.True(t, ok, "an unexpected route %q", s.route)
		assert.Contains(t, codes, s.status, "%s: %s %s", s.route, s.err, s.body)
		if s.status == http.StatusServiceUnavailable {
			assert.True(t, s.busy, "%s: a 503 is the large-body slots' busy", s.route)
		}
		assert.Less(t, s.latency, 30*time.Second, s.route) // a bound against hanging, not a timing claim
	}
	for route := range want {
		assert.Positive(t, seen[route], route)
	}
	assert.Equal(t, 3, seen["hostile: parallel 1.5 MB imports"])

	m, err := scrapeMetrics(metricsAddr)
	require.NoError(t, err)
	refused := refusalsOf(m)
	t.Logf("refusals on /metrics: %v; answers: %v", refused, seen)
	assert.GreaterOrEqual(t, refused["413"], 5.0, "the 413s are counted: %v", refused)
	assert.GreaterOrEqual(t, refused["405"], 1.0, "%v", refused)
	assert.GreaterOrEqual(t, refused["400"], 1.0, "%v", refused)
	// The abandoned body is logged as the client's, at WARN.
	require.Eventually(t, func() bool { return strings.Contains(b.server.output(), "ClientAborted") }, 10*time.Second, 20*time.Millisecond)
	out := b.server.output()
	assert.NotContains(t, out, "level=ERROR", "no refusal and no abandoned body is a server error")
}
