package main

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/scalein-planner/scalein/sim/whatif"
)

// "scalein plan -diagnose" finds μ with a capacity search, then runs the 8 lag subsets, the
// ideal and the static fleet, and attributes the gap by Shapley values that sum to it.
func TestPlanDiagnoseCommand(t *testing.T) {
	data, err := os.ReadFile(lull)
	require.NoError(t, err)
	scenario := strings.TrimSuffix(strings.TrimSpace(string(data)), "}") + `, "slo": {"ttft_ms": 300, "tpot_ms": 30}}`
	code, stdout, stderr := runCLI(t, scenario, "plan", "-config", "-", "-diagnose", "-parallel", "2")
	require.Equal(t, 0, code, stderr)
	var res whatif.Result
	require.NoError(t, json.Unmarshal([]byte(stdout), &res))
	d := res.Diagnose
	require.NotNil(t, d, res.Reason)
	require.NotNil(t, res.Capacity)
	require.NotNil(t, res.Capacity.RatePerWorker, res.Capacity.Answer)
	assert.Equal(t, *res.Capacity.RatePerWorker, d.RatePerWorker, "μ is the capacity search's answer")
	assert.LessOrEqual(t, res.Runs, whatif.DefaultDiagnoseMaxRuns)
	assert.Len(t, d.Fleets, 4)
	require.Len(t, d.Lags, 3)
	sum := 0.0
	for _, l := range d.Lags {
		sum += l.AttainmentPoints
	}
	assert.InDelta(t, *d.AttainmentGapPoints, sum, 1e-9)
	assert.Contains(t, res.Reason, "With the ideal fleet: ")
	assert.Contains(t, res.Reason, "Shapley values over the 8 runs")
	t.Log(res.Reason)
}

func TestPlanDiagnoseCommandErrors(t *testing.T) {
	data, err := os.ReadFile(lull)
	require.NoError(t, err)
	noSLO := string(data)
	cases := map[string]struct {
		args  []string
		stdin string
		want  string
	}{
		"no slo":        {[]string{"plan", "-config", "-", "-diagnose"}, noSLO, "goal.diagnose: needs a scenario with an slo"},
		"with remove":   {[]string{"plan", "-config", "-", "-diagnose", "-remove", "2"}, noSLO, "-diagnose is a plan of its own"},
		"with a limit":  {[]string{"plan", "-config", "-", "-diagnose", "-ttft-p99-ms", "100"}, noSLO, "-ttft-p99-ms does not apply to -diagnose"},
		"rate alone":    {[]string{"plan", "-config", "-", "-rate-per-worker", "3"}, noSLO, "-rate-per-worker is μ for -diagnose"},
		"negative rate": {[]string{"plan", "-config", "-", "-diagnose", "-rate-per-worker", "-3"}, "slo", "goal.diagnose.rate_per_worker_per_s: must be one worker's capacity"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			stdin := tc.stdin
			if stdin == "slo" {
				stdin = lullWithSLO(t)
			}
			code, stdout, stderr := runCLI(t, stdin, tc.args...)
			assert.Equal(t, 2, code, stderr)
			assert.Empty(t, stdout)
			assert.Contains(t, stderr, tc.want)
			assert.False(t, strings.Contains(stderr, "panic"))
		})
	}
}
