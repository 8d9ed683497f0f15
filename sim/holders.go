package sim

import "math/bits"

// blockIndex maps a block key to the workers holding it in one tier (G1: keyed blocks; G2:
// resident entries). Routing and hints walk a prompt once over it, level by level, instead of
// probing every worker's cache (SPEC §3.9).
//
// Most keys have one holder, kept inline; further holders go to a side list. Open addressing
// with backward-shift deletion, as keyTable, growing at three-quarters load.
type blockIndex struct {
	e     []holderEntry
	n     int
	shift uint
	lists [][]int32 // extra holders, by list id
	fps   []uint64  // fingerprint of the whole holder set of an entry with a list, by list id
	free  []int32   // unused list ids
}

// holderEntry is 16 bytes; a set's fingerprint (XOR of holderPrint over its holders: equal
// sets have equal prints) is holderPrint(first) or, with a list, kept beside the list.
type holderEntry struct {
	key   uint64
	first int32 // -1: empty slot
	list  int32 // -1: no extra holders
}

// holderPrint is one worker's share of a holder set's fingerprint.
func holderPrint(w int32) uint64 { return mix64(uint64(w) + 0x51ed27) }

// set returns the number of holders of k and the fingerprint of the set.
func (x *blockIndex) set(k uint64) (int, uint64) {
	i := x.find(k)
	if i < 0 {
		return 0, 0
	}
	if l := x.e[i].list; l >= 0 {
		return 1 + len(x.lists[l]), x.fps[l]
	}
	return 1, holderPrint(x.e[i].first)
}

func newBlockIndex() *blockIndex { return &blockIndex{} }

func (x *blockIndex) home(k uint64) int { return int((k * 0x9e3779b97f4a7c15) >> x.shift) }

func (x *blockIndex) find(k uint64) int {
	if x.n == 0 {
		return -1
	}
	mask := len(x.e) - 1
	for i := x.home(k); ; i = (i + 1) & mask {
		if x.e[i].first < 0 {
			return -1
		}
		if x.e[i].key == k {
			return i
		}
	}
}

// appendHolders appends the holders of k to dst.
func (x *blockIndex) appendHolders(dst []int32, k uint64) []int32 {
	i := x.find(k)
	if i < 0 {
		return dst
	}
	en := x.e[i]
	dst = append(dst, en.first)
	if en.list >= 0 {
		dst = append(dst, x.lists[en.list]...)
	}
	return dst
}

func (x *blockIndex) add(k uint64, w int32) {
	if i := x.find(k); i >= 0 {
		en := &x.e[i]
		if en.list < 0 {
			if len(x.free) > 0 {
				en.list = x.free[len(x.free)-1]
				x.free = x.free[:len(x.free)-1]
			} else {
				en.list = int32(len(x.lists))
				x.lists = append(x.lists, nil)
				x.fps = append(x.fps, 0)
			}
			x.fps[en.list] = holderPrint(en.first)
		}
		x.fps[en.list] ^= holderPrint(w)
		x.lists[en.list] = append(x.lists[en.list], w)
		return
	}
	if 4*(x.n+1) > 3*len(x.e) {
		x.grow()
	}
	x.insert(holderEntry{key: k, first: w, list: -1})
}

func (x *blockIndex) insert(en holderEntry) {
	mask := len(x.e) - 1
	for i := x.home(en.key); ; i = (i + 1) & mask {
		if x.e[i].first < 0 {
			x.e[i] = en
			x.n++
			return
		}
	}
}

func (x *blockIndex) grow() {
	size := 16
	if len(x.e) > 0 {
		size = 2 * len(x.e)
	}
	old := x.e
	x.e = make([]holderEntry, size)
	for i := range x.e {
		x.e[i].first = -1
	}
	x.shift = uint(64 - bits.TrailingZeros(uint(size)))
	x.n = 0
	for _, en := range old {
		if en.first >= 0 {
			x.insert(en)
		}
	}
}

func (x *blockIndex) remove(k uint64, w int32) {
	i := x.find(k)
	if i < 0 {
		return
	}
	en := &x.e[i]
	if en.list >= 0 {
		x.fps[en.list] ^= holderPrint(w)
		l := x.lists[en.list]
		if en.first == w {
			en.first = l[len(l)-1]
			l = l[:len(l)-1]
		} else {
			for j, v := range l {
				if v == w {
					l[j] = l[len(l)-1]
					l = l[:len(l)-1]
					break
				}
			}
		}
		x.lists[en.list] = l
		if len(l) == 0 {
			x.free = append(x.free, en.list)
			en.list = -1
		}
		return
	}
	if en.first != w {
		return
	}
	x.deleteAt(i)
}

func (x *blockIndex) deleteAt(i int) {
	mask := len(x.e) - 1
	j := i
	for {
		j = (j + 1) & mask
		if x.e[j].first < 0 {
			break
		}
		h := x.home(x.e[j].key)
		if (j > i && (h <= i || h > j)) || (j < i && (h <= i && h > j)) {
			x.e[i] = x.e[j]
			i = j
		}
	}
	x.e[i].first = -1
	x.n--
}

// touch loads the cache line where k's entry would start (see blockTable.touch).
func (x *blockIndex) touch(k uint64) uint64 {
	if x == nil || len(x.e) == 0 {
		return 0
	}
	return x.e[x.home(k)].key
}
