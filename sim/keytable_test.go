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
			if _, ok := ref[k]; !ok {
				require.True(t, kt.putNew(k, v))
				ref[k] = v
			} else {
				require.False(t, kt.putNew(k, v))
			}
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

// The LRU pops in the order of SPEC §3.14 (instant, deeper first, then push order).
func TestLRUBoundedAndOrdered(t *testing.T) {
	var l slots
	const n = 512
	for range n {
		l.add(n)
	}
	rng := rand.New(rand.NewPCG(3, 4))
	type rec struct {
		at    int64
		depth int32
		seq   int
	}
	live := map[int32]rec{}
	seq := 0
	now := int64(0)
	for i := 0; i < 200000; i++ {
		if rng.IntN(4) == 0 {
			now++
		}
		s := int32(rng.IntN(n))
		switch {
		case !l.v[s].evictable:
			d := int32(rng.IntN(8))
			l.v[s].depth = d
			l.push(s, now)
			live[s] = rec{now, d, seq}
			seq++
		case rng.IntN(2) == 0:
			l.remove(s)
			delete(live, s)
		default:
			got := l.pop()
			// The popped slot must be the minimum by (at, -depth, seq).
			for o, r := range live {
				g := live[got]
				if o != got && (r.at < g.at || (r.at == g.at && (r.depth > g.depth || (r.depth == g.depth && r.seq < g.seq)))) {
					t.Fatalf("popped %d %+v before %d %+v", got, g, o, r)
				}
			}
			delete(live, got)
		}
		require.Equal(t, len(live), l.evictableCount())
	}
}
