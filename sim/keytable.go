package sim

import "math/bits"

// keyTable maps block keys to slots: open addressing with linear probing and backward-shift
// deletion, so heavy insert/delete churn leaves no tombstones (Go's maps slowed down by a
// factor of several under the caches' churn). It grows at three-quarters load, never shrinks.
type keyTable struct {
	e     []keyEntry
	n     int
	shift uint
}

// keyEntry keeps key and value together: one cache line visit per probe.
type keyEntry struct {
	key uint64
	val int32 // -1: empty
}

func (t *keyTable) home(k uint64) int { return int((k * 0x9e3779b97f4a7c15) >> t.shift) }

func (t *keyTable) len() int { return t.n }

func (t *keyTable) get(k uint64) (int32, bool) {
	if t.n == 0 {
		return -1, false
	}
	mask := len(t.e) - 1
	for i := t.home(k); ; i = (i + 1) & mask {
		en := &t.e[i]
		if en.val < 0 {
			return -1, false
		}
		if en.key == k {
			return en.val, true
		}
	}
}

func (t *keyTable) has(k uint64) bool {
	_, ok := t.get(k)
	return ok
}

// putNew sets k to v unless k is present, and reports whether it did (one probe for both).
func (t *keyTable) putNew(k uint64, v int32) bool {
	if 4*(t.n+1) > 3*len(t.e) {
		t.grow()
	}
	mask := len(t.e) - 1
	for i := t.home(k); ; i = (i + 1) & mask {
		en := &t.e[i]
		if en.val < 0 {
			en.key, en.val = k, v
			t.n++
			return true
		}
		if en.key == k {
			return false
		}
	}
}

func (t *keyTable) grow() {
	size := 16
	if len(t.e) > 0 {
		size = 2 * len(t.e)
	}
	old := t.e
	t.e = make([]keyEntry, size)
	for i := range t.e {
		t.e[i].val = -1
	}
	t.shift = uint(64 - bits.TrailingZeros(uint(size)))
	t.n = 0
	for _, en := range old {
		if en.val >= 0 {
			t.putNew(en.key, en.val)
		}
	}
}

func (t *keyTable) del(k uint64) {
	if t.n == 0 {
		return
	}
	mask := len(t.e) - 1
	i := t.home(k)
	for {
		if t.e[i].val < 0 {
			return
		}
		if t.e[i].key == k {
			break
		}
		i = (i + 1) & mask
	}
	// Backward shift: move later entries of the probe run into the hole when their home
	// position allows it.
	j := i
	for {
		j = (j + 1) & mask
		if t.e[j].val < 0 {
			break
		}
		h := t.home(t.e[j].key)
		// The entry at j may move to i if its home h is not in the cyclic range (i, j].
		if (j > i && (h <= i || h > j)) || (j < i && (h <= i && h > j)) {
			t.e[i] = t.e[j]
			i = j
		}
	}
	t.e[i].val = -1
	t.n--
}

// each calls fn for every entry.
func (t *keyTable) each(fn func(k uint64, v int32)) {
	for _, en := range t.e {
		if en.val >= 0 {
			fn(en.key, en.val)
		}
	}
}
