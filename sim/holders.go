package sim

import "math/bits"

// blockIndex maps a block key to the active workers holding it, in both tiers (G1: keyed
// blocks; G2: resident entries). Routing and hints walk a prompt once over it, level by level,
// instead of probing every worker's cache (SPEC §3.9).
//
// A key is usually in both tiers (write-through), so it has one entry for both: one probe, and
// a key leaves the table only when its last holder in either tier goes. Up to two holders per
// tier are kept inline (a session's blocks often live on two workers); three or more go to a
// list. Open addressing with backward-shift deletion, as blockTable, growing at three-quarters
// load.
type blockIndex struct {
	e     []holderEntry
	n     int
	shift uint
	lists [][]int32 // holder sets of three or more workers, by list id
	fps   []uint64  // fingerprint of each list's set, by list id
	free  []int32   // unused list ids
}

// holderEntry is 16 bytes: the key, and by tier a packed holder set (worker ids fit in 15
// bits, MaxWorkers being 16,384): 0 for none; one or two ids inline; or a list id. The zero
// entry is empty. A set's fingerprint is the XOR of holderPrint over its holders (equal sets
// have equal prints); a list keeps its own.
type holderEntry struct {
	key uint64
	h   [2]holders
}

// holders is one tier's holder set in an entry: the top two bits say how many (0, 1, 2, or
// holdersList), then one id in the low 15 bits, two in the low 30, or a list id.
type holders uint32

const (
	holdersOne  = 1 << 30
	holdersTwo  = 2 << 30
	holdersList = 3 << 30
	holderBits  = 15
	holderMask  = 1<<holderBits - 1
)

// Worker ids must fit their field: this fails to compile if MaxWorkers outgrows it.
var _ [holderMask + 1 - MaxWorkers]struct{}

func (h holders) mode() holders { return h & holdersList }
func (h holders) first() int32  { return int32(h & holderMask) }
func (h holders) second() int32 { return int32(h >> holderBits & holderMask) }
func (h holders) list() int32   { return int32(h &^ holdersList) }

func oneHolder(a int32) holders     { return holdersOne | holders(a) }
func twoHolders(a, b int32) holders { return holdersTwo | holders(b)<<holderBits | holders(a) }

func (en *holderEntry) empty() bool { return en.h[0] == 0 && en.h[1] == 0 }

// holderPrint is one worker's share of a holder set's fingerprint.
func holderPrint(w int32) uint64 { return mix64(uint64(w) + 0x51ed27) }

func (x *blockIndex) home(k uint64) int { return int((k * 0x9e3779b97f4a7c15) >> x.shift) }

func (x *blockIndex) find(k uint64) int {
	if x.n == 0 {
		return -1
	}
	mask := len(x.e) - 1
	for i := x.home(k); ; i = (i + 1) & mask {
		en := &x.e[i]
		if en.empty() {
			return -1
		}
		if en.key == k {
			return i
		}
	}
}

func (x *blockIndex) findOrInsert(k uint64) int {
	if 4*(x.n+1) > 3*len(x.e) {
		x.grow()
	}
	mask := len(x.e) - 1
	for i := x.home(k); ; i = (i + 1) & mask {
		en := &x.e[i]
		if en.empty() {
			en.key = k
			x.n++
			return i
		}
		if en.key == k {
			return i
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
	x.shift = uint(64 - bits.TrailingZeros(uint(size)))
	mask := size - 1
	for _, en := range old {
		if en.empty() {
			continue
		}
		for i := x.home(en.key); ; i = (i + 1) & mask {
			if x.e[i].empty() {
				x.e[i] = en
				break
			}
		}
	}
}

// deleteAt empties entry i, moving later entries of its probe run back into the hole when
// their home position allows it.
func (x *blockIndex) deleteAt(i int) {
	mask := len(x.e) - 1
	j := i
	for {
		j = (j + 1) & mask
		if x.e[j].empty() {
			break
		}
		h := x.home(x.e[j].key)
		// The entry at j may move to i if its home h is not in the cyclic range (i, j].
		if (j > i && (h <= i || h > j)) || (j < i && (h <= i && h > j)) {
			x.e[i] = x.e[j]
			i = j
		}
	}
	x.e[i].h = [2]holders{}
	x.n--
}

// touch loads the cache line where k's entry would start (see blockTable.touch).
func (x *blockIndex) touch(k uint64) uint64 {
	if len(x.e) == 0 {
		return 0
	}
	i := x.home(k)
	return x.e[i].key ^ x.e[(i+4)&(len(x.e)-1)].key // as blockTable.touch
}

// tierIndex is one tier's view of the block index.
type tierIndex struct {
	x    *blockIndex
	tier int
}

// set returns the number of holders of k in this tier and the fingerprint of the set.
func (v *tierIndex) set(k uint64) (int, uint64) {
	i := v.x.find(k)
	if i < 0 {
		return 0, 0
	}
	switch h := v.x.e[i].h[v.tier]; h.mode() {
	case 0:
		return 0, 0
	case holdersOne:
		return 1, holderPrint(h.first())
	case holdersTwo:
		return 2, holderPrint(h.first()) ^ holderPrint(h.second())
	default:
		return len(v.x.lists[h.list()]), v.x.fps[h.list()]
	}
}

// appendHolders appends the holders of k in this tier to dst.
func (v *tierIndex) appendHolders(dst []int32, k uint64) []int32 {
	i := v.x.find(k)
	if i < 0 {
		return dst
	}
	switch h := v.x.e[i].h[v.tier]; h.mode() {
	case 0:
		return dst
	case holdersOne:
		return append(dst, h.first())
	case holdersTwo:
		return append(dst, h.first(), h.second())
	default:
		return append(dst, v.x.lists[h.list()]...)
	}
}

func (v *tierIndex) touch(k uint64) uint64 {
	if v == nil {
		return 0
	}
	return v.x.touch(k)
}

// add records that worker w holds k in this tier (it did not).
func (v *tierIndex) add(k uint64, w int32) {
	x := v.x
	h := &x.e[x.findOrInsert(k)].h[v.tier]
	switch h.mode() {
	case 0:
		*h = oneHolder(w)
	case holdersOne:
		*h = twoHolders(h.first(), w)
	case holdersTwo:
		var id int32
		if n := len(x.free); n > 0 {
			id = x.free[n-1]
			x.free = x.free[:n-1]
		} else {
			id = int32(len(x.lists))
			x.lists = append(x.lists, nil)
			x.fps = append(x.fps, 0)
		}
		a, b := h.first(), h.second()
		x.lists[id] = append(x.lists[id][:0], a, b, w)
		x.fps[id] = holderPrint(a) ^ holderPrint(b) ^ holderPrint(w)
		*h = holdersList | holders(id)
	default:
		id := h.list()
		x.lists[id] = append(x.lists[id], w)
		x.fps[id] ^= holderPrint(w)
	}
}

// remove records that worker w no longer holds k in this tier.
func (v *tierIndex) remove(k uint64, w int32) {
	x := v.x
	i := x.find(k)
	if i < 0 {
		return
	}
	en := &x.e[i]
	h := &en.h[v.tier]
	switch h.mode() {
	case holdersOne:
		if h.first() == w {
			*h = 0
			if en.empty() {
				x.deleteAt(i)
			}
		}
	case holdersTwo:
		if a, b := h.first(), h.second(); a == w {
			*h = oneHolder(b)
		} else if b == w {
			*h = oneHolder(a)
		}
	case holdersList:
		id := h.list()
		l := x.lists[id]
		for j, u := range l {
			if u == w {
				l[j] = l[len(l)-1]
				l = l[:len(l)-1]
				x.fps[id] ^= holderPrint(w)
				break
			}
		}
		if len(l) == 2 {
			*h = twoHolders(l[0], l[1])
			x.free = append(x.free, id)
			l = l[:0]
		}
		x.lists[id] = l
	}
}
