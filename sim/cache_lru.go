package sim

import "sort"

// lru orders evictable slots of one cache tier by SPEC §3.14 "Recency and eviction": the instant
// a slot became evictable, then the deeper block position first, then the order in which slots
// became evictable.
//
// Instants only grow, so the order is a queue: records are appended, and only the group of the
// current instant needs sorting (by depth, descending), which an insertion keeps. Removing a slot
// from the middle marks its record stale (generation counter); stale records are skipped and
// compacted away. Push, remove and pop are O(1) amortised when a request releases its blocks
// deepest first.
type lru struct {
	q          []lruRecord
	head       int
	gen        []uint32 // per slot
	in         []bool   // per slot: evictable
	n          int
	groupStart int   // first record of the current instant's group
	groupAt    int64 // the current instant
}

// lruRecord is 12 bytes: the instant is implicit in the queue position (records of earlier
// instants come first; groupAt names the instant of the group at the tail).
type lruRecord struct {
	slot  int32
	depth int32
	gen   uint32
}

func (l *lru) grow(slots int) {
	for len(l.in) < slots {
		l.gen = append(l.gen, 0)
		l.in = append(l.in, false)
	}
}

func (l *lru) len() int { return l.n }

func (l *lru) contains(slot int32) bool { return l.in[slot] }

func (l *lru) stale(r *lruRecord) bool { return !l.in[r.slot] || l.gen[r.slot] != r.gen }

// push makes slot evictable as of instant at.
func (l *lru) push(slot int32, at int64, depth int32) {
	l.gen[slot]++
	l.in[slot] = true
	l.n++
	rec := lruRecord{slot: slot, depth: depth, gen: l.gen[slot]}
	if l.head == len(l.q) || at != l.groupAt {
		l.groupStart, l.groupAt = len(l.q), at
		l.q = append(l.q, rec)
		return
	}
	lo := max(l.groupStart, l.head)
	g := l.q[lo:]
	// First record of the group with a smaller depth; equal depths keep push order.
	i := lo + sort.Search(len(g), func(i int) bool { return g[i].depth < depth })
	l.q = append(l.q, lruRecord{})
	copy(l.q[i+1:], l.q[i:])
	l.q[i] = rec
}

// remove takes slot out of the evictable set (it is in use or pinned again).
func (l *lru) remove(slot int32) {
	l.in[slot] = false
	l.gen[slot]++
	l.n--
	l.maybeCompact()
}

// pop removes and returns the next slot to evict; the set must not be empty.
func (l *lru) pop() int32 {
	return l.popFirst(nil)
}

// popFirst removes and returns the first slot in eviction order that skip does not reject,
// or -1.
func (l *lru) popFirst(skip func(slot int32) bool) int32 {
	for i := l.head; i < len(l.q); i++ {
		r := &l.q[i]
		if l.stale(r) {
			if i == l.head {
				l.head++
			}
			continue
		}
		if skip != nil && skip(r.slot) {
			continue
		}
		s := r.slot
		if i == l.head {
			l.head++
		}
		l.remove(s)
		return s
	}
	return -1
}

// maybeCompact drops stale records once they outnumber half the live ones, so the queue holds
// at most about 1.5 records per evictable slot (amortised O(1): each compaction is paid for by
// the removals that made the garbage), and gives back memory the queue no longer needs.
func (l *lru) maybeCompact() {
	records := len(l.q) - l.head
	deadHead := l.head > 64 && l.head > len(l.q)/2
	if !deadHead && (records < 64 || records <= l.n+l.n/2+64) {
		return
	}
	out := l.q[:0]
	if cap(l.q) > 4*(l.n+64) {
		out = make([]lruRecord, 0, 2*(l.n+64))
	}
	groupStart, gs := -1, max(l.groupStart, l.head)
	for i := l.head; i < len(l.q); i++ {
		if i == gs {
			groupStart = len(out)
		}
		r := l.q[i]
		if l.stale(&r) {
			continue
		}
		out = append(out, r)
	}
	if groupStart < 0 {
		groupStart = len(out) // the group's records were all popped or stale
	}
	l.q, l.head, l.groupStart = out, 0, groupStart
}
