package web

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/scalein-planner/scalein/runs"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// importBody is POST /api/v1/hpa/import's body for the test scenario, padded with pad bytes of
// white space (a large body that parses as a small one).
func importBody(pad int) string {
	b, _ := json.Marshal(cpuHPA)
	return `{"scenario":` + testScenario("transform") + strings.Repeat(" ", pad) + `,"manifest":` + string(b) + `}`
}

// transformRequests are the five transforms of finding M2 of the 2026-12c probe, each with a
// body of about pad bytes more than it needs.
func transformRequests(pad int) map[string]func() *http.Request {
	form := func(target string, v url.Values) func() *http.Request {
		return func() *http.Request {
			req := httptest.NewRequest(http.MethodPost, target, strings.NewReader(v.Encode()))
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			return req
		}
	}
	padded := testScenario("transform") + strings.Repeat(" ", pad)
	return map[string]func() *http.Request{
		"POST /api/v1/hpa/import": func() *http.Request { return jsonReq(http.MethodPost, "/api/v1/hpa/import", importBody(pad)) },
		"POST /api/v1/load/prometheus": func() *http.Request {
			return jsonReq(http.MethodPost, "/api/v1/load/prometheus", `{"scenario":`+padded+`,"answer":{"status":"success","data":{"resultType":"matrix","result":[]}}}`)
		},
		"POST /plans/import-hpa":        form("/plans/import-hpa", url.Values{"scenario": {padded}, "manifest": {cpuHPA}}),
		"POST / action=import_hpa":      form("/", url.Values{"action": {"import_hpa"}, "manifest": {cpuHPA}, "pad": {strings.Repeat("x", pad)}}),
		"POST / action=load_prometheus": form("/", url.Values{"action": {"load_prometheus"}, "prometheus_answer": {`{}`}, "pad": {strings.Repeat("x", pad)}}),
	}
}

// TestTransformsRefuseViewers: a viewer of a read-only server may not import (a transform only
// prepares a run or plan they cannot create); an admin may; the form's other edits stay open.
func TestTransformsRefuseViewers(t *testing.T) {
	s := newAccessServer(t, runs.Config{}, withUsers(Access{ReadOnly: true}), 0)
	for name, req := range transformRequests(0) {
		rec := as(t, s, "alice", req())
		assert.Equal(t, http.StatusForbidden, rec.Code, "%s: %s", name, rec.Body.String())
		assert.Contains(t, rec.Body.String(), "read-only", name)
	}
	rec := as(t, s, "root", transformRequests(0)["POST /api/v1/hpa/import"]())
	assert.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	edit := httptest.NewRequest(http.MethodPost, "/", strings.NewReader(url.Values{"action": {"add_row"}}.Encode()))
	edit.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	assert.Equal(t, http.StatusOK, as(t, s, "alice", edit).Code, "a viewer still edits the form")
}

// TestTransformsRateLimited: transforms have a rate per client, transformsPerRun × the runs a
// minute, shared by the API and the forms.
func TestTransformsRateLimited(t *testing.T) {
	s := newAccessServer(t, runs.Config{}, withUsers(Access{}), 1)
	reqs := transformRequests(0)
	for i := range transformsPerRun {
		rec := as(t, s, "alice", reqs["POST /api/v1/hpa/import"]())
		require.Equal(t, http.StatusOK, rec.Code, "import %d: %s", i+1, rec.Body.String())
	}
	for name, req := range reqs {
		rec := as(t, s, "alice", req())
		assert.Equal(t, http.StatusTooManyRequests, rec.Code, "%s: %s", name, rec.Body.String())
		assert.Contains(t, rec.Body.String(), "imports (manifests, Prometheus answers) in the last minute", name)
	}
	assert.Equal(t, http.StatusOK, as(t, s, "bob", reqs["POST /api/v1/hpa/import"]()).Code, "another user has a rate of his own")
}

// TestTransformsTakeLargeBodySlots replays finding M2: a transform of a body over 1 MiB waits for
// a slot of the large-body limiter and a memory grant, as run creation does, and says the
// server is busy when none comes in time.
func TestTransformsTakeLargeBodySlots(t *testing.T) {
	s := newFakeServer(t, runs.Config{MaxRunMemory: 1 << 30, MaxTotalMemory: 4 << 30}, false)
	s.exports().uploadWait = 50 * time.Millisecond
	large := transformRequests(bigBodyBytes + 1)

	for range cap(s.bodies.slots) {
		s.bodies.slots <- struct{}{}
	}
	for name, req := range large {
		rec := do(t, s.Handler(), req())
		assert.Equal(t, http.StatusServiceUnavailable, rec.Code, "%s waits for a slot: %s", name, rec.Body.String())
		assert.Contains(t, rec.Body.String(), "busy", name)
	}
	// A small body needs no slot.
	rec := do(t, s.Handler(), transformRequests(0)["POST /api/v1/hpa/import"]())
	assert.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	for range cap(s.bodies.slots) {
		<-s.bodies.slots
	}

	// Slots free, the memory budget taken: the grant is not given.
	release, err := s.runs.Reserve(context.Background(), 4<<30)
	require.NoError(t, err)
	rec = do(t, s.Handler(), large["POST /api/v1/hpa/import"]())
	assert.Equal(t, http.StatusServiceUnavailable, rec.Code, "waits for memory: %s", rec.Body.String())
	release()

	rec = do(t, s.Handler(), large["POST /api/v1/hpa/import"]())
	assert.Equal(t, http.StatusOK, rec.Code, "with a slot and memory: %s", rec.Body.String())
}

// A transform whose client went away while it waited for a slot is not parsed (its work ends
// with its request): the answer is the cancellation's, and the slot is given back.
func TestTransformEndsWithItsRequest(t *testing.T) {
	s := newFakeServer(t, runs.Config{MaxRunMemory: 1 << 30, MaxTotalMemory: 4 << 30}, false)
	for range cap(s.bodies.slots) {
		s.bodies.slots <- struct{}{}
	}
	ctx, cancel := context.WithCancel(context.Background())
	parsed := false
	done := make(chan error, 1)
	go func() {
		done <- s.parseBody(ctx, bigBodyBytes+1, func() error { parsed = true; return nil })
	}()
	cancel()
	require.ErrorIs(t, <-done, context.Canceled)
	assert.False(t, parsed, "nothing is parsed for a client that left")
	for range cap(s.bodies.slots) {
		<-s.bodies.slots
	}
	assert.Empty(t, s.bodies.slots, "no slot is held")
}
