package web

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/scalein-planner/scalein/runs"
	"github.com/scalein-planner/scalein/store"
)

// exportScenario is a small run with a drain, so trace.json simulates its passes again.
const exportScenario = `{"name": "export", "fleet": {"workers": 2, "gpu_blocks": 2048, "host_blocks": 0, "block_size": 16,
	"max_num_seqs": 16, "max_batched_tokens": 512},
	"kvcr": {"enabled": false}, "scale_in": [{"at_ms": 200, "workers": [1]}],
	"workload": {"type": "sessions", "sessions": {"count": 20, "turns": 2, "rate_per_s": 40,
		"system_prompt_tokens": 300, "new_input_tokens": 100, "output_tokens": 20, "think_time_ms": 100}}}`

// Issue 19 H3: an export of a run that is not done is a 409 (passes.jsonl used to simulate
// queued, running and cancelled runs).
func TestExportsOfARunNotDone(t *testing.T) {
	s := newFakeServer(t, runs.Config{}, false) // never started: the run stays queued
	id := submitAPI(t, s, exportScenario)
	for _, target := range []string{"/runs/" + id + "/passes.jsonl?worker=0", "/runs/" + id + "/trace.json"} {
		rec := get(t, s, target)
		assert.Equal(t, http.StatusConflict, rec.Code, target)
		assert.Contains(t, rec.Body.String(), "is queued", target)
	}
}

// Issue 19 H3: exports take a grant of the run's estimate from the memory budget, so they wait
// (then 503 with Retry-After) while the budget is taken, and a run estimated above this
// process's whole budget is not exported here at all.
func TestExportsGoThroughTheMemoryBudget(t *testing.T) {
	s := newFakeServer(t, runs.Config{Workers: 1}, true)
	id := submitAPI(t, s, exportScenario)
	waitStatus(t, s, id, store.StatusDone)
	s.exports().wait = 50 * time.Millisecond

	hold, err := s.runs.Reserve(context.Background(), s.runs.Limits().MaxTotalMemory) // every byte taken
	require.NoError(t, err)
	for _, target := range []string{"/runs/" + id + "/passes.jsonl?worker=0", "/runs/" + id + "/trace.json"} {
		rec := get(t, s, target)
		assert.Equal(t, http.StatusServiceUnavailable, rec.Code, target)
		assert.Equal(t, "10", rec.Header().Get("Retry-After"), target)
		assert.Contains(t, rec.Body.String(), "no memory to simulate this run again", target)
	}
	hold()
	rec := get(t, s, "/runs/"+id+"/passes.jsonl?worker=0")
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())

	// Another server on the same database whose own budget no run fits (a small serve pod).
	small := newFakeServer(t, runs.Config{Store: s.store, Workers: 1, MaxRunMemory: 1, MaxTotalMemory: 1}, false)
	rec = get(t, small, "/runs/"+id+"/passes.jsonl?worker=0")
	assert.Equal(t, http.StatusServiceUnavailable, rec.Code)
	assert.Contains(t, rec.Body.String(), "scalein sim -passes")
}

// Issue 19 H3: at most maxExportsAtOnce exports simulate at once; another waits for a slot.
func TestExportsAreBoundedInNumber(t *testing.T) {
	s := newFakeServer(t, runs.Config{Workers: 1}, true)
	id := submitAPI(t, s, exportScenario)
	waitStatus(t, s, id, store.StatusDone)
	g := s.exports()
	g.wait = 50 * time.Millisecond
	for range maxExportsAtOnce {
		g.slots <- struct{}{}
	}
	rec := get(t, s, "/runs/"+id+"/passes.jsonl?worker=0")
	assert.Equal(t, http.StatusServiceUnavailable, rec.Code)
	for range maxExportsAtOnce {
		<-g.slots
	}
	assert.Equal(t, http.StatusOK, get(t, s, "/runs/"+id+"/passes.jsonl?worker=0").Code)
}

// Issue 19 H3: trace.json is built once per run and then served from the cache.
func TestTraceJSONIsCached(t *testing.T) {
	s := newFakeServer(t, runs.Config{Workers: 1}, true)
	id := submitAPI(t, s, exportScenario)
	waitStatus(t, s, id, store.StatusDone)
	first := get(t, s, "/runs/"+id+"/trace.json")
	require.Equal(t, http.StatusOK, first.Code, first.Body.String())
	cached, ok := s.exports().traces.get(id)
	require.True(t, ok, "the first export is cached")
	assert.Equal(t, first.Body.Bytes(), cached)
	// With every byte of the budget taken, the cached export still answers at once.
	s.exports().wait = 50 * time.Millisecond
	hold, err := s.runs.Reserve(context.Background(), s.runs.Limits().MaxTotalMemory)
	require.NoError(t, err)
	defer hold()
	again := get(t, s, "/runs/"+id+"/trace.json")
	require.Equal(t, http.StatusOK, again.Code)
	assert.Equal(t, first.Body.Bytes(), again.Body.Bytes())
}

// Issue 19 L10: exports have a rate budget of their own, counted only for runs that exist and
// are done: creating runs does not use it up, and a missing run is a 404, not a 429.
func TestExportRateLimitIsSeparate(t *testing.T) {
	s := newLimitedServer(t, runs.Config{}, 3, true)
	var id string
	for i := range 3 { // the creation budget is now spent
		id = submitAPI(t, s, testScenario("export rate "+string(rune('a'+i))))
	}
	assert.Equal(t, http.StatusTooManyRequests, postJSON(t, s, "/api/v1/runs", testScenario("one more")).Code)
	waitStatus(t, s, id, store.StatusDone)
	assert.Equal(t, http.StatusNotFound, get(t, s, "/runs/aaaaaaaaaaaaaaaa/passes.jsonl?worker=0").Code)
	for range 3 {
		assert.Equal(t, http.StatusOK, get(t, s, "/runs/"+id+"/passes.jsonl?worker=0").Code)
	}
	rec := get(t, s, "/runs/"+id+"/trace.json") // the fourth export in a minute
	assert.Equal(t, http.StatusTooManyRequests, rec.Code)
	assert.NotEmpty(t, rec.Header().Get("Retry-After"))
	assert.Contains(t, rec.Body.String(), "exports")
}

// newLimitedServer is newFakeServer with a rate limit of perMinute runs (and exports) a minute.
func newLimitedServer(t *testing.T, cfg runs.Config, perMinute int, work bool) *Server {
	t.Helper()
	return newFakeApp(t, cfg, work, Config{RunsPerMinute: perMinute})
}
