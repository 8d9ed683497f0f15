package main

import (
	"runtime/debug"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/scalein-planner/scalein/sim"
)

// A scenario estimated at a gigabyte or more collects at 25 % heap growth; a small one keeps
// the command's default; GOGC, when set, wins.
func TestCollectTighterIfLarge(t *testing.T) {
	parse := func(js string) *sim.Scenario {
		s, err := sim.Parse([]byte(js), sim.ParseEnv{})
		require.NoError(t, err)
		return s
	}
	large := parse(`{"name": "1M", "fleet": {"workers": 2048},
		"workload": {"type": "sessions", "sessions": {"count": 250000, "turns": 4, "rate_per_s": 1600}}}`)
	small := parse(`{"name": "small", "fleet": {"workers": 4}, "workload": {"type": "sessions", "sessions": {"count": 10}}}`)
	require.GreaterOrEqual(t, sim.EstimateMemory(large).Bytes, int64(largeRunBytes))
	require.Less(t, sim.EstimateMemory(small).Bytes, int64(largeRunBytes))
	defer debug.SetGCPercent(debug.SetGCPercent(defaultGCPercent))
	t.Setenv("GOGC", "")

	collectTighterIfLarge(small)
	require.Equal(t, defaultGCPercent, debug.SetGCPercent(defaultGCPercent))
	collectTighterIfLarge(large)
	require.Equal(t, largeRunGCPercent, debug.SetGCPercent(defaultGCPercent))

	t.Setenv("GOGC", "80")
	collectTighterIfLarge(large)
	require.Equal(t, defaultGCPercent, debug.SetGCPercent(defaultGCPercent))
}
