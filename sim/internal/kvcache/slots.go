package kvcache

// slot is one block slot of a cache tier: its key, its state and its links in the tier's
// eviction list, together in 24 bytes, so touching a slot touches one cache line (the caches
// visit slots in no useful order, and separate per-field arrays cost a miss per field), and a
// fleet's tens of millions of slots stay small.
type slot struct {
	key        uint64
	prev, next int32  // eviction list links; -1: none; prev is notListed out of the list
	uses       int32  // G1: requests holding the slot; G2: pins
	meta       uint32 // block position in its prompt, and readyBit
}

const (
	notListed = -2
	// readyBit is set on a G1 slot that is keyed and on a G2 entry that is resident (not
	// pending).
	readyBit = 1 << 31
)

func (sl *slot) ready() bool     { return sl.meta&readyBit != 0 }
func (sl *slot) depth() int32    { return int32(sl.meta &^ readyBit) }
func (sl *slot) evictable() bool { return sl.prev != notListed }
func (sl *slot) setReady(r bool) {
	if r {
		sl.meta |= readyBit
	} else {
		sl.meta &^= readyBit
	}
}

// set gives the slot a key, a depth and a ready state.
func (sl *slot) set(key uint64, depth int, ready bool) {
	sl.key, sl.meta = key, uint32(depth)
	sl.setReady(ready)
}

// slots holds a tier's slots and orders the evictable ones by docs/model.md#precise-rules "Recency and
// eviction": the instant a slot became evictable, then the deeper block position first, then the
// order in which slots became evictable.
//
// Instants only grow, so the order is a list: a slot is appended, and only the group of slots
// that became evictable at the current instant (the tail of the list) needs ordering by depth,
// which an insertion walking back from the tail keeps. It is an intrusive doubly linked list
// over slot numbers: removal is O(1) and leaves nothing behind; a push is O(1) when a request
// releases its blocks deepest first.
//
// The zero value is an empty list with no slots; head, tail and groupFirst mean something only
// while n > 0 or after add.
type slots struct {
	v          []slot
	head, tail int32
	n          int   // evictable slots
	groupFirst int32 // first slot of the tail group, which became evictable at groupAt; -1: none
	groupAt    int64
}

// add appends a new empty slot and returns its number; a tier never has more than capacity.
// The array doubles up to capacity, so growing it leaves at most its final size as garbage
// (append's gentler growth for large slices left about four times that).
func (l *slots) add(capacity int) int32 {
	if len(l.v) == 0 {
		l.head, l.tail, l.groupFirst = -1, -1, -1
	}
	if len(l.v) == cap(l.v) {
		v := make([]slot, len(l.v), min(max(2*len(l.v), 64), max(capacity, len(l.v)+1)))
		copy(v, l.v)
		l.v = v
	}
	l.v = append(l.v, slot{prev: notListed, next: -1})
	return int32(len(l.v) - 1)
}

// evictableCount is the number of slots in the eviction list.
func (l *slots) evictableCount() int { return l.n }

// push makes slot s evictable as of instant at.
func (l *slots) push(s int32, at int64) {
	v := l.v
	l.n++
	if l.groupFirst < 0 || at != l.groupAt {
		l.insertAfter(s, l.tail)
		l.groupFirst, l.groupAt = s, at
		return
	}
	// Same instant: after the last slot of the group with a depth ≥ depth (equal depths keep
	// push order).
	depth := v[s].depth()
	boundary := v[l.groupFirst].prev
	p := l.tail
	for p != boundary && v[p].depth() < depth {
		p = v[p].prev
	}
	l.insertAfter(s, p)
	if p == boundary {
		l.groupFirst = s
	}
}

// insertAfter links s after p (p == -1: at the head).
func (l *slots) insertAfter(s, p int32) {
	v := l.v
	var nx int32
	if p < 0 {
		nx = l.head
		l.head = s
	} else {
		nx = v[p].next
		v[p].next = s
	}
	v[s].prev, v[s].next = p, nx
	if nx < 0 {
		l.tail = s
	} else {
		v[nx].prev = s
	}
}

// remove takes s out of the eviction list (it is in use or pinned again).
func (l *slots) remove(s int32) {
	v := l.v
	p, nx := v[s].prev, v[s].next
	if p < 0 {
		l.head = nx
	} else {
		v[p].next = nx
	}
	if nx < 0 {
		l.tail = p
	} else {
		v[nx].prev = p
	}
	if s == l.groupFirst {
		l.groupFirst = nx // the group is the tail: its next member, or none
	}
	v[s].prev, v[s].next = notListed, -1
	l.n--
}

// pop removes and returns the next slot to evict; the list must not be empty.
func (l *slots) pop() int32 {
	return l.popFirst(nil)
}

// popFirst removes and returns the first slot in eviction order that skip does not reject,
// or -1.
func (l *slots) popFirst(skip func(s int32) bool) int32 {
	if l.n == 0 {
		return -1
	}
	for s := l.head; s >= 0; s = l.v[s].next {
		if skip != nil && skip(s) {
			continue
		}
		l.remove(s)
		return s
	}
	return -1
}
