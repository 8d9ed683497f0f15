package sim

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"runtime"
	"runtime/debug"
	"strings"
	"sync"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/require"

	"github.com/scalein-planner/scalein/sim/internal/kvcache"
)

// The model's per-item figures must cover the structures they stand for; when a structure
// grows (or moves to another package), this fails and the figure is raised with it.
func TestMemoryFiguresCoverStructures(t *testing.T) {
	checks := []struct {
		name   string
		size   uintptr
		figure int64
	}{
		// The cache records' sizes come from kvcache, whose TestRecordSizes checks them.
		{"free-list entry", unsafe.Sizeof(int32(0)), freeEntryBytes},
		{"request + heap entry + held arrival + its place + id + pull + 2 events + transfer",
			unsafe.Sizeof(request{}) + unsafe.Sizeof(heapArrival{}) + unsafe.Sizeof(arrival{}) + 4 + 16 + unsafe.Sizeof(pull{}) +
				2*unsafe.Sizeof(event{}) + unsafe.Sizeof(transfer{}), requestBytes},
		{"worker + caches + gauges + pass event + report row",
			unsafe.Sizeof(worker{}) + unsafe.Sizeof(kvcache.GPU{}) + unsafe.Sizeof(kvcache.Host{}) + 8 + 4 + 4 + 4 + 4 +
				2*unsafe.Sizeof(event{}) + unsafe.Sizeof(WorkerRow{}) + 6*8, workerBytes},
		{"removed worker's row + pointer targets", 2 * (unsafe.Sizeof(WorkerRow{}) + 9*8), goneWorkerRowBytes},
		{"series bucket", unsafe.Sizeof(seriesBucket{}), seriesBucketBytes},
		{"report bucket + its TTFT and attainment floats", unsafe.Sizeof(Bucket{}) + 8 + 8, reportBucketBytes},
		{"RequestRow + pointer targets + id", unsafe.Sizeof(RequestRow{}) + 3*8 + 24 + 8, requestRowBytes},
		{"TraceRow", unsafe.Sizeof(TraceRow{}), traceRowBytes},
		{"SLO tracker", unsafe.Sizeof(sloTracker{}) + 3*maxBuckets*unsafe.Sizeof(arrivalBucket{}), sloTrackerBytes + 256},
	}
	for _, c := range checks {
		if int64(c.size) > c.figure {
			t.Errorf("%s is %d bytes; the memory model counts %d: raise the figure in memory_estimate.go", c.name, c.size, c.figure)
		}
	}
}

// heapBytes reads the bytes of heap objects, live or not yet collected. ReadMemStats flushes
// every P's cached spans first; runtime/metrics' heap objects figure counts a small object only
// when its span leaves a cache, so it lags by up to a span per size class and P (it read 72 kB
// for the e2 preset, which allocates more than twice that without a collection).
func heapBytes() int64 {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return int64(ms.HeapAlloc)
}

// measurePeakHeap runs s (and encodes its report as the server does) while sampling the heap
// every 500 µs, with the collector at the command's 50 % target, and returns the peak above the
// heap before the run. The JSON encoder's per-type caches, which a process fills once for all
// runs, are filled before the base is read; its pooled buffers are dropped (two collections
// empty a sync.Pool), so the run pays for its own, as the first run of a process does, whatever
// ran before it.
func measurePeakHeap(tb testing.TB, s *Scenario) int64 {
	tb.Helper()
	defer debug.SetGCPercent(debug.SetGCPercent(50))
	if _, err := json.Marshal(&Report{}); err != nil {
		tb.Fatal(err)
	}
	runtime.GC()
	runtime.GC()
	base := heapBytes()
	var (
		mu   sync.Mutex
		peak = base
	)
	sample := func() {
		h := heapBytes()
		mu.Lock()
		peak = max(peak, h)
		mu.Unlock()
	}
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(500 * time.Microsecond)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
				sample()
			}
		}
	}()
	rep, err := Run(context.Background(), s, RunOptions{Progress: func(float64) { sample() }})
	if err != nil {
		tb.Fatal(err)
	}
	sample()
	data, err := json.Marshal(rep)
	if err != nil {
		tb.Fatal(err)
	}
	sample()
	runtime.KeepAlive(data)
	close(stop)
	<-done
	return peak - base
}

// memoryScenarios are small scenarios of different shapes: caches that fill, caches the
// workload cannot fill, per-request rows, many workers, a trace.
func memoryScenarios(tb testing.TB) map[string]*Scenario {
	tb.Helper()
	out := map[string]*Scenario{}
	for _, p := range Presets() {
		if p.Key == "large-fleet" {
			continue // measured for docs/performance.md by TestMemoryModelTable
		}
		if p.Long && !slowTests() {
			continue // a real-time day: SCALEIN_SLOW=1 measures it
		}
		s, err := Parse(p.JSON, ParseEnv{})
		if err != nil {
			tb.Fatalf("preset %s: %v", p.Key, err)
		}
		out["preset "+p.Key] = s
	}
	sessions := func(name string, workers, gpu, host, count, turns, sys, groups int, perRequest bool) {
		doc := fmt.Sprintf(`{"name": %q, "fleet": {"workers": %d, "gpu_blocks": %d, "host_blocks": %d, "block_size": 16},
			"scale_in": [{"at_ms": 2000, "count": %d}],
			"workload": {"type": "sessions", "sessions": {"count": %d, "rate_per_s": 2000, "turns": %d,
				"system_prompt_tokens": %d, "prefix_groups": %d, "new_input_tokens": 200, "output_tokens": 50, "think_time_ms": 100}},
			"report": {"per_request": %v}}`, name, workers, gpu, host, workers/4, count, turns, sys, groups, perRequest)
		s, err := Parse([]byte(doc), ParseEnv{})
		if err != nil {
			tb.Fatalf("%s: %v", name, err)
		}
		out[name] = s
	}
	sessions("sessions, small caches that fill", 8, 2000, 4000, 3000, 3, 512, 4, false)
	sessions("sessions, huge caches the workload cannot fill", 4, 10_000_000, 10_000_000, 2000, 2, 256, 2, false)
	sessions("sessions with per-request rows", 16, 4000, 8000, 5000, 2, 1024, 8, true)
	sessions("sessions, 512 workers", 512, 1000, 2000, 4000, 2, 1024, 16, false)
	return out
}

func TestEstimateCoversMeasuredHeap(t *testing.T) {
	if testing.Short() {
		t.Skip("runs several scenarios")
	}
	for name, s := range memoryScenarios(t) {
		t.Run(name, func(t *testing.T) {
			est := EstimateMemory(s)
			measured := measurePeakHeap(t, s)
			t.Logf("estimate %s, measured peak %s (%.1f×)", FormatBytes(est.Bytes), FormatBytes(measured), float64(est.Bytes)/float64(max(measured, 1)))
			if est.Bytes < measured {
				t.Errorf("estimate %d bytes is below the measured peak heap %d bytes; drivers: %+v", est.Bytes, measured, est.Drivers)
			}
		})
	}
}

// randomMemoryScenario builds a small seeded scenario: sessions or scripted requests on a fleet
// of random size and caches, a random router and scale-in, with or without per-request rows.
func randomMemoryScenario(tb testing.TB, rng *rand.Rand) (string, *Scenario) {
	tb.Helper()
	workers := 1 + rng.IntN(48)
	bs := []int{16, 64}[rng.IntN(2)]
	policy := []string{PolicyKVAware, PolicyRoundRobin, PolicyLeastLoaded}[rng.IntN(3)]
	var workload string
	if rng.IntN(3) == 0 {
		var reqs []string
		for i := range 20 + rng.IntN(200) {
			reqs = append(reqs, fmt.Sprintf(`{"id": "r%d", "at_ms": %d, "blocks": ["G%d*%d", "U%d*%d"], "output_tokens": %d}`,
				i, rng.IntN(3000), rng.IntN(4), 1+rng.IntN(40), i, 1+rng.IntN(20), 1+rng.IntN(200)))
		}
		workload = `{"type": "requests", "requests": [` + strings.Join(reqs, ",") + `]}`
	} else {
		workload = fmt.Sprintf(`{"type": "sessions", "sessions": {"count": %d, "rate_per_s": %d, "turns": %d,
			"system_prompt_tokens": %d, "prefix_groups": %d, "new_input_tokens": %d, "output_tokens": %d, "think_time_ms": %d}}`,
			50+rng.IntN(1500), 100+rng.IntN(3000), 1+rng.IntN(4), rng.IntN(2048), 1+rng.IntN(8),
			1+rng.IntN(400), 1+rng.IntN(200), rng.IntN(300))
	}
	host := rng.IntN(2) * (64 + rng.IntN(12000))
	scaleIn := "[]"
	if workers > 1 {
		scaleIn = fmt.Sprintf(`[{"at_ms": %d, "count": %d}]`, rng.IntN(4000), 1+rng.IntN(workers/2))
	}
	doc := fmt.Sprintf(`{"name": "random", "seed": %d,
		"fleet": {"workers": %d, "gpu_blocks": %d, "host_blocks": %d, "block_size": %d, "max_batched_tokens": 8192},
		"router": {"policy": %q, "hints": true}, "kvcr": {"enabled": %v},
		"scale_in": %s,
		"workload": %s, "report": {"per_request": %v}}`,
		rng.IntN(1000), workers, 64+rng.IntN(6000), host, bs, policy, host > 0,
		scaleIn, workload, rng.IntN(2) == 0)
	s, err := Parse([]byte(doc), ParseEnv{})
	if err != nil {
		tb.Fatalf("random scenario does not validate: %v\n%s", err, doc)
	}
	return fmt.Sprintf("%d workers × %d/%d blocks, %s, %s", workers, s.Fleet.GPUBlocks, s.Fleet.HostBlocks, policy, s.Workload.Type), s
}

// The estimate is an upper bound on seeded random small scenarios too, not only on the shapes
// of the table.
func TestEstimateCoversRandomScenarios(t *testing.T) {
	if testing.Short() {
		t.Skip("runs several scenarios")
	}
	rng := rand.New(rand.NewPCG(7, 7))
	for i := range 8 {
		name, s := randomMemoryScenario(t, rng)
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			est := EstimateMemory(s)
			measured := measurePeakHeap(t, s)
			t.Logf("%s: estimate %s, measured peak %s (%.1f×)", name, FormatBytes(est.Bytes), FormatBytes(measured), float64(est.Bytes)/float64(max(measured, 1)))
			if est.Bytes < measured {
				t.Errorf("%s: estimate %d bytes is below the measured peak heap %d bytes; drivers: %+v", name, est.Bytes, measured, est.Drivers)
			}
		})
	}
}

// TestMemoryModelTable prints the table of docs/performance.md ("Memory model"), with the
// large-fleet preset; SCALEIN_MEMORY_TABLE=1 turns it on.
func TestMemoryModelTable(t *testing.T) {
	if os.Getenv("SCALEIN_MEMORY_TABLE") == "" {
		t.Skip("set SCALEIN_MEMORY_TABLE=1 to measure the table of docs/performance.md")
	}
	scenarios := memoryScenarios(t)
	p, _ := PresetByKey("large-fleet")
	s, err := Parse(p.JSON, ParseEnv{})
	if err != nil {
		t.Fatal(err)
	}
	scenarios["preset large-fleet"] = s
	var b strings.Builder
	b.WriteString("| scenario | largest driver | estimate | measured peak heap | estimate / measured |\n| --- | --- | --- | --- | --- |\n")
	for name, s := range scenarios {
		est := EstimateMemory(s)
		measured := measurePeakHeap(t, s)
		fmt.Fprintf(&b, "| %s | `%s` | %s | %s | %.1f× |\n", name, est.Largest().Field, FormatBytes(est.Bytes), FormatBytes(measured), float64(est.Bytes)/float64(max(measured, 1)))
		if est.Bytes < measured {
			t.Errorf("%s: estimate %d below measured %d", name, est.Bytes, measured)
		}
	}
	t.Log("\n" + b.String())
}

func TestEstimateHostileScenario(t *testing.T) {
	doc := `{"fleet": {"workers": 16384, "gpu_blocks": 10000000, "host_blocks": 10000000, "block_size": 16,
		"max_batched_tokens": 2000000},
		"workload": {"type": "sessions", "sessions": {"count": 1250000, "rate_per_s": 1e9, "turns": 4,
			"system_prompt_tokens": 1000000, "prefix_groups": 5000000, "new_input_tokens": 1000, "output_tokens": 100}}}`
	s, err := Parse([]byte(doc), ParseEnv{})
	if err != nil {
		t.Skipf("the hostile scenario no longer validates (%v)", err)
	}
	est := EstimateMemory(s)
	if est.Bytes < 1<<40 {
		t.Errorf("estimate %s; want over a TB for 16,384 workers × 10M blocks reachable by 5M requests of 62,500 blocks", FormatBytes(est.Bytes))
	}
	if f := est.Largest().Field; f != "fleet.gpu_blocks" && f != "fleet.workers" && f != "fleet.host_blocks" {
		t.Errorf("largest driver %q; want a fleet field", f)
	}
}

func TestFormatBytes(t *testing.T) {
	for n, want := range map[int64]string{0: "0 B", 999: "999 B", 1500: "1.5 kB", 31_000_000_000: "31 GB", 6e9: "6 GB", 1_250_000: "1.3 MB"} {
		if got := FormatBytes(n); got != want {
			t.Errorf("FormatBytes(%d) = %q, want %q", n, got, want)
		}
	}
	if got := groupDigits(16384); got != "16,384" {
		t.Errorf("groupDigits(16384) = %q", got)
	}
}

func TestParseBytes(t *testing.T) {
	for in, want := range map[string]int64{"6GB": 6e9, "500 MB": 5e8, "2GiB": 2 << 30, "1.5tb": 1.5e12, "1024": 1024, "64KiB": 64 << 10} {
		got, err := ParseBytes(in)
		if err != nil || got != want {
			t.Errorf("ParseBytes(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "GB", "6 XB", "-1GB", "1e400"} {
		if _, err := ParseBytes(in); err == nil {
			t.Errorf("ParseBytes(%q) accepted", in)
		}
	}
}

func TestMemoryCheckNamesTheDrivingFields(t *testing.T) {
	doc := `{"fleet": {"workers": 64, "gpu_blocks": 10000000, "host_blocks": 10000000, "block_size": 16, "max_batched_tokens": 2000000},
		"workload": {"type": "sessions", "sessions": {"count": 5000, "rate_per_s": 100, "turns": 1,
			"system_prompt_tokens": 1000000, "new_input_tokens": 999000, "output_tokens": 10}}}`
	s, err := Parse([]byte(doc), ParseEnv{})
	if err != nil {
		t.Fatal(err)
	}
	est := EstimateMemory(s)
	if err := est.Check(est.Bytes, "this server"); err != nil {
		t.Errorf("an estimate equal to the limit was refused: %v", err)
	}
	err = est.Check(6e9, "this server")
	var ve *ValidationError
	if !errors.As(err, &ve) || len(ve.Errors) == 0 {
		t.Fatalf("Check(6 GB) = %v; want a ValidationError", err)
	}
	first := ve.Errors[0]
	if first.Path != "fleet.gpu_blocks" || !strings.Contains(first.Message, "64 workers") || !strings.Contains(first.Message, "this server allows 6 GB per run") {
		t.Errorf("first problem %+v; want fleet.gpu_blocks with the worker count and the limit", first)
	}
}

// The bound that skips generating prompt keys is never below the estimate, for every preset,
// the measured scenarios, seeded random ones and the Mooncake trace; it equals it for sessions,
// whose keys are never generated.
func TestEstimateBoundCoversEstimate(t *testing.T) {
	scenarios := memoryScenarios(t)
	for _, p := range Presets() {
		scenarios["preset "+p.Key] = mustParse(t, string(p.JSON))
	}
	rng := rand.New(rand.NewPCG(7, 7))
	for i := range 8 {
		name, s := randomMemoryScenario(t, rng)
		scenarios[fmt.Sprint("random ", i, " ", name)] = s
	}
	scenarios["mooncake trace on 16 workers"] = mustParse(t, `{"fleet": {"workers": 16},
		"workload": {"type": "trace", "trace": {"name": "mooncake-conversation"}}}`)
	for name, s := range scenarios {
		exact, bound := EstimateMemory(s), EstimateMemoryBound(s)
		if bound.Bytes < exact.Bytes {
			t.Errorf("%s: bound %d bytes is below the estimate %d bytes", name, bound.Bytes, exact.Bytes)
		}
		if s.Workload.Type == WorkloadSessions && bound.Bytes != exact.Bytes {
			t.Errorf("%s: bound %d bytes differs from the estimate %d bytes", name, bound.Bytes, exact.Bytes)
		}
	}
}

// A trace's key census is kept for the next scenario on the same rows and block sizes, and an
// estimate from the kept census is the estimate computed afresh; another limit or block size is
// another census.
func TestKeyCensusKeptPerTrace(t *testing.T) {
	doc := func(workers int, extra string) *Scenario {
		return mustParse(t, fmt.Sprintf(`{"fleet": {"workers": %d%s},
			"workload": {"type": "trace", "trace": {"name": "mooncake-conversation", "limit": 4000}}}`, workers, extra))
	}
	s16, s64, s64bs := doc(16, ""), doc(64, ""), doc(64, `, "block_size": 32`)
	censuses.Purge()
	fresh := EstimateMemory(s64)
	censuses.Purge()
	EstimateMemory(s16)
	id := traceCensusID(s64.traceRowsUsed(), s64.Fleet.BlockSize, s64.Workload.Trace.TraceBlockTokens)
	kept, ok := censuses.Get(id)
	require.True(t, ok, "the census of the first scenario was not kept")
	require.Equal(t, fresh, EstimateMemory(s64), "an estimate from the kept census differs from a fresh one")
	require.NotEmpty(t, kept)
	var keys int64
	for _, c := range kept {
		keys += c.keys
	}
	require.Positive(t, keys)

	other := traceCensusID(s64bs.traceRowsUsed(), s64bs.Fleet.BlockSize, s64bs.Workload.Trace.TraceBlockTokens)
	require.NotEqual(t, id, other, "another block size must be another census")
	limited := doc(64, "")
	limited.Workload.Trace.Limit = 3000
	require.NotEqual(t, id, traceCensusID(limited.traceRowsUsed(), 16, limited.Workload.Trace.TraceBlockTokens))
	_, ok = censuses.Get(other)
	require.False(t, ok)
	censuses.Purge()
	want := EstimateMemory(s64bs)
	EstimateMemory(s16) // a census of another block size in the cache does not answer for it
	require.Equal(t, want, EstimateMemory(s64bs))
}

func TestMemoryFigureCoversHandoffs(t *testing.T) {
	size := unsafe.Sizeof(handoff{}) + unsafe.Sizeof(pull{})
	require.LessOrEqual(t, int64(size), int64(handoffBytes), "handoff + pull is %d bytes: raise handoffBytes", size)
}
