package kvcache

import (
	"math/rand/v2"
	"os"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"
)

// iterations is n with SCALEIN_SLOW=1 (CI sets it), and a fifth of n in the everyday run.
func iterations(n int) int {
	if os.Getenv("SCALEIN_SLOW") == "1" {
		return n
	}
	return n / 5
}

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
	for _, en := range kt.t.e {
		if s := en.slot[kt.tier]; s >= 0 {
			require.Equal(t, ref[en.key], s)
			n++
		}
	}
	require.Equal(t, len(ref), n)
}

// The LRU pops in the order of docs/model.md#precise-rules (instant, deeper first, then push order).
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

// The block index agrees with a map of (key, worker) → slots under random sets and clears in
// both tiers, across inline records, lists, list reuse and the largest worker ids and slots.
func TestBlockIndexMatchesMap(t *testing.T) {
	// Few holders per key, among the smallest and largest worker ids.
	checkBlockIndex(t, MaxWorkers, 300, 6, true, iterations(200000))
	// Many holders per key in a fleet of 64, so lists turn dense and back.
	checkBlockIndex(t, 64, 4, 64, false, iterations(40000))
}

func checkBlockIndex(t *testing.T, workers int32, nkeys int, ids int32, high bool, iterations int) {
	x := NewIndex(int(workers))
	tiers := []*Holders{x.Holders(G1), x.Holders(G2)}
	type hold struct {
		slot     [2]int32
		resident bool
	}
	ref := map[uint64]map[int32]*hold{}
	moves := map[string]int{}
	rng := rand.New(rand.NewPCG(5, 6))
	for i := 0; i < iterations; i++ {
		k := uint64(rng.IntN(nkeys)) * 0x9e3779b97f4a7c15
		w := int32(rng.IntN(int(ids)))
		if high && rng.IntN(8) == 0 {
			w = MaxWorkers - 1 - w
		}
		tier := rng.IntN(2)
		s := int32(rng.IntN(1000))
		if rng.IntN(16) == 0 {
			s = MaxSlots - s
		}
		if rng.IntN(3) == 0 {
			s = -1
		}
		resident := tier == G2 && s >= 0 && rng.IntN(2) == 0
		ifAbsent := rng.IntN(4) == 0
		if ref[k] == nil {
			ref[k] = map[int32]*hold{}
		}
		h := ref[k][w]
		if h == nil {
			h = &hold{slot: [2]int32{-1, -1}}
		}
		before := entryKind(x, k)
		old := x.set(k, w, tier, s, resident, ifAbsent)
		if i := x.find(k); i >= 0 {
			_, err := x.records(x.e[i])
			require.NoError(t, err, "key %x", k)
		}
		if after := entryKind(x, k); before != after && before != "" && after != "" {
			moves[before+" → "+after]++
		}
		require.Equal(t, h.slot[G1], old.slot(G1))
		require.Equal(t, h.slot[G2], old.slot(G2))
		if !(ifAbsent && h.slot[tier] >= 0) {
			h.slot[tier] = s
			if tier == G2 {
				h.resident = resident
			}
		}
		if h.slot[0] < 0 && h.slot[1] < 0 {
			delete(ref[k], w)
		} else {
			ref[k][w] = h
		}
		// The key's records, both tier views, and their fingerprints.
		for tr := range tiers {
			want := map[int32]bool{}
			for u, h := range ref[k] {
				if h.slot[tr] >= 0 && (tr == G1 || h.resident) {
					want[u] = true
				}
			}
			got := tiers[tr].Append(nil, k)
			require.Len(t, got, len(want))
			var fp uint64
			for _, u := range got {
				require.True(t, want[u], "tier %d key %x: holder %d not in the set", tr, k, u)
				fp ^= WorkerPrint(u)
			}
			n, print := tiers[tr].Count(k)
			require.Equal(t, len(want), n)
			require.Equal(t, fp, print)
			// Holders in this tier and not in the other, by worker id.
			var only []int32
			for _, u := range got {
				h := ref[k][u]
				if o := 1 - tr; !(h.slot[o] >= 0 && (o == G1 || h.resident)) {
					only = append(only, u)
				}
			}
			require.Equal(t, only, tiers[tr].AppendOnly(nil, k), "tier %d key %x: holders only in it", tr, k)
		}
		for u := range ids {
			for _, u := range []int32{u, workers - 1 - u} {
				r := x.get(k, u)
				if h := ref[k][u]; h == nil {
					require.Zero(t, r)
				} else {
					require.Equal(t, h.slot, [2]int32{r.slot(G1), r.slot(G2)})
					require.Equal(t, h.resident && h.slot[G2] >= 0, r.resident())
				}
			}
		}
	}
	dense := 0
	for i := range x.lists {
		if x.lists[i].dense {
			dense++
		}
	}
	if !high {
		require.NotZero(t, dense, "no list turned dense")
	}
	// With few holders per key, keys went from inline records to small lists to lists, and back.
	for _, m := range []string{"inline → small", "small → list", "list → small", "small → inline"} {
		if high {
			require.NotZero(t, moves[m], "moves between representations: %v", moves)
		}
	}
	live := 0
	for _, m := range ref {
		if len(m) > 0 {
			live++
		}
	}
	require.Equal(t, live, x.n)
}

// entryKind names how k's records are kept ("" when no worker holds it).
func entryKind(x *Index, k uint64) string {
	i := x.find(k)
	switch {
	case i < 0:
		return ""
	case x.e[i].rec&recList == 0:
		return "inline"
	case x.e[i].rec&recSmall != 0:
		return "small"
	}
	return "list"
}

// The per-block records stay as small as their comments promise: memory at 2,048 workers is
// tens of millions of them.
// The sizes the package states for the simulator's memory model are the records' sizes.
func TestRecordSizes(t *testing.T) {
	require.Equal(t, uintptr(24), unsafe.Sizeof(slot{}))
	require.Equal(t, uintptr(16), unsafe.Sizeof(blockEntry{}))
	require.Equal(t, uintptr(16), unsafe.Sizeof(holderEntry{}))
	require.Equal(t, uintptr(SlotBytes), unsafe.Sizeof(slot{}))
	require.Equal(t, uintptr(IndexEntryBytes), unsafe.Sizeof(holderEntry{}))
	require.Equal(t, uintptr(HolderRecordBytes), unsafe.Sizeof(holderRec(0)))
	require.Equal(t, uintptr(HolderListBytes), unsafe.Sizeof(holderList{}))
	require.Equal(t, uintptr(TableEntryBytes), unsafe.Sizeof(blockEntry{}))
}

// The list search finds every record and every insertion point, in sparse and dense lists.
func TestHolderListSearch(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	for trial := 0; trial < iterations(3000); trial++ {
		n := 2 + rng.IntN(300)
		density := 1 + rng.IntN(4)
		var l holderList
		w := int32(rng.IntN(5))
		for len(l.recs) < n {
			l.recs = append(l.recs, holderRec(w))
			w += int32(1 + rng.IntN(density*density))
		}
		for q := int32(0); q <= w+2; q++ {
			want := 0
			for want < len(l.recs) && l.recs[want].worker() < q {
				want++
			}
			got, ok := l.search(q)
			require.Equal(t, want, got, "trial %d worker %d", trial, q)
			require.Equal(t, want < len(l.recs) && l.recs[want].worker() == q, ok)
		}
	}
}

// A watcher's generation changes whenever a key it watches (held by two workers or more when
// watched) gains or loses a holder in either tier: while the generation stays, the sets it saw
// are the sets.
func TestWatchSeesHolderChanges(t *testing.T) {
	x := NewIndex(16)
	tiers := []*Holders{x.Holders(G1), x.Holders(G2)}
	sets := func(k uint64) [2][]int32 { return [2][]int32{tiers[G1].Append(nil, k), tiers[G2].Append(nil, k)} }
	type watch struct {
		gen  uint64
		seen [2][]int32
	}
	watched := map[uint64]watch{}
	rng := rand.New(rand.NewPCG(7, 8))
	changes, kept := 0, 0
	for range iterations(100000) {
		k := uint64(rng.IntN(40)) * 0x9e3779b97f4a7c15
		s := int32(rng.IntN(100))
		if rng.IntN(3) == 0 {
			s = -1
		}
		tier := rng.IntN(2)
		x.set(k, int32(rng.IntN(6)), tier, s, tier == G2 && rng.IntN(2) == 0, false)
		watcher := int(k>>60) % Watchers
		for wk, w := range watched {
			if int(wk>>60)%Watchers != watcher {
				continue
			}
			if tiers[G1].WatchGen(watcher) == w.gen {
				require.Equal(t, w.seen, sets(wk), "key %x changed holders under an unchanged generation", wk)
				kept++
			} else {
				delete(watched, wk)
				changes++
			}
		}
		if n1, _ := tiers[G1].Count(k); n1 >= 2 {
			// Every watched key of this watcher is re-watched with it, as the router does.
			keys := []uint64{k}
			for wk := range watched {
				if int(wk>>60)%Watchers != watcher || wk == k {
					continue
				}
				if n, _ := tiers[G1].Count(wk); n < 2 {
					delete(watched, wk) // Watch takes keys of two holders or more
					continue
				}
				keys = append(keys, wk)
			}
			gen := tiers[G1].Watch(watcher, keys)
			for _, wk := range keys {
				watched[wk] = watch{gen: gen, seen: sets(wk)}
			}
		}
	}
	require.Greater(t, changes, 100)
	require.Greater(t, kept, 100)
}

// A large table starts on a 2 MB boundary where the system grants 2 MB pages, and every table
// is empty and exactly as long as asked.
func TestNewEntries(t *testing.T) {
	for _, n := range []int{16, 1 << 10, HugeTableBytes / IndexEntryBytes, 2 * HugeTableBytes / IndexEntryBytes} {
		e := newEntries(n)
		require.Len(t, e, n)
		require.Equal(t, n, cap(e))
		for i := range e {
			require.Zero(t, e[i].rec, "entry %d of %d", i, n)
		}
		if hugePages && n*IndexEntryBytes >= HugeTableBytes {
			require.Zero(t, uintptr(unsafe.Pointer(&e[0]))%HugePadBytes, "a table of %d entries", n)
		}
	}
}

// touch on a table large enough to prefetch (and to lie on 2 MB pages) reads nothing wrong and
// changes nothing: every key set is found with its record after the table grew through it.
func TestTouchLargeTable(t *testing.T) {
	x := NewIndex(2)
	n := HugeTableBytes / IndexEntryBytes // keys enough to pass the size at 3/4 load
	for k := range n {
		x.set(mix64(uint64(k)), int32(k%2), G1, int32(k%1000), false, false)
	}
	require.GreaterOrEqual(t, len(x.e)*IndexEntryBytes, HugeTableBytes)
	require.Equal(t, hasPrefetch, x.prefetch, "a table this large is prefetched into where the processor can")
	kt := keyTable{w: 0, tier: G1, x: x}
	for k := range n {
		kt.touch(mix64(uint64(k)))
		r := x.get(mix64(uint64(k)), int32(k%2))
		require.Equal(t, int32(k%1000), r.slot(G1), "key %d", k)
	}
}
