package web

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/scalein-planner/scalein/runs"
	"github.com/scalein-planner/scalein/sim"
	"github.com/scalein-planner/scalein/templates"
)

// The autoscaler pair's verdicts: GPU-hours saved (absolute and as a share of the fixed fleet's),
// the p99 cost with its sign, and the killed and migrated requests on both sides.
func TestAutoscalerPairVerdicts(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	scaled, fixed := &sim.Report{}, &sim.Report{}
	scaled.Summary.GPUHours, fixed.Summary.GPUHours = 3, 4
	scaled.Summary.TTFTMS.P99, fixed.Summary.TTFTMS.P99 = f(120), f(100)
	scaled.Summary.E2EMS.P99, fixed.Summary.E2EMS.P99 = f(900), f(1000)
	scaled.Summary.Requests.Killed, scaled.Summary.Requests.Migrated = 4, 7
	got := autoscalerPairVerdicts(scaled, fixed, "fixed fleet of 5 workers, the autoscaler's maximum")
	require.Len(t, got, 3)
	assert.Equal(t, "The autoscaler saved 1.00 GPU-h against a fixed fleet of 5 workers, the autoscaler's maximum (25 % of its 4.00 GPU-h): it used 3.00 GPU-h.", got[0])
	assert.Equal(t, "TTFT p99 is 20 ms higher with the autoscaler (120 ms against 100 ms, +20 %); end-to-end p99 is 100 ms lower with the autoscaler (900 ms against 1 s, -10 %).", got[1])
	assert.Equal(t, "Forced removals killed 4 requests and migration moved 7 requests with the autoscaler; the fixed fleet killed 0 requests and moved 0 requests.", got[2])

	// An autoscaler that used more than the fixed fleet says so; a missing p99 is named.
	scaled.Summary.GPUHours = 5
	scaled.Summary.TTFTMS.P99 = nil
	got = autoscalerPairVerdicts(scaled, fixed, "fixed fleet of 5 workers, the autoscaler's maximum")
	assert.Equal(t, "The autoscaler saved no GPU-hours: it used 5.00 GPU-h, 1.00 GPU-h more than a fixed fleet of 5 workers, the autoscaler's maximum (4.00 GPU-h, 25 %).", got[0])
	assert.Contains(t, got[1], "TTFT p99 is not known on both sides")
}

// Two autoscaler runs (a plan's "Compare with your settings") are weighed in GPU-hours.
func TestSettingsPairVerdicts(t *testing.T) {
	a, b := &sim.Report{}, &sim.Report{}
	a.Summary.GPUHours, b.Summary.GPUHours = 4, 3
	p99a, p99b := 100.0, 1500.0
	a.Summary.TTFTMS.P99, b.Summary.TTFTMS.P99 = &p99a, &p99b
	got := settingsPairVerdicts(a, b, "the recommended settings")
	assert.Equal(t, "With the recommended settings the fleet uses 3.00 GPU-h, 1.00 GPU-h less than A's 4.00 GPU-h (25 % saved).", got[0])
	assert.Equal(t, "TTFT p99 100 ms in A, 1.5 s in B; end-to-end p99 is not known on both sides.", got[1])
}

// The autoscaler pair's compare page adds what the autoscaler did to the pair's verdicts, even
// when it changed nothing, and how long its drains waited on peers; the run page's other
// sentences (the rules, the fixed-fleet share) are not repeated there.
func TestComparePairAddsWhatTheAutoscalerDid(t *testing.T) {
	mk := func() *runs.StoredSummary {
		s := &runs.StoredSummary{}
		s.Summary.Workers.Initial, s.Summary.Workers.Final, s.Summary.Workers.Peak = 4, 4, 4
		s.Summary.GPUHours = 2
		return s
	}
	a, b := mk(), mk()
	a.Report.Autoscaler = &sim.AutoscalerReport{Decisions: []sim.Decision{{TMS: 15000, Current: 4, Desired: 4, Reason: sim.ReasonStabilized}}}
	p := &templates.ComparePage{}
	fillComparison(p, sim.Comparison{Kind: sim.CounterpartAutoscaler}, a, b)
	require.NotEmpty(t, p.Verdicts)
	assert.Contains(t, p.Verdicts, "The autoscaler made 1 decision and changed nothing: the fleet stayed at 4 workers.")
	for _, v := range p.Verdicts {
		assert.NotContains(t, v, "stabilisation window", "the rules' sentences stay on the run page")
	}

	wait := 2500.0
	a.Report.Workers = []sim.WorkerRow{{PinWaitMS: &wait}}
	p = &templates.ComparePage{}
	fillComparison(p, sim.Comparison{Kind: sim.CounterpartAutoscaler}, a, b)
	assert.Contains(t, p.Verdicts, "1 drain waited 2.5 s in all on peers pulling from them.")
}
