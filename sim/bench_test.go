package sim

import (
	"context"
	"math/rand/v2"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"testing"
)

func benchRun(b *testing.B, js string) {
	b.Helper()
	s, err := Parse([]byte(js), ParseEnv{})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	// The scalein command collects at 50 % heap growth unless GOGC is set; measure the same.
	if os.Getenv("GOGC") == "" {
		defer debug.SetGCPercent(debug.SetGCPercent(50))
	}
	var rep *Report
	for b.Loop() {
		rep, err = Run(context.Background(), s, RunOptions{})
		if err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(rep.Summary.Requests.Total), "requests")
	b.ReportMetric(float64(rep.Sim.Events), "events")
}

// BenchmarkMooncake16 is the Mooncake conversation trace (12,031 requests) on 16 workers.
func BenchmarkMooncake16(b *testing.B) {
	benchRun(b, `{"name": "bench mooncake 16", "fleet": {"workers": 16},
		"workload": {"type": "trace", "trace": {"name": "mooncake-conversation"}}}`)
}

// BenchmarkMooncake16NoKVTerm is BenchmarkMooncake16 without the decode KV term: the same
// simulation as model 1's BenchmarkMooncake16, to compare the cost of the code alone.
func BenchmarkMooncake16NoKVTerm(b *testing.B) {
	benchRun(b, `{"name": "bench mooncake 16", "fleet": {"workers": 16, "timing": {"decode_ms_per_1k_kv_tokens": 0}},
		"workload": {"type": "trace", "trace": {"name": "mooncake-conversation"}}}`)
}

// BenchmarkEventHeap is the floor a discrete-event loop cannot go below: one pop and one push
// of the engine's event type on a binary heap of 64 pending events, with pass-like times (each
// popped event comes back 1 to 11 ms later). A run's cost per event is compared with it in
// docs/performance.md.
func BenchmarkEventHeap(b *testing.B) {
	var h eventHeap
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range 64 {
		h.push(event{t: rng.Int64N(10_000_000), seq: int64(i), kind: evPass})
	}
	for b.Loop() {
		ev := h.pop()
		ev.t += 1_000_000 + rng.Int64N(10_000_000)
		h.push(ev)
	}
	if len(h) != 64 {
		b.Fatalf("heap holds %d events, want 64", len(h))
	}
}

// BenchmarkSessions100k is 100,000 session requests on 512 workers.
func BenchmarkSessions100k(b *testing.B) {
	benchRun(b, `{"name": "bench sessions 100k", "fleet": {"workers": 512},
		"workload": {"type": "sessions", "sessions": {"count": 25000, "turns": 4, "rate_per_s": 400}}}`)
}

// BenchmarkSessions1M is 1,000,000 session requests on 2,048 workers. It takes minutes, so it
// runs only with SCALEIN_BENCH_1M=1.
func BenchmarkSessions1M(b *testing.B) {
	if os.Getenv("SCALEIN_BENCH_1M") == "" {
		b.Skip("set SCALEIN_BENCH_1M=1 to run the 1,000,000-request benchmark")
	}
	benchRun(b, `{"name": "bench sessions 1M", "fleet": {"workers": 2048},
		"workload": {"type": "sessions", "sessions": {"count": 250000, "turns": 4, "rate_per_s": 1600}}}`)
}

// TestHeapProfileSessions1M writes a heap profile of the 1,000,000-request run when
// 600,000 requests have completed, to the file named by SCALEIN_HEAP_PROFILE (it runs only then).
func TestHeapProfileSessions1M(t *testing.T) {
	out := os.Getenv("SCALEIN_HEAP_PROFILE")
	if out == "" {
		t.Skip("set SCALEIN_HEAP_PROFILE=FILE to profile the 1,000,000-request run's heap")
	}
	s, err := Parse([]byte(`{"name": "bench sessions 1M", "fleet": {"workers": 2048},
		"workload": {"type": "sessions", "sessions": {"count": 250000, "turns": 4, "rate_per_s": 1600}}}`), ParseEnv{})
	if err != nil {
		t.Fatal(err)
	}
	e, err := newEngine(s, RunOptions{MaxEvents: DefaultMaxEvents, MaxVirtualMS: DefaultMaxVirtualMS})
	if err != nil {
		t.Fatal(err)
	}
	written := false
	e.afterInstant = func() {
		if written || e.completedN < 600_000 {
			return
		}
		written = true
		f, err := os.Create(out)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		runtime.GC()
		if err := pprof.WriteHeapProfile(f); err != nil {
			t.Fatal(err)
		}
	}
	if err := e.loop(context.Background()); err != nil {
		t.Fatal(err)
	}
	if !written {
		t.Fatal("the run ended before 600,000 requests completed")
	}
}

// BenchmarkAutoscalerDay is the autoscaler-day preset: a real-time day of rate stages on 8
// workers under an HPA-style autoscaler (docs/model.md#model-3).
func BenchmarkAutoscalerDay(b *testing.B) {
	p, ok := PresetByKey("autoscaler-day")
	if !ok {
		b.Fatal("no autoscaler-day preset")
	}
	benchRun(b, string(p.JSON))
}

// BenchmarkAutoscalerHour is the autoscaler-hour preset: the same day of load in one hour of
// real time (24 stages of 150 s, 20,000 sessions, about 60,000 requests), the scenario of the
// start-up-time sweep.
func BenchmarkAutoscalerHour(b *testing.B) {
	p, ok := PresetByKey("autoscaler-hour")
	if !ok {
		b.Fatal("no autoscaler-hour preset")
	}
	benchRun(b, string(p.JSON))
}

// BenchmarkAutoscaler1M is 1,000,000 session requests on 2,048 workers with an autoscaler
// between 1,024 and 2,048 workers (the goal: as fast as BenchmarkSessions1M). It runs only with
// SCALEIN_BENCH_1M=1.
func BenchmarkAutoscaler1M(b *testing.B) {
	if os.Getenv("SCALEIN_BENCH_1M") == "" {
		b.Skip("set SCALEIN_BENCH_1M=1 to run the 1,000,000-request autoscaler benchmark")
	}
	benchRun(b, `{"name": "bench autoscaler 1M", "fleet": {"workers": 2048},
		"autoscaler": {"interval_ms": 15000, "target": 4, "min_workers": 1024, "max_workers": 2048,
			"scale_down_window_ms": 60000, "startup_ms": 30000},
		"workload": {"type": "sessions", "sessions": {"count": 250000, "turns": 4, "rate_per_s": 1600}}}`)
}
