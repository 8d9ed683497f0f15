package web

import (
	"strings"
	"testing"

	"github.com/scalein-planner/scalein/sim"
)

// TestComparePoolsReadable: the pool table prints figures as a person reads them (about three
// significant digits, whole numbers in full), not every digit of a float, and signs its changes.
func TestComparePoolsReadable(t *testing.T) {
	ra, rb := &sim.Report{}, &sim.Report{}
	ra.Summary.Disaggregation = &sim.DisaggregationSummary{WorkerSeconds: sim.PoolWorkerSeconds{Prefill: 9068.206861, Decode: 0.123456}, Handoffs: 10}
	rb.Summary.Disaggregation = &sim.DisaggregationSummary{WorkerSeconds: sim.PoolWorkerSeconds{Prefill: 7000.4, Decode: 0.123456}, Handoffs: 12}
	tab := comparePools(ra, rb, "A", "B")
	row := func(label string) []string {
		for _, r := range tab.Rows {
			if r[0] == label {
				return r
			}
		}
		t.Fatalf("no row %q in %v", label, tab.Rows)
		return nil
	}
	pre := row("Prefill worker-seconds (s)")
	if strings.Contains(pre[1], "206") || !strings.HasPrefix(strings.ReplaceAll(pre[1], "\u202f", ""), "9") {
		t.Errorf("prefill A = %q, want about 9,068 without its decimals", pre[1])
	}
	if !strings.HasPrefix(pre[3], "-") || strings.Contains(pre[3], ".") {
		t.Errorf("prefill change = %q, want a negative whole number (about −2,068)", pre[3])
	}
	dec := row("Decode worker-seconds (s)")
	if dec[1] != "0.123" || dec[3] != "0" {
		t.Errorf("decode row = %v, want A 0.123 and change 0", dec)
	}
	if h := row("Handoffs made"); h[3] != "+2" {
		t.Errorf("handoffs change = %q, want +2", h[3])
	}
}
