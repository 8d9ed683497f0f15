package kvcache

import "math/bits"

// blockTable maps a draining worker's block keys to its G1 slot and its G2 slot in one entry
// (an active worker's are in the fleet's Index): a key is usually in both tiers
// (write-through), so one probe serves a G1 run and the G2 run that continues it. Open
// addressing with linear probing and backward-shift deletion, so heavy insert/delete churn leaves
// no tombstones (Go's maps slowed down by a factor of several under the caches' churn). It grows
// at three-quarters load, never shrinks.
type blockTable struct {
	e     []blockEntry
	n     int
	shift uint
	// sink receives the loads of the touch look-ahead (blockTable.touch), so the compiler keeps
	// them; it is per table, so concurrent runs share no written memory.
	sink uint64
}

// blockEntry keeps key and slots together: one cache line visit per probe. An entry with no
// slot in either tier is an empty table slot.
type blockEntry struct {
	key  uint64
	slot [2]int32 // by tier (G1, G2); -1: not held
}

// The tiers: a worker's GPU memory and its host memory.
const (
	G1 = 0
	G2 = 1
)

func (t *blockTable) home(k uint64) int { return int((k * 0x9e3779b97f4a7c15) >> t.shift) }

func (en *blockEntry) empty() bool { return en.slot[0] < 0 && en.slot[1] < 0 }

// find returns the index of k's entry, or -1.
func (t *blockTable) find(k uint64) int {
	if t.n == 0 {
		return -1
	}
	mask := len(t.e) - 1
	for i := t.home(k); ; i = (i + 1) & mask {
		en := &t.e[i]
		if en.empty() {
			return -1
		}
		if en.key == k {
			return i
		}
	}
}

// findOrInsert returns the index of k's entry, inserting an entry holding nothing.
func (t *blockTable) findOrInsert(k uint64) int {
	if 4*(t.n+1) > 3*len(t.e) {
		t.grow()
	}
	mask := len(t.e) - 1
	for i := t.home(k); ; i = (i + 1) & mask {
		en := &t.e[i]
		if en.empty() {
			en.key = k
			t.n++
			return i
		}
		if en.key == k {
			return i
		}
	}
}

func (t *blockTable) grow() {
	size := 16
	if len(t.e) > 0 {
		size = 2 * len(t.e)
	}
	old := t.e
	t.e = make([]blockEntry, size)
	for i := range t.e {
		t.e[i].slot = [2]int32{-1, -1}
	}
	t.shift = uint(64 - bits.TrailingZeros(uint(size)))
	t.n = 0
	mask := size - 1
	for _, en := range old {
		if en.empty() {
			continue
		}
		for i := t.home(en.key); ; i = (i + 1) & mask {
			if t.e[i].empty() {
				t.e[i] = en
				t.n++
				break
			}
		}
	}
}

// deleteAt empties entry i, moving later entries of its probe run back into the hole when
// their home position allows it.
func (t *blockTable) deleteAt(i int) {
	mask := len(t.e) - 1
	j := i
	for {
		j = (j + 1) & mask
		if t.e[j].empty() {
			break
		}
		h := t.home(t.e[j].key)
		// The entry at j may move to i if its home h is not in the cyclic range (i, j].
		if (j > i && (h <= i || h > j)) || (j < i && (h <= i && h > j)) {
			t.e[i] = t.e[j]
			i = j
		}
	}
	t.e[i].slot = [2]int32{-1, -1}
	t.n--
}

// keyTable is one tier's view of a worker's keys (key → slot): the fleet's block index while
// the worker is active, a blockTable of its own (shared by its two tiers) once it drains.
type keyTable struct {
	w    int32
	tier int
	x    *Index      // while active
	t    *blockTable // after draining
	n    int
}

func (v *keyTable) len() int { return v.n }

func (v *keyTable) get(k uint64) (int32, bool) {
	if v.x != nil {
		s := v.x.get(k, v.w).slot(v.tier)
		return s, s >= 0
	}
	if v.t == nil {
		return -1, false
	}
	i := v.t.find(k)
	if i < 0 {
		return -1, false
	}
	s := v.t.e[i].slot[v.tier]
	return s, s >= 0
}

func (v *keyTable) has(k uint64) bool {
	_, ok := v.get(k)
	return ok
}

// putNew sets k to slot s unless k is present, and reports whether it did (one probe for
// both). A G2 entry starts pending (not resident).
func (v *keyTable) putNew(k uint64, s int32) bool {
	if v.x != nil {
		return v.putNewIndexed(k, s).slot(v.tier) < 0
	}
	if v.t == nil {
		v.t = &blockTable{}
	}
	en := &v.t.e[v.t.findOrInsert(k)]
	if en.slot[v.tier] >= 0 {
		return false
	}
	en.slot[v.tier] = s
	v.n++
	return true
}

// putNewIndexed is putNew for an active worker (in the fleet's index): it returns the worker's
// record for k before, whose slot in this tier says whether k was there already, and whose slot
// in the other tier says whether that tier holds k.
func (v *keyTable) putNewIndexed(k uint64, s int32) holderRec {
	old := v.x.set(k, v.w, v.tier, s, false, true)
	if old.slot(v.tier) < 0 {
		v.n++
	}
	return old
}

// setResident records that the G2 entry of k, in slot s, is resident (routing sees it).
func (v *keyTable) setResident(k uint64, s int32) {
	if v.x != nil {
		v.x.set(k, v.w, G2, s, true, false)
	}
}

func (v *keyTable) del(k uint64) {
	if v.x != nil {
		if v.x.set(k, v.w, v.tier, -1, false, false).slot(v.tier) >= 0 {
			v.n--
		}
		return
	}
	if v.t == nil {
		return
	}
	i := v.t.find(k)
	if i < 0 || v.t.e[i].slot[v.tier] < 0 {
		return
	}
	v.t.e[i].slot[v.tier] = -1
	v.n--
	if v.t.e[i].empty() {
		v.t.deleteAt(i)
	}
}

// touch loads the lines a lookup of k will probe (see Index.touch).
func (v *keyTable) touch(k uint64) {
	if v.x != nil {
		if v.x.prefetch {
			v.x.prefetchKey(k)
			return
		}
		v.x.sink ^= v.x.touch(k)
	} else if v.t != nil {
		v.t.sink ^= v.t.touch(k)
	}
}

// touch loads the cache line where k's entry would start. A caller about to probe several keys
// touches them all first: the misses then overlap instead of coming one after another.
func (t *blockTable) touch(k uint64) uint64 {
	if len(t.e) == 0 {
		return 0
	}
	i := t.home(k)
	// The entry's line, and the next one, which a probe or a deletion's backward shift may reach.
	return t.e[i].key ^ t.e[(i+4)&(len(t.e)-1)].key
}
