package sim

import (
	"math/rand/v2"
	"testing"
	"unsafe"

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
		case !l.v[s].evictable():
			d := int32(rng.IntN(8))
			l.v[s].meta = uint32(d)
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

// The block index agrees with a map of sets under random adds and removes in both tiers,
// across inline holders, lists, list reuse and growth.
func TestBlockIndexMatchesSets(t *testing.T) {
	idx := &blockIndex{}
	tiers := []*tierIndex{{x: idx, tier: tierG1}, {x: idx, tier: tierG2}}
	ref := [2]map[uint64]map[int32]bool{{}, {}}
	rng := rand.New(rand.NewPCG(5, 6))
	for i := 0; i < 100000; i++ {
		tier := rng.IntN(2)
		k := uint64(rng.IntN(300)) * 0x9e3779b97f4a7c15
		w := int32(rng.IntN(6))
		if rng.IntN(8) == 0 {
			w = MaxWorkers - 1 - w // the largest ids use every bit of their field
		}
		set := ref[tier][k]
		if set[w] {
			tiers[tier].remove(k, w)
			delete(set, w)
		} else {
			tiers[tier].add(k, w)
			if set == nil {
				set = map[int32]bool{}
				ref[tier][k] = set
			}
			set[w] = true
		}
		for tr := range tiers {
			got := tiers[tr].appendHolders(nil, k)
			want := ref[tr][k]
			require.Len(t, got, len(want))
			var fp uint64
			for _, h := range got {
				require.True(t, want[h], "tier %d key %x: holder %d not in the set", tr, k, h)
				fp ^= holderPrint(h)
			}
			n, print := tiers[tr].set(k)
			require.Equal(t, len(want), n)
			require.Equal(t, fp, print)
		}
	}
	live := map[uint64]bool{}
	for tr := range ref {
		for k, set := range ref[tr] {
			if len(set) > 0 {
				live[k] = true
			}
		}
	}
	require.Equal(t, len(live), idx.n)
}

// The per-block records stay as small as their comments promise: memory at 2,048 workers is
// tens of millions of them.
func TestRecordSizes(t *testing.T) {
	require.Equal(t, uintptr(24), unsafe.Sizeof(slot{}))
	require.Equal(t, uintptr(16), unsafe.Sizeof(blockEntry{}))
	require.Equal(t, uintptr(16), unsafe.Sizeof(holderEntry{}))
}
