package sim

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
)

// rankValues gives what sorting gives, on random, constant, sorted and reversed inputs and on
// many ties (the three-way partition), without changing its argument.
func TestRankValuesAsSorting(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for trial := range 400 {
		n := 1 + rng.IntN(3000)
		vals := make([]int64, n)
		for i := range vals {
			switch trial % 5 {
			case 0:
				vals[i] = rng.Int64N(1 << 40)
			case 1:
				vals[i] = 5
			case 2:
				vals[i] = int64(i)
			case 3:
				vals[i] = int64(n - i)
			default:
				vals[i] = rng.Int64N(4)
			}
		}
		orig := slices.Clone(vals)
		sorted := slices.Clone(vals)
		slices.Sort(sorted)
		ks := []int{nearestRank(50, n), nearestRank(90, n), nearestRank(99, n), n - 1}
		got := rankValues(vals, ks...)
		for i, k := range ks {
			require.Equal(t, sorted[k], got[i], "trial %d n %d rank %d", trial, n, k)
		}
		require.Equal(t, orig, vals, "the argument is left as it was")
	}
}
