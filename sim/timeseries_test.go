package sim

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// The recorder's pending merge of instants gives the same series as recording every instant
// in every family, across bucket boundaries and coarsening.
func TestSeriesRecorderMergesInstantsExactly(t *testing.T) {
	for seed := uint64(1); seed <= 20; seed++ {
		rng := rand.New(rand.NewPCG(seed, 9))
		merged, each := newSeriesRecorder(4), newSeriesRecorder(4)
		now := int64(0)
		var ttftAt, ttft []int64
		for i := 0; i < 5000; i++ {
			switch rng.IntN(4) {
			case 0:
				now += rng.Int64N(50) // often inside one bucket
			case 1:
				now += rng.Int64N(5_000)
			default:
				now += rng.Int64N(1 << uint(rng.IntN(30)))
			}
			g := gauges{active: rng.Int64N(5), draining: rng.Int64N(3), waiting: rng.Int64N(9), running: rng.Int64N(9)}
			c := instantCounters{staged: rng.Int64N(2), landed: rng.Int64N(2), rejected: rng.Int64N(2), completed: rng.Int64N(3)}
			merged.record(now, g, c)
			for f := range each.families {
				each.families[f].record(now, g, c)
			}
			if rng.IntN(3) == 0 {
				ttftAt = append(ttftAt, now)
				ttft = append(ttft, rng.Int64N(1e9))
			}
		}
		duration := now + rng.Int64N(1e6)
		require.Equal(t, each.build(duration, ttftAt, ttft), merged.build(duration, ttftAt, ttft), "seed %d", seed)
	}
}
