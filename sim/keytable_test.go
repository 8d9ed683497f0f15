package sim

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// The table agrees with a Go map under random churn, including keys that collide in their
// home slot.
func TestKeyTableMatchesMap(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var kt keyTable
	ref := map[uint64]int32{}
	for i := 0; i < 200000; i++ {
		k := uint64(rng.IntN(5000)) // dense, many collisions after hashing
		if rng.IntN(3) == 0 {
			kt.del(k)
			delete(ref, k)
		} else {
			v := int32(rng.IntN(1 << 20))
			kt.put(k, v)
			ref[k] = v
		}
		if i%1000 == 0 {
			require.Equal(t, len(ref), kt.len())
			for k, v := range ref {
				got, ok := kt.get(k)
				require.True(t, ok)
				require.Equal(t, v, got)
			}
		}
	}
	n := 0
	kt.each(func(k uint64, v int32) {
		require.Equal(t, ref[k], v)
		n++
	})
	require.Equal(t, len(ref), n)
}
