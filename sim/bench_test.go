package sim

import (
	"context"
	"os"
	"testing"
)

func benchRun(b *testing.B, js string) {
	b.Helper()
	s, err := Parse([]byte(js), ParseEnv{})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
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
