package sim

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// runBoth runs s twice, as the engine runs (stretches, the routing structure) and as it ran
// before them (one event per pass, routing by scanning every active worker), and returns both
// reports and event counts.
func runBoth(t *testing.T, s *Scenario) (fast, slow *Report, fastEvents, slowEvents int64) {
	t.Helper()
	run := func(perPass bool) (*Report, int64) {
		e, err := newEngine(s, RunOptions{MaxEvents: DefaultMaxEvents, MaxVirtualMS: DefaultMaxVirtualMS})
		require.NoError(t, err)
		e.perPass, e.scanRoutes = perPass, perPass
		require.NoError(t, e.loop(context.Background()))
		return e.report(), e.events
	}
	fast, fastEvents = run(false)
	slow, slowEvents = run(true)
	return fast, slow, fastEvents, slowEvents
}

// requireSameReport fails unless the two reports are the same document (the digest covers
// everything but the sim section; the JSON comparison names the first difference).
func requireSameReport(t *testing.T, want, got *Report, name string) {
	t.Helper()
	if want.Digest == got.Digest {
		return
	}
	a, err := json.Marshal(want)
	require.NoError(t, err)
	b, err := json.Marshal(got)
	require.NoError(t, err)
	require.JSONEq(t, string(a), string(b), "%s: stretches changed the report", name)
	require.Equal(t, want.Digest, got.Digest, name)
}

// Stretches give the report of pass-by-pass simulation on cases built to cut them at every
// kind of instant: an arrival at the very end of a computed pass and one in the middle of a
// pass, with durations that change from pass to pass (the K term); a forced removal in the
// middle of a stretch; next turns that arrive at the instant of a completion (think time 0), so
// after that instant's pass starts.
func TestStretchesMatchPassByPass(t *testing.T) {
	cases := map[string]string{
		"arrivals at a pass end and mid-pass": `{` + fmt.Sprintf(e1Fleet, 1, 64, 0.0) + `,
			"workload": {"type": "requests", "requests": [
				{"id": "r0", "at_ms": 0, "blocks": ["A*4"], "output_tokens": 40},
				{"id": "r1", "at_ms": 10, "blocks": ["B*2"], "output_tokens": 30},
				{"id": "r2", "at_ms": 20.5, "blocks": ["A*4", "C"], "output_tokens": 25}]}}`,
		"K term: durations grow pass by pass": `{` + fmt.Sprintf(e1Fleet, 1, 64, 7.0) + `,
			"workload": {"type": "requests", "requests": [
				{"id": "r0", "at_ms": 0, "blocks": ["A*4"], "output_tokens": 40},
				{"id": "r1", "at_ms": 10.448, "blocks": ["B*2"], "output_tokens": 30},
				{"id": "r2", "at_ms": 21, "blocks": ["A*4", "C"], "output_tokens": 25}]}}`,
		"forced removal mid-stretch": `{` + fmt.Sprintf(e1Fleet, 2, 64, 0.0) + `,
			"scale_in": [{"at_ms": 5, "workers": [1], "grace_ms": 12.3}],
			"workload": {"type": "requests", "requests": [
				{"id": "r0", "at_ms": 0, "blocks": ["A*4"], "output_tokens": 40, "route_to": 1},
				{"id": "r1", "at_ms": 1, "blocks": ["B"], "output_tokens": 30, "route_to": 1}]}}`,
		"next turns at a completion instant": `{"name": "think 0", "seed": 7,
			"fleet": {"workers": 3, "gpu_blocks": 256, "host_blocks": 512, "block_size": 16,
				"timing": {"decode_ms_per_1k_kv_tokens": 0.5}},
			"workload": {"type": "sessions", "sessions": {"count": 40, "turns": 3, "rate_per_s": 50,
				"system_prompt_tokens": 64, "new_input_tokens": 40, "output_tokens": 50, "think_time_ms": 0}},
			"report": {"per_request": true}}`,
		// Model 3: worker 1 is force-removed at 15 ms (step 5) and its request migrates to worker
		// 0, whose stretch has a pass boundary at 15 ms: the pass that began there in step 4 is
		// in flight, so the migrated request waits for its end.
		"migration onto a pass boundary": `{` + fmt.Sprintf(e1Fleet, 2, 64, 0.0) + `,
			"router": {"migration_limit": 1},
			"scale_in": [{"at_ms": 5, "workers": [1], "grace_ms": 10}],
			"workload": {"type": "requests", "requests": [
				{"id": "r0", "at_ms": 0, "blocks": ["A"], "output_tokens": 100, "route_to": 1},
				{"id": "r1", "at_ms": 0, "blocks": ["B"], "output_tokens": 60, "route_to": 0}]}}`,
		"decode passes of zero length": `{"name": "zero decode", "seed": 3,
			"fleet": {"workers": 2, "gpu_blocks": 40, "host_blocks": 0, "block_size": 16, "max_num_seqs": 3,
				"timing": {"decode_ms": 0, "decode_ms_per_seq": 0, "decode_ms_per_1k_kv_tokens": 0}},
			"kvcr": {"enabled": false},
			"workload": {"type": "sessions", "sessions": {"count": 60, "turns": 4, "rate_per_s": 400,
				"system_prompt_tokens": 64, "new_input_tokens": 40, "output_tokens": 50, "think_time_ms": 0}},
			"report": {"per_request": true}}`,
	}
	for name, js := range cases {
		t.Run(name, func(t *testing.T) {
			fast, slow, fe, se := runBoth(t, mustParse(t, js))
			requireSameReport(t, slow, fast, name)
			if name != "decode passes of zero length" {
				require.Less(t, fe, se, "no pass was computed instead of simulated")
			}
		})
	}
}

// The same on the seeded random scenarios of the invariant test (small fleets under pressure,
// scale-in with and without grace, pulls) and on the pinned scenarios.
func TestStretchesMatchPassByPassOnRandomScenarios(t *testing.T) {
	var fastSum, slowSum int64
	for seed := uint64(1); seed <= uint64(invariantSeeds()); seed++ {
		js, err := json.Marshal(randomScenario(seed))
		require.NoError(t, err)
		s, err := Parse(js, ParseEnv{})
		require.NoError(t, err)
		fast, slow, fe, se := runBoth(t, s)
		requireSameReport(t, slow, fast, fmt.Sprintf("seed %d", seed))
		require.LessOrEqual(t, fe, se, "seed %d", seed)
		fastSum, slowSum = fastSum+fe, slowSum+se
	}
	require.Less(t, fastSum, slowSum, "no pass was computed instead of simulated")
	for name, s := range pinnedScenarios(t, nil) {
		fast, slow, _, _ := runBoth(t, s)
		requireSameReport(t, slow, fast, name)
	}
}

// The same on every preset (the autoscaler's among them) and every conformance example.
func TestStretchesMatchPassByPassOnPresetsAndExamples(t *testing.T) {
	if testing.Short() {
		t.Skip("runs every preset (a few seconds)")
	}
	for _, p := range Presets() {
		if (p.Long || p.Key == "autoscaler-grace") && !slowTests() {
			continue // pass by pass, a real-time day takes minutes (an evening, seconds): SCALEIN_SLOW=1 runs it
		}
		s, err := Parse(p.JSON, ParseEnv{})
		require.NoError(t, err, p.Key)
		s.Report.PerRequest = true
		fast, slow, _, _ := runBoth(t, s)
		requireSameReport(t, slow, fast, "preset "+p.Key)
	}
	files, err := filepath.Glob(examplesPath(t, "*.json"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	for _, f := range files {
		if filepath.Base(f) == "expected.json" {
			continue
		}
		data, err := os.ReadFile(f)
		require.NoError(t, err)
		s, err := Parse(data, ParseEnv{})
		require.NoError(t, err, f)
		fast, slow, _, _ := runBoth(t, s)
		requireSameReport(t, slow, fast, filepath.Base(f))
	}
}
