package kvcache

import (
	"math/bits"
	"slices"
	"unsafe"
)

// Index is the fleet's table of cached blocks: for each block key, the active workers
// holding it and, for each of them, its G1 slot and its G2 slot (pending or resident). Workers'
// lookups (prefix matching, keying, eviction) and routing (docs/model.md#routing: the prompt is walked once,
// level by level, over the holder sets) use the same entry, so a block's bookkeeping touches
// one cache line where a per-worker table beside a routing index touched two.
//
// A draining worker leaves it: its keys move to a table of its own (blockTable), so it is never
// a routing candidate or a hint source again.
//
// A key held by one worker keeps that worker's record inline; two to four holders share a small
// list of four places, without pointers; five or more go to a list that keeps each tier's member
// count and fingerprint. Both are sorted by worker id. Open addressing with linear probing and
// backward-shift deletion, growing at three-quarters load.
type Index struct {
	workers   int32 // fleet size, for dense lists
	e         []holderEntry
	n         int
	shift     uint
	lists     []holderList
	free      []int32 // unused list ids
	small     []smallList
	freeSmall []int32 // unused small list ids
	sink      uint64  // receives the loads of touch
	prefetch  bool    // touch prefetches: the table is large and there is an instruction for it
	// watch has, by a key's top bits, the watchers (bit i: watcher i) that watch it (Watch);
	// watchGen[i] counts the changes of the holder sets of watcher i's keys held by two
	// workers or more (and false positives of the filter), watchN the places set.
	watch    *[watchSize]uint8
	watchN   int
	watchGen [Watchers]uint64
	// tables of detached workers given back (reactivated or retired), emptied, for the next
	// Detach: a day that drains hundreds of workers builds a few tables, not hundreds
	spareTables []*blockTable
}

// takeTable returns an empty table for a worker that detaches.
func (x *Index) takeTable() *blockTable {
	if n := len(x.spareTables); n > 0 {
		t := x.spareTables[n-1]
		x.spareTables = x.spareTables[:n-1]
		return t
	}
	return &blockTable{}
}

// giveTable takes back a table no worker uses any more, emptied, keeping its room.
func (x *Index) giveTable(t *blockTable) {
	for i := range t.e {
		t.e[i] = blockEntry{slot: [2]int32{-1, -1}}
	}
	t.n = 0
	x.spareTables = append(x.spareTables, t)
}

type holderEntry struct {
	key uint64
	rec holderRec // 0: an empty entry
}

// holderRec is one worker's hold on a key: its id (bits 0–13), its G1 slot + 1 (bits 14–37, 0
// for none), its G2 slot + 1 (bits 38–61) and whether that G2 entry is resident (bit 62). In an
// entry, bit 63 marks a list id (low 32 bits) instead. A record always holds a slot, so it is
// never 0.
type holderRec uint64

const (
	recWorkerBits = 14
	recSlotBits   = 24
	recSlotMask   = 1<<recSlotBits - 1
	recResident   = holderRec(1) << 62
	recList       = holderRec(1) << 63
)

// MaxWorkers and MaxSlots bound the worker ids and the slot numbers a record can hold.
const (
	MaxWorkers = 1 << recWorkerBits
	MaxSlots   = recSlotMask - 1
)

// Sizes in bytes of the records, for the simulator's memory model (a test checks them).
const (
	SlotBytes         = 24 // a slot of a cache tier
	IndexEntryBytes   = 16 // an entry of the index, one per distinct key
	HolderRecordBytes = 8  // a worker's record in the list of a key with two or more holders
	HolderListBytes   = 56 // the list's header
	TableEntryBytes   = 16 // an entry of a detached worker's own table
)

// NewIndex makes an empty index for a fleet of workers.
func NewIndex(workers int) *Index { return &Index{workers: int32(workers)} }

// recShift is where tier's slot starts in a record (masked to 63 so that shifts by it compile
// without the check for counts of 64 or more).
func recShift(tier int) uint { return (recWorkerBits + uint(tier)*recSlotBits) & 63 }

func (r holderRec) worker() int32       { return int32(r & (1<<recWorkerBits - 1)) }
func (r holderRec) slot(tier int) int32 { return int32(r>>recShift(tier)&recSlotMask) - 1 }
func (r holderRec) resident() bool      { return r&recResident != 0 }
func (r holderRec) list() int32         { return int32(uint32(r)) }

// member reports whether the record counts in a tier's holder set: a G1 slot, or a resident G2
// entry.
func (r holderRec) member(tier int) bool {
	if tier == G1 {
		return r.slot(G1) >= 0
	}
	return r.slot(G2) >= 0 && r.resident()
}

// A small list holds the records of a key with two to four holders (most keys of a session
// workload that more than one worker holds), sorted by worker id, its unused places 0 at the
// end. It has no member counts or fingerprints: Count computes them from its four places. A key
// moves to a holderList at a fifth holder, and back to a small list at three.
type smallList [smallCap]holderRec

const (
	smallCap    = 4
	smallAgain  = 3                  // a holderList of this size turns small again
	recSmall    = holderRec(1) << 62 // with recList: the id is a small list's (alone: recResident)
	recListMask = recList | recSmall
)

// size is the number of records.
func (l *smallList) size() int {
	n := 0
	for n < smallCap && l[n] != 0 {
		n++
	}
	return n
}

// find returns where worker w's record is or would be, and whether it is there.
func (l *smallList) find(w int32) (int, bool) {
	for j, h := range l {
		if h == 0 || h.worker() >= w {
			return j, h != 0 && h.worker() == w
		}
	}
	return smallCap, false
}

// with returns r (or, for r == 0, a new record of worker w) with tier's slot set to s (-1:
// none) and, in G2, the resident flag.
func (r holderRec) with(w int32, tier int, s int32, resident bool) holderRec {
	if r == 0 {
		r = holderRec(w)
	}
	sh := recShift(tier)
	r = r&^(recSlotMask<<sh) | holderRec(s+1)<<sh
	if tier == G2 {
		r &^= recResident
		if resident && s >= 0 {
			r |= recResident
		}
	}
	return r
}

func (r holderRec) empty() bool { return r.slot(G1) < 0 && r.slot(G2) < 0 }

// holderList holds the records of a key with two or more holders: sorted by worker id, or, once
// a large share of the fleet holds the key (a shared system prompt), indexed by worker id (0:
// none), so a worker finds its record in one probe and joins or leaves without a shift.
type holderList struct {
	recs  []holderRec
	dense bool
	size  int32     // records
	n     [2]int32  // members by tier
	fp    [2]uint64 // fingerprint of the members by tier
}

// A list turns dense at 1/DenseShare of the fleet (and at least MinDense records), and sparse
// again below half that.
const (
	DenseShare = 8
	MinDense   = 32
)

// find returns where worker w's record is or would be, and whether it is there.
func (l *holderList) find(w int32) (int, bool) {
	if l.dense {
		return int(w), l.recs[w] != 0
	}
	return l.search(w)
}

// put sets the record at j (from find) to r (0: remove it); had says whether one was there.
func (l *holderList) put(j int, had bool, r holderRec, workers int32) {
	switch {
	case l.dense:
		l.recs[j] = r
	case r == 0:
		l.recs = slices.Delete(l.recs, j, j+1)
	case had:
		l.recs[j] = r
	default:
		l.recs = slices.Insert(l.recs, j, r)
	}
	switch {
	case r == 0:
		l.size--
	case !had:
		l.size++
	}
	if !l.dense && l.size >= MinDense && int(l.size)*DenseShare >= int(workers) {
		d := make([]holderRec, workers)
		for _, h := range l.recs {
			d[h.worker()] = h
		}
		l.recs, l.dense = d, true
	} else if l.dense && (l.size < MinDense/2 || int(l.size)*DenseShare*2 < int(workers)) {
		sp := make([]holderRec, 0, 2*l.size)
		for _, h := range l.recs {
			if h != 0 {
				sp = append(sp, h)
			}
		}
		l.recs, l.dense = sp, false
	}
}

// each calls fn for every record, by worker id.
func (l *holderList) each(fn func(holderRec)) {
	for _, h := range l.recs {
		if h != 0 {
			fn(h)
		}
	}
}

func (l *holderList) account(r holderRec) {
	for tier := range 2 {
		if r.member(tier) {
			l.n[tier]++
			l.fp[tier] ^= WorkerPrint(r.worker())
		}
	}
}

func (l *holderList) unaccount(r holderRec) {
	for tier := range 2 {
		if r.member(tier) {
			l.n[tier]--
			l.fp[tier] ^= WorkerPrint(r.worker())
		}
	}
}

// search returns where worker w's record is or would be in the list, and whether it is there.
// Records are sorted by worker id and ids spread evenly, so it starts where w would be if they
// were evenly spaced and gallops out from there: a key held by most of 2,048 workers (a shared
// system prompt) finds w in a probe or two, not eleven.
func (l *holderList) search(w int32) (int, bool) {
	recs := l.recs
	n := len(recs)
	last := recs[n-1].worker()
	if w > last {
		return n, false
	}
	g := int(int64(w) * int64(n-1) / int64(max(last, 1)))
	// Bracket w in [lo, hi) by doubling steps from g, then bisect.
	lo, hi := 0, n
	if recs[g].worker() < w {
		lo = g + 1
		for step := 1; lo+step-1 < n && recs[lo+step-1].worker() < w; step *= 2 {
			lo += step
		}
		hi = min(n, lo+2*(lo-g)) // the last step's span, at most
	} else {
		hi = g + 1
		for step := 1; hi-step-1 >= 0 && recs[hi-step-1].worker() >= w; step *= 2 {
			hi -= step
		}
		lo = max(0, hi-2*(g+1-hi)-1)
	}
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if recs[m].worker() < w {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo, lo < n && recs[lo].worker() == w
}

// WorkerPrint is worker w's share of a holder set's fingerprint (Holders.Count): the
// fingerprint is the XOR over the set, so equal sets have equal prints, and a walk that drops w
// from a set it follows drops w's print from the set's.
func WorkerPrint(w int32) uint64 { return mix64(uint64(w) + 0x51ed27) }

func (x *Index) home(k uint64) int { return int((k * 0x9e3779b97f4a7c15) >> x.shift) }

func (x *Index) find(k uint64) int {
	if x.n == 0 {
		return -1
	}
	mask := len(x.e) - 1
	for i := x.home(k); ; i = (i + 1) & mask {
		en := &x.e[i]
		if en.rec == 0 {
			return -1
		}
		if en.key == k {
			return i
		}
	}
}

// findOrInsert returns k's entry, inserting an empty one (rec 0) that the caller must fill.
func (x *Index) findOrInsert(k uint64) int {
	if 4*(x.n+1) > 3*len(x.e) {
		x.grow()
	}
	mask := len(x.e) - 1
	for i := x.home(k); ; i = (i + 1) & mask {
		en := &x.e[i]
		if en.rec == 0 {
			en.key = k
			x.n++
			return i
		}
		if en.key == k {
			return i
		}
	}
}

func (x *Index) grow() {
	size := 16
	if len(x.e) > 0 {
		size = 2 * len(x.e)
	}
	old := x.e
	x.e = newEntries(size)
	x.prefetch = hasPrefetch && size*IndexEntryBytes >= HugeTableBytes
	x.shift = uint(64 - bits.TrailingZeros(uint(size)))
	mask := size - 1
	for _, en := range old {
		if en.rec == 0 {
			continue
		}
		for i := x.home(en.key); ; i = (i + 1) & mask {
			if x.e[i].rec == 0 {
				x.e[i] = en
				break
			}
		}
	}
}

// HugeTableBytes is the size from which the index's table is laid on 2 MB pages where the
// system grants them (Linux): Mooncake's 8 MB table took 16 % less time so, with touch
// prefetching (docs/performance.md). HugePadBytes is the room such a table takes besides its
// entries, to start on a 2 MB boundary.
const (
	HugeTableBytes = 4 << 20
	HugePadBytes   = 2 << 20
)

// newEntries returns an empty table of n entries; a large one starts on a 2 MB boundary with
// the kernel asked to back it with 2 MB pages, so its random probes miss the TLB far less.
func newEntries(n int) []holderEntry {
	if !hugePages || n*IndexEntryBytes < HugeTableBytes {
		return make([]holderEntry, n)
	}
	raw := make([]holderEntry, n+HugePadBytes/IndexEntryBytes)
	off := 0
	if r := uintptr(unsafe.Pointer(&raw[0])) % HugePadBytes; r != 0 {
		off = int((HugePadBytes - r) / IndexEntryBytes)
	}
	e := raw[off : off+n : off+n]
	adviseHuge(unsafe.Slice((*byte)(unsafe.Pointer(&e[0])), n*IndexEntryBytes))
	return e
}

// deleteAt empties entry i, moving later entries of its probe run back into the hole when
// their home position allows it.
func (x *Index) deleteAt(i int) {
	mask := len(x.e) - 1
	j := i
	for {
		j = (j + 1) & mask
		if x.e[j].rec == 0 {
			break
		}
		h := x.home(x.e[j].key)
		// The entry at j may move to i if its home h is not in the cyclic range (i, j].
		if (j > i && (h <= i || h > j)) || (j < i && (h <= i && h > j)) {
			x.e[i] = x.e[j]
			i = j
		}
	}
	x.e[i] = holderEntry{}
	x.n--
}

// touch loads the cache lines where k's entry would be. A caller about to probe several keys
// touches them all first: the misses then overlap instead of coming one after another. In a
// large table keyTable.touch prefetches them instead (prefetchKey).
func (x *Index) touch(k uint64) uint64 {
	if len(x.e) == 0 {
		return 0
	}
	i := x.home(k)
	// The entry's line, and the next one, which a probe or a deletion's backward shift may reach.
	return x.e[i].key ^ x.e[(i+4)&(len(x.e)-1)].key
}

// prefetchKey is touch for a large table (x.prefetch): loads that miss stall the processor once
// enough are outstanding, and a table that size misses on most of them, so it prefetches the
// lines instead (Mooncake: 7 % of its time with prefetching alone, 19 % with the table's 2 MB
// pages). A small table mostly hits, where a load costs less than the call.
func (x *Index) prefetchKey(k uint64) {
	i := x.home(k)
	prefetch(unsafe.Pointer(&x.e[i]))
	prefetch(unsafe.Pointer(&x.e[(i+4)&(len(x.e)-1)]))
}

// get returns worker w's record for k, or 0.
func (x *Index) get(k uint64, w int32) holderRec {
	i := x.find(k)
	if i < 0 {
		return 0
	}
	r := x.e[i].rec
	if r&recList == 0 {
		if r.worker() == w {
			return r
		}
		return 0
	}
	if r&recSmall != 0 {
		l := &x.small[r.list()]
		if j, ok := l.find(w); ok {
			return l[j]
		}
		return 0
	}
	l := &x.lists[r.list()]
	if j, ok := l.find(w); ok {
		return l.recs[j]
	}
	return 0
}

// set sets worker w's slot for k in tier to s (-1: none) and, in G2, whether it is resident;
// with ifAbsent it changes nothing if w has a slot for k in that tier already. It returns w's
// record before (0: none).
func (x *Index) set(k uint64, w int32, tier int, s int32, resident, ifAbsent bool) holderRec {
	var i int
	if s >= 0 {
		i = x.findOrInsert(k)
	} else if i = x.find(k); i < 0 {
		return 0
	}
	en := &x.e[i]
	if en.rec&recList == 0 {
		old := en.rec
		if old != 0 && old.worker() != w { // another worker holds k
			if s >= 0 {
				x.toSmall(en, old, holderRec(0).with(w, tier, s, resident))
			}
			return 0
		}
		if ifAbsent && old.slot(tier) >= 0 {
			return old
		}
		if nr := old.with(w, tier, s, resident); !nr.empty() {
			en.rec = nr
		} else if old != 0 {
			x.deleteAt(i)
		}
		return old
	}
	if en.rec&recSmall != 0 {
		return x.setSmall(en, w, tier, s, resident, ifAbsent)
	}
	id := en.rec.list()
	l := &x.lists[id]
	j, found := l.find(w)
	var old holderRec
	if found {
		old = l.recs[j]
	} else if s < 0 {
		return 0
	}
	if ifAbsent && old.slot(tier) >= 0 {
		return old
	}
	nr := old.with(w, tier, s, resident)
	x.noteShared(k, old, nr)
	l.unaccount(old)
	if nr.empty() {
		nr = 0
	} else {
		l.account(nr)
	}
	l.put(j, found, nr, x.workers)
	if l.size == smallAgain {
		sid := x.newSmall()
		sl := &x.small[sid]
		n := 0
		l.each(func(h holderRec) { sl[n] = h; n++ })
		en.rec = recListMask | holderRec(uint32(sid))
		if l.dense {
			l.recs = nil
		}
		*l = holderList{recs: l.recs[:0]}
		x.free = append(x.free, id)
	}
	return old
}

// setSmall is set for an entry whose records are in a small list.
func (x *Index) setSmall(en *holderEntry, w int32, tier int, s int32, resident, ifAbsent bool) holderRec {
	id := en.rec.list()
	l := &x.small[id]
	j, found := l.find(w)
	var old holderRec
	if found {
		old = l[j]
	} else if s < 0 {
		return 0
	}
	if ifAbsent && old.slot(tier) >= 0 {
		return old
	}
	nr := old.with(w, tier, s, resident)
	x.noteShared(en.key, old, nr)
	switch {
	case nr.empty(): // w leaves: close the gap; a last record goes back inline
		copy(l[j:], l[j+1:])
		l[smallCap-1] = 0
		if l[1] == 0 {
			en.rec = l[0]
			*l = smallList{}
			x.freeSmall = append(x.freeSmall, id)
		}
	case found:
		l[j] = nr
	case l[smallCap-1] == 0: // room for w
		copy(l[j+1:], l[j:smallCap-1])
		l[j] = nr
	default: // a fifth holder: the key moves to a holderList
		x.toList(en, l, j, nr)
		*l = smallList{}
		x.freeSmall = append(x.freeSmall, id)
	}
	return old
}

// newSmall returns the id of an empty small list.
func (x *Index) newSmall() int32 {
	if n := len(x.freeSmall); n > 0 {
		id := x.freeSmall[n-1]
		x.freeSmall = x.freeSmall[:n-1]
		return id
	}
	x.small = append(x.small, smallList{})
	return int32(len(x.small) - 1)
}

// toSmall turns an entry with one record into a small list of two.
func (x *Index) toSmall(en *holderEntry, a, b holderRec) {
	id := x.newSmall()
	if b.worker() < a.worker() {
		a, b = b, a
	}
	x.small[id] = smallList{a, b}
	en.rec = recListMask | holderRec(uint32(id))
}

// toList moves the records of a full small list, with nr inserted at j, to a holderList.
func (x *Index) toList(en *holderEntry, sl *smallList, j int, nr holderRec) {
	var id int32
	if n := len(x.free); n > 0 {
		id = x.free[n-1]
		x.free = x.free[:n-1]
	} else {
		id = int32(len(x.lists))
		x.lists = append(x.lists, holderList{})
	}
	l := &x.lists[id]
	l.recs = append(append(append(l.recs[:0], sl[:j]...), nr), sl[j:]...)
	l.size = int32(len(l.recs))
	for _, h := range l.recs {
		l.account(h)
	}
	en.rec = recList | holderRec(uint32(id))
}

// drop removes worker w's record for k.
func (x *Index) drop(k uint64, w int32) {
	x.set(k, w, G1, -1, false, false)
	x.set(k, w, G2, -1, false, false)
}

// Holders is one tier's view of the index for routing: the workers that hold each key in that
// tier (a G1 slot, or a resident G2 entry), its holder set.
type Holders struct {
	x    *Index
	tier int
}

// Holders returns the view of tier (G1 or G2).
func (x *Index) Holders(tier int) *Holders { return &Holders{x: x, tier: tier} }

// Count returns the number of holders of k and a fingerprint of the set (equal sets have equal
// fingerprints; unequal sets almost never do).
func (v *Holders) Count(k uint64) (n int, fingerprint uint64) {
	i := v.x.find(k)
	if i < 0 {
		return 0, 0
	}
	r := v.x.e[i].rec
	if r&recList == 0 {
		if r.member(v.tier) {
			return 1, WorkerPrint(r.worker())
		}
		return 0, 0
	}
	if r&recSmall != 0 {
		for _, h := range &v.x.small[r.list()] {
			if h != 0 && h.member(v.tier) {
				n++
				fingerprint ^= WorkerPrint(h.worker())
			}
		}
		return n, fingerprint
	}
	l := &v.x.lists[r.list()]
	return int(l.n[v.tier]), l.fp[v.tier]
}

// listRecords returns the places of the small list or the list an entry's rec names (0: an
// unused place).
func (x *Index) listRecords(r holderRec) []holderRec {
	if r&recSmall != 0 {
		return x.small[r.list()][:]
	}
	return x.lists[r.list()].recs
}

// Append appends the holders of k to dst, by worker id.
func (v *Holders) Append(dst []int32, k uint64) []int32 {
	i := v.x.find(k)
	if i < 0 {
		return dst
	}
	r := v.x.e[i].rec
	if r&recList == 0 {
		if r.member(v.tier) {
			dst = append(dst, r.worker())
		}
		return dst
	}
	for _, h := range v.x.listRecords(r) {
		if h != 0 && h.member(v.tier) {
			dst = append(dst, h.worker())
		}
	}
	return dst
}

// AppendOnly appends the holders of k in this tier that are not holders in the other tier, by
// worker id.
func (v *Holders) AppendOnly(dst []int32, k uint64) []int32 {
	i := v.x.find(k)
	if i < 0 {
		return dst
	}
	other := 1 - v.tier
	r := v.x.e[i].rec
	if r&recList == 0 {
		if r.member(v.tier) && !r.member(other) {
			dst = append(dst, r.worker())
		}
		return dst
	}
	for _, h := range v.x.listRecords(r) {
		if h != 0 && h.member(v.tier) && !h.member(other) {
			dst = append(dst, h.worker())
		}
	}
	return dst
}

// mix64 is a 64-bit finaliser with full avalanche (splitmix64).
func mix64(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

// Grow makes room for worker ids below workers (an autoscaler started workers, docs/model.md#model-3):
// dense lists get a record place for each new id.
func (x *Index) Grow(workers int) {
	if int32(workers) <= x.workers {
		return
	}
	x.workers = int32(workers)
	for i := range x.lists {
		if l := &x.lists[i]; l.dense && len(l.recs) < workers {
			l.recs = append(l.recs, make([]holderRec, workers-len(l.recs))...)
		}
	}
}
