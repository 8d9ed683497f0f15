package sim

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Bases of the rate-and-size sweep: small workloads (so runs end and their reports are built)
// that reach every kind of time arithmetic from user values: session arrivals with and without
// rate stages, think times, passes, KV transfers between workers and tiers, drains with grace
// and the autoscaler's clocks.
const (
	sweepStaged = `{"name": "staged", "seed": 7,
  "fleet": {"workers": 4, "gpu_blocks": 512, "host_blocks": 256, "block_size": 64, "max_num_seqs": 16, "max_batched_tokens": 8192,
    "timing": {"prefill_ms": 2, "prefill_ms_per_1k_tokens": 65, "decode_ms": 8, "decode_ms_per_seq": 0.05, "decode_ms_per_1k_kv_tokens": 0.03}},
  "kvcr": {"enabled": false},
  "autoscaler": {"interval_ms": 15000, "metric": "requests_per_worker", "target": 12, "tolerance": 0.1,
    "max_workers": 4, "scale_down_window_ms": 300000, "grace_ms": 30000, "startup_ms": 120000, "metric_delay_ms": 1000},
  "workload": {"type": "sessions", "sessions": {"count": 12,
    "rate_stages": [{"duration_ms": 1000, "rate_per_s": 20}, {"duration_ms": 2000, "rate_per_s": 10}],
    "turns": 2, "system_prompt_tokens": 512, "prefix_groups": 2, "new_input_tokens": 256, "output_tokens": 20, "think_time_ms": 1000}}}`
	sweepMigrating = `{"name": "migrating", "seed": 3,
  "fleet": {"workers": 3, "gpu_blocks": 256, "host_blocks": 256, "block_size": 16, "bytes_per_token": 131072,
    "max_num_seqs": 8, "max_batched_tokens": 4096, "h2d_gbps": 32, "d2h_gbps": 32,
    "timing": {"prefill_ms": 2, "prefill_ms_per_1k_tokens": 65, "decode_ms": 8, "decode_ms_per_seq": 0.05}},
  "kvcr": {"enabled": true, "latency_ms": 1, "bandwidth_gbps": 50},
  "router": {"policy": "kv_aware", "hints": true},
  "scale_in": [{"at_ms": 50, "count": 1, "grace_ms": 20}],
  "workload": {"type": "sessions", "sessions": {"count": 10, "rate_per_s": 100, "turns": 2,
    "system_prompt_tokens": 256, "prefix_groups": 2, "new_input_tokens": 64, "output_tokens": 8, "think_time_ms": 5}}}`
	sweepScripted = `{"name": "scripted", "seed": 1,
  "fleet": {"workers": 2, "gpu_blocks": 64, "host_blocks": 64, "block_size": 16},
  "kvcr": {"enabled": true, "latency_ms": 1, "bandwidth_gbps": 50},
  "scale_in": [{"at_ms": 10, "workers": [1], "grace_ms": 5}],
  "workload": {"type": "requests", "requests": [
    {"id": "a", "at_ms": 0, "blocks": ["P*4"], "tail_tokens": 3, "output_tokens": 3},
    {"id": "b", "at_ms": 1.5, "blocks": ["P*4", "Q"], "tail_tokens": 7, "output_tokens": 2}]}}`
)

// sweepFields are the rate, time and size fields of each base, as dotted paths (list indices
// as numbers).
var sweepFields = map[string][]string{
	sweepStaged: {
		"workload.sessions.rate_stages.0.rate_per_s", "workload.sessions.rate_stages.1.rate_per_s",
		"workload.sessions.rate_stages.0.duration_ms", "workload.sessions.rate_stages.1.duration_ms",
		"workload.sessions.think_time_ms", "workload.sessions.system_prompt_tokens",
		"workload.sessions.new_input_tokens", "workload.sessions.output_tokens", "workload.sessions.count",
		"fleet.timing.prefill_ms", "fleet.timing.prefill_ms_per_1k_tokens", "fleet.timing.decode_ms",
		"fleet.timing.decode_ms_per_seq", "fleet.timing.decode_ms_per_1k_kv_tokens",
		"fleet.max_batched_tokens", "fleet.block_size",
		"autoscaler.interval_ms", "autoscaler.startup_ms", "autoscaler.scale_down_window_ms",
		"autoscaler.grace_ms", "autoscaler.metric_delay_ms", "autoscaler.target",
	},
	sweepMigrating: {
		"workload.sessions.rate_per_s", "workload.sessions.think_time_ms",
		"kvcr.latency_ms", "kvcr.bandwidth_gbps", "fleet.h2d_gbps", "fleet.d2h_gbps", "fleet.bytes_per_token",
		"scale_in.0.at_ms", "scale_in.0.grace_ms", "fleet.timing.prefill_ms", "fleet.timing.decode_ms",
	},
	sweepScripted: {
		"workload.requests.1.at_ms", "workload.requests.1.tail_tokens", "workload.requests.1.output_tokens",
		"scale_in.0.at_ms", "scale_in.0.grace_ms", "kvcr.bandwidth_gbps", "kvcr.latency_ms",
	},
}

// withField is base with the field at path set to v.
func withField(t testing.TB, base, path string, v float64) []byte {
	t.Helper()
	var doc any
	if err := json.Unmarshal([]byte(base), &doc); err != nil {
		t.Fatal(err)
	}
	parts := strings.Split(path, ".")
	node := doc
	for i, p := range parts {
		last := i == len(parts)-1
		switch n := node.(type) {
		case map[string]any:
			if last {
				n[p] = json.Number(strconv.FormatFloat(v, 'g', -1, 64))
			} else {
				node = n[p]
			}
		case []any:
			k, _ := strconv.Atoi(p)
			if last {
				n[k] = json.Number(strconv.FormatFloat(v, 'g', -1, 64))
			} else {
				node = n[k]
			}
		default:
			t.Fatalf("%s: no field %q", path, p)
		}
	}
	out, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// largestValid is the largest value of the field that validates: the largest of m × 10^k
// (m 1…9) and MaxFloat64 that does, then bisected (on whole numbers) towards the first that
// does not. ok is false when no value ≥ 1 validates.
func largestValid(t testing.TB, base, path string) (v float64, ok bool) {
	valid := func(x float64) bool { _, err := Parse(withField(t, base, path, x), ParseEnv{}); return err == nil }
	if valid(math.MaxFloat64) {
		return math.MaxFloat64, true
	}
	lo, hi := 0.0, math.MaxFloat64
	for k := 0; k <= 308; k++ {
		for m := 1.0; m <= 9; m++ {
			x := m * math.Pow10(k)
			if valid(x) {
				lo, ok = x, true
			} else if ok {
				hi = x
				goto bisect
			}
		}
	}
bisect:
	if !ok {
		return 0, false
	}
	for range 80 {
		mid := math.Floor(lo + (hi-lo)/2)
		if mid <= lo || mid >= hi {
			break
		}
		if valid(mid) {
			lo = mid
		} else {
			hi = mid
		}
	}
	return lo, true
}

// runGuarded runs s under the event limit maxEvents and turns a panic into an error.
func runGuarded(s *Scenario, maxEvents int64) (rep *Report, err error) {
	defer func() {
		if v := recover(); v != nil {
			err = fmt.Errorf("panic: %v", v)
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	return Run(ctx, s, RunOptions{MaxEvents: maxEvents, Traces: memTraces{sha256Hex([]byte(smallTrace)): []byte(smallTrace)}})
}

// estimateGuarded is EstimateMemory's bytes, a panic turned into an error.
func estimateGuarded(s *Scenario) (bytes int64, err error) {
	defer func() {
		if v := recover(); v != nil {
			err = fmt.Errorf("panic: %v", v)
		}
	}()
	return EstimateMemory(s).Bytes, nil
}

// sweepRunBudget is the memory estimate above which a validated scenario is not run here: the
// server refuses it at admission (-max-run-memory), so it is never simulated.
const sweepRunBudget = 512 << 20

// Finding M1 (probe 2026-12b): a scenario that validates never panics the simulator. Every rate,
// time and size field of the bases is swept from the smallest double up to the largest value
// validation accepts; each scenario that validates runs (a short run) without a panic, and a
// run that ends has no arrival or instant outside its own timeline.
func TestRateAndSizeFieldsSaturate(t *testing.T) {
	ran, limited := 0, 0
	defer func() { t.Logf("%d runs, %d of them stopped at the event limit", ran, limited) }()
	tiny := []float64{math.SmallestNonzeroFloat64, 1e-300, 1e-100, 1e-20, 1e-12, 1e-10, 1e-9, 1e-6, 1e-3, 0.5}
	for base, fields := range sweepFields {
		for _, path := range fields {
			values := append([]float64(nil), tiny...)
			if top, ok := largestValid(t, base, path); ok {
				values = append(values, top, top/2, top/1e3, math.Sqrt(top))
			}
			for _, v := range values {
				s, err := Parse(withField(t, base, path, v), ParseEnv{})
				if err != nil {
					continue
				}
				est, err := estimateGuarded(s)
				if err != nil {
					t.Errorf("%s = %g: memory estimate: %v", path, v, err)
					continue
				}
				if est > sweepRunBudget {
					continue
				}
				rep, err := runGuarded(s, 20_000)
				ran++
				if errors.Is(err, ErrLimit) {
					limited++
				}
				if os.Getenv("SCALEIN_SWEEP_LOG") != "" {
					t.Logf("%s = %g: err %v", path, v, err)
				}
				if err != nil && !errors.Is(err, ErrLimit) {
					t.Errorf("%s = %g: %v", path, v, err)
					continue
				}
				if rep != nil && rep.Sim != nil && rep.Sim.Events < 0 {
					t.Errorf("%s = %g: %d events", path, v, rep.Sim.Events)
				}
			}
		}
	}
}

// The probe's reproduction: a rate stage of 1e-10 sessions a second ends with no session
// started (the first arrival is far past the stage's end), not with a panic.
func TestTinyStageRateStartsNothing(t *testing.T) {
	for _, rate := range []float64{1e-9, 1e-10, 1e-12, 1e-15, 1e-20, 1e-300, math.SmallestNonzeroFloat64} {
		base := withField(t, sweepStaged, "workload.sessions.rate_stages.0.rate_per_s", rate)
		s, err := Parse(withField(t, string(base), "workload.sessions.rate_stages.1.rate_per_s", rate), ParseEnv{})
		if err != nil {
			t.Fatalf("rate %g: %v", rate, err)
		}
		rep, err := runGuarded(s, 20_000)
		if err != nil {
			t.Fatalf("rate %g: %v", rate, err)
		}
		if rep.Summary.Requests.Total != 0 {
			t.Errorf("rate %g: %d requests, want none (the first arrival is far past both stages)", rate, rep.Summary.Requests.Total)
		}
	}
}
