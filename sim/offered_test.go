package sim

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// offered_rate for sessions is the stage's rate × turns at the sampling instant, 0 after the
// last stage, exactly (the double rate as a rational: 0.1 is a little above one tenth).
func TestOfferedRateSessions(t *testing.T) {
	s := mustParse(t, `{"workload": {"type": "sessions", "sessions": {"count": 10, "turns": 3,
		"rate_stages": [{"duration_ms": 1000, "rate_per_s": 2}, {"duration_ms": 500, "rate_per_s": 0},
			{"duration_ms": 1000, "rate_per_s": 0.1}]}}}`)
	o := newOfferedRate(s, newSessionSource(s), 100)
	for _, c := range []struct {
		atMS float64
		want int64
	}{
		{0, 6000}, {999.999999, 6000}, {1000, 0}, {1499, 0}, {1500, 301}, {2499, 301}, {2500, 0}, {1e6, 0},
	} {
		assert.Equal(t, c.want, o.sample(msToNS(c.atMS)), "at %v ms", c.atMS)
	}

	s = mustParse(t, `{"workload": {"type": "sessions", "sessions": {"count": 10, "turns": 4, "rate_per_s": 2.5}}}`)
	o = newOfferedRate(s, newSessionSource(s), 100)
	assert.Equal(t, int64(10000), o.sample(0))
	assert.Equal(t, int64(10000), o.sample(msToNS(1e9)))
}

// offered_rate for scripted requests counts the arrivals in [s, s + interval), also with an
// interval that is not a whole number of ms (the exact rational path).
func TestOfferedRateScripted(t *testing.T) {
	reqs := ""
	for i, at := range []float64{0, 0.1, 0.2, 0.25, 0.3, 0.7, 5} {
		if i > 0 {
			reqs += ","
		}
		reqs += fmt.Sprintf(`{"id": "r%d", "at_ms": %g, "blocks": ["A%d"], "output_tokens": 1}`, i, at, i)
	}
	s := m3(t, 1, "", "", "", reqs)
	o := newOfferedRate(s, newScriptedSource(s), 0.3)
	// [0, 0.3): 4 arrivals; 4 × 1000 / 0.3 = 13333.3…/s, in milli-units ceil(13333333.3…).
	assert.Equal(t, int64(13333334), o.sample(0))
	// [0.3, 0.6): 1; [0.6, 0.9): 1 (0.7); [0.9, 1.2): 0; [5, 5.3): 1.
	assert.Equal(t, int64(3333334), o.sample(msToNS(0.3)))
	assert.Equal(t, int64(3333334), o.sample(msToNS(0.6)))
	assert.Equal(t, int64(0), o.sample(msToNS(0.9)))
	assert.Equal(t, int64(3333334), o.sample(msToNS(5)))
	assert.Equal(t, int64(0), o.sample(msToNS(5.3)))

	o = newOfferedRate(s, newScriptedSource(s), 1000)
	assert.Equal(t, int64(7000), o.sample(0)) // 7 arrivals in [0, 1 s): 7 per second
}

// The autoscaler reads offered_rate from a trace's timestamps (after speedup), whatever the
// workers do: the decisions' usage is the rate of the next interval.
func TestOfferedRateTrace(t *testing.T) {
	sha := sha256Hex([]byte(smallTrace))
	traces := memTraces{sha: []byte(smallTrace)}
	s, err := Parse([]byte(`{"fleet": {"workers": 1}, "workload": {"type": "trace",
		"trace": {"sha256": "`+sha+`", "trace_block_tokens": 512, "speedup": 2}},
		"autoscaler": {"interval_ms": 5, "metric": "offered_rate", "source": "external", "target": 100,
			"tolerance": 0, "max_workers": 4, "startup_ms": 0}}`), ParseEnv{Traces: traces})
	require.NoError(t, err)
	rep, err := Run(context.Background(), s, RunOptions{Traces: traces})
	require.NoError(t, err)
	// Arrivals at 0, 5, 5 ms (timestamps 0, 10, 10 at speedup 2). The first sample, at 5, sees
	// the two at 5: 2 × 1000 / 5 = 400/s, 4 workers; the next, at 10, none.
	ds := rep.Autoscaler.Decisions
	require.GreaterOrEqual(t, len(ds), 2)
	assert.Equal(t, 400.0, *ds[0].Usage)
	assert.Equal(t, 4, *ds[0].Rec)
	assert.Equal(t, 0.0, *ds[1].Usage)
}

// With target μ, tolerance 0, no windows and no start-up, offered_rate keeps
// max(min_workers, ceil(λ / μ)) workers and changes only when λ does.
func TestOfferedRateFollowsTheLoad(t *testing.T) {
	s := mustParse(t, `{"fleet": {"workers": 2}, "workload": {"type": "sessions", "sessions": {"count": 100000, "turns": 2,
		"rate_stages": [{"duration_ms": 20000, "rate_per_s": 3}, {"duration_ms": 20000, "rate_per_s": 10},
			{"duration_ms": 20000, "rate_per_s": 0.5}]}},
		"autoscaler": {"interval_ms": 1000, "metric": "offered_rate", "source": "external", "target": 4,
			"tolerance": 0, "min_workers": 2, "max_workers": 8, "startup_ms": 0,
			"behavior": {"scale_down": {"window_ms": 0}, "scale_up": {"policies": [{"type": "pods", "value": 100, "period_ms": 1000}]}}}}`)
	rep := mustRun(t, s)
	changes := 0
	for _, d := range rep.Autoscaler.Decisions {
		var want int
		switch {
		case d.TMS < 20000:
			want = 2 // ceil(6 / 4)
		case d.TMS < 40000:
			want = 5 // ceil(20 / 4)
		default:
			want = 2 // ceil(1 / 4) = 1, below min_workers
		}
		if d.TMS < 60000 {
			assert.Equal(t, want, d.Desired, "at %v ms", d.TMS)
		}
		if d.Desired != d.Current {
			changes++
		}
	}
	assert.Equal(t, 2, changes, "one change per change of the rate")
}
