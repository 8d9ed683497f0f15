// Package runtest holds what the tests of runs and web share: a tiny scenario and a fake
// simulator that holds runs running until a test releases them. Only tests import it.
package runtest

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/scalein-planner/scalein/sim"
	"github.com/scalein-planner/scalein/store"
)

// Scenario is a tiny scripted scenario (SPEC E1 on two workers) that the real engine runs in
// well under a millisecond; name makes each call a distinct scenario.
func Scenario(name string) string {
	return fmt.Sprintf(`{"name": %q,
	  "fleet": {"workers": 2, "gpu_blocks": 64, "host_blocks": 0, "block_size": 16, "max_num_seqs": 4,
	    "max_batched_tokens": 64, "timing": {"prefill_ms": 2, "decode_ms": 1, "prefill_ms_per_1k_tokens": 0, "decode_ms_per_seq": 0, "decode_ms_per_1k_kv_tokens": 0}},
	  "kvcr": {"enabled": false},
	  "scale_in": [{"at_ms": 1, "workers": [1]}],
	  "workload": {"type": "requests", "requests": [{"id": "a", "at_ms": 0, "blocks": ["A*4"], "output_tokens": 3, "route_to": 1}]}}`, name)
}

// PerRequestScenario is Scenario with n scripted requests and per-request rows in the report.
func PerRequestScenario(name string, n int) string {
	reqs := make([]string, n)
	for i := range reqs {
		reqs[i] = fmt.Sprintf(`{"id": "r%d", "at_ms": %d, "blocks": ["P%d*2"], "output_tokens": 2, "route_to": %d}`, i, i/4, i%50, i%2)
	}
	return fmt.Sprintf(`{"name": %q,
	  "fleet": {"workers": 2, "gpu_blocks": 256, "host_blocks": 0, "block_size": 16, "max_num_seqs": 8,
	    "max_batched_tokens": 256, "timing": {"prefill_ms": 2, "decode_ms": 1, "prefill_ms_per_1k_tokens": 0, "decode_ms_per_seq": 0, "decode_ms_per_1k_kv_tokens": 0}},
	  "kvcr": {"enabled": false},
	  "scale_in": [{"at_ms": 100, "workers": [1]}],
	  "report": {"per_request": true},
	  "workload": {"type": "requests", "requests": [%s]}}`, name, strings.Join(reqs, ","))
}

// ManyRowsScenario is a small scenario whose report has 2 × sessions per-request rows.
func ManyRowsScenario(sessions int) string {
	return fmt.Sprintf(`{"name": "many rows",
	  "fleet": {"workers": 4, "gpu_blocks": 4096, "host_blocks": 0, "block_size": 16, "max_num_seqs": 64,
	    "max_batched_tokens": 4096, "timing": {"prefill_ms": 1, "decode_ms": 1, "prefill_ms_per_1k_tokens": 0, "decode_ms_per_seq": 0, "decode_ms_per_1k_kv_tokens": 0}},
	  "kvcr": {"enabled": false},
	  "scale_in": [{"at_ms": 1000, "workers": [3]}],
	  "report": {"per_request": true},
	  "workload": {"type": "sessions", "sessions": {"count": %d, "turns": 2, "rate_per_s": 2000,
	    "system_prompt_tokens": 32, "new_input_tokens": 32, "output_tokens": 4, "think_time_ms": 10}}}`, sessions)
}

// BlockingRun is a fake simulator that signals when a run starts and then waits for Release
// or for its context, so tests control when runs end.
type BlockingRun struct {
	Started chan string
	Release chan struct{}
}

// NewBlockingRun returns a fake simulator; pass its Run as runs.Config.Simulate.
func NewBlockingRun() *BlockingRun {
	return &BlockingRun{Started: make(chan string, 16), Release: make(chan struct{})}
}

// Run is the fake simulator: a send on Release ends one run with an empty report.
func (b *BlockingRun) Run(ctx context.Context, sc *sim.Scenario, _ sim.RunOptions) (*sim.Report, error) {
	b.Started <- sc.Name
	select {
	case <-b.Release:
		return &sim.Report{Schema: sim.ReportSchema, Name: sc.Name, ScenarioID: sc.ID()}, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// WaitStarted returns the name of the next run that starts, failing the test after 10 s.
func (b *BlockingRun) WaitStarted(t testing.TB) string {
	t.Helper()
	select {
	case name := <-b.Started:
		return name
	case <-time.After(10 * time.Second):
		t.Fatal("no run started")
		return ""
	}
}

// OpenStore opens a store at path, closed when the test ends.
func OpenStore(t testing.TB, path string) *store.Store {
	t.Helper()
	st, err := store.Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	return st
}

// WaitStatus polls the store until the run reaches want (or fails the test after 10 s).
func WaitStatus(t testing.TB, st *store.Store, id, want string) store.Run {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		run, err := st.GetRun(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		if run.Status == want {
			return run
		}
		if time.Now().After(deadline) {
			t.Fatalf("run %s is %s (error %q), want %s", id, run.Status, run.Error, want)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
