package sim

// lru orders evictable slots of one cache tier by SPEC §3.14 "Recency and eviction": the instant
// a slot became evictable, then the deeper block position first, then the order in which slots
// became evictable.
//
// Instants only grow, so the order is a list: a slot is appended, and only the group of slots
// that became evictable at the current instant (the tail of the list) needs ordering by depth,
// which an insertion walking back from the tail keeps. It is an intrusive doubly linked list
// over slot numbers: removal is O(1) and leaves nothing behind; a push is O(1) when a request
// releases its blocks deepest first.
type lru struct {
	prev, next []int32 // per slot; -1: none
	dep        []int32 // per slot: block position in its prompt
	in         []bool  // per slot: evictable
	head, tail int32
	n          int
	groupFirst int32 // first slot of the tail group, which became evictable at groupAt; -1: none
	groupAt    int64
}

func (l *lru) grow(slots int) {
	if len(l.in) == 0 {
		l.head, l.tail, l.groupFirst = -1, -1, -1
	}
	for len(l.in) < slots {
		l.prev = append(l.prev, -1)
		l.next = append(l.next, -1)
		l.dep = append(l.dep, 0)
		l.in = append(l.in, false)
	}
}

func (l *lru) len() int { return l.n }

func (l *lru) contains(slot int32) bool { return l.in[slot] }

// push makes slot evictable as of instant at.
func (l *lru) push(slot int32, at int64, depth int32) {
	l.in[slot] = true
	l.dep[slot] = depth
	l.n++
	if l.groupFirst < 0 || at != l.groupAt {
		l.insertAfter(slot, l.tail)
		l.groupFirst, l.groupAt = slot, at
		return
	}
	// Same instant: after the last slot of the group with a depth ≥ depth (equal depths keep
	// push order).
	boundary := l.prev[l.groupFirst]
	p := l.tail
	for p != boundary && l.dep[p] < depth {
		p = l.prev[p]
	}
	l.insertAfter(slot, p)
	if p == boundary {
		l.groupFirst = slot
	}
}

// insertAfter links slot after p (p == -1: at the head).
func (l *lru) insertAfter(slot, p int32) {
	var nx int32
	if p < 0 {
		nx = l.head
		l.head = slot
	} else {
		nx = l.next[p]
		l.next[p] = slot
	}
	l.prev[slot], l.next[slot] = p, nx
	if nx < 0 {
		l.tail = slot
	} else {
		l.prev[nx] = slot
	}
}

// remove takes slot out of the evictable set (it is in use or pinned again).
func (l *lru) remove(slot int32) {
	p, nx := l.prev[slot], l.next[slot]
	if p < 0 {
		l.head = nx
	} else {
		l.next[p] = nx
	}
	if nx < 0 {
		l.tail = p
	} else {
		l.prev[nx] = p
	}
	if slot == l.groupFirst {
		l.groupFirst = nx // the group is the tail: its next member, or none
	}
	l.prev[slot], l.next[slot] = -1, -1
	l.in[slot] = false
	l.n--
}

// pop removes and returns the next slot to evict; the set must not be empty.
func (l *lru) pop() int32 {
	return l.popFirst(nil)
}

// popFirst removes and returns the first slot in eviction order that skip does not reject,
// or -1.
func (l *lru) popFirst(skip func(slot int32) bool) int32 {
	for s := l.head; s >= 0; s = l.next[s] {
		if skip != nil && skip(s) {
			continue
		}
		l.remove(s)
		return s
	}
	return -1
}
