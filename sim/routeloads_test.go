package sim

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
)

// The tree enumerates its candidates in (key, id) order, ties to the lowest id, through random
// updates, and grows for worker ids beyond its first size without losing a key.
func TestLoadTreeEnumeratesInKeyOrder(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	tree := newLoadTree(5)
	keys := map[int32]float64{}
	for step := range 2000 {
		n := 5
		if step > 1000 {
			n = 37 // workers started later
		}
		w := int32(rng.IntN(n))
		k := float64(rng.IntN(6))
		if rng.IntN(5) == 0 {
			k = math.Inf(1)
		}
		tree.set(w, w, k)
		if math.IsInf(k, 1) {
			delete(keys, w)
		} else {
			keys[w] = k
		}
		var want []int32
		for id := range keys {
			want = append(want, id)
		}
		slices.SortFunc(want, func(a, b int32) int {
			if keys[a] != keys[b] {
				return int(keys[a] - keys[b])
			}
			return int(a - b)
		})
		var got []int32
		tree.begin()
		for {
			id, key, ok := tree.peek()
			if !ok {
				break
			}
			require.Equal(t, keys[id], key)
			got = append(got, id)
			tree.next()
		}
		require.Equal(t, want, got, "step %d", step)
		if len(want) > 0 {
			id, _, ok := tree.min()
			require.True(t, ok)
			require.Equal(t, want[0], id)
		}
	}
	require.GreaterOrEqual(t, tree.n, 37)
}
