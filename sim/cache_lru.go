package sim

// lru orders evictable slots of one cache tier by SPEC §3.14 "Recency and eviction": the instant
// a slot became evictable, then the deeper block position first, then the order in which slots
// became evictable. It is an indexed binary heap over slot numbers.
type lru struct {
	heap []int32
	at   []int64 // per slot: instant it became evictable
	seq  []int64 // per slot: order it became evictable
	dep  []int32 // per slot: block position in its prompt
	pos  []int32 // per slot: index in heap, -1 when not evictable
	next int64
}

func (l *lru) grow(slots int) {
	for len(l.pos) < slots {
		l.at = append(l.at, 0)
		l.seq = append(l.seq, 0)
		l.dep = append(l.dep, 0)
		l.pos = append(l.pos, -1)
	}
}

func (l *lru) len() int { return len(l.heap) }

func (l *lru) contains(slot int32) bool { return l.pos[slot] >= 0 }

func (l *lru) less(a, b int32) bool {
	if l.at[a] != l.at[b] {
		return l.at[a] < l.at[b]
	}
	if l.dep[a] != l.dep[b] {
		return l.dep[a] > l.dep[b]
	}
	return l.seq[a] < l.seq[b]
}

// push makes slot evictable as of instant at.
func (l *lru) push(slot int32, at int64, depth int32) {
	l.at[slot], l.dep[slot], l.seq[slot] = at, depth, l.next
	l.next++
	l.pos[slot] = int32(len(l.heap))
	l.heap = append(l.heap, slot)
	l.up(len(l.heap) - 1)
}

// remove takes slot out of the evictable set (it is in use or pinned again).
func (l *lru) remove(slot int32) {
	i := int(l.pos[slot])
	last := len(l.heap) - 1
	if i != last {
		l.swap(i, last)
	}
	l.heap = l.heap[:last]
	l.pos[slot] = -1
	if i != last {
		if !l.down(i) {
			l.up(i)
		}
	}
}

// peek returns the next slot to evict; the heap must not be empty.
func (l *lru) peek() int32 { return l.heap[0] }

func (l *lru) pop() int32 {
	s := l.heap[0]
	l.remove(s)
	return s
}

func (l *lru) reset() {
	for _, s := range l.heap {
		l.pos[s] = -1
	}
	l.heap = l.heap[:0]
}

func (l *lru) swap(i, j int) {
	l.heap[i], l.heap[j] = l.heap[j], l.heap[i]
	l.pos[l.heap[i]] = int32(i)
	l.pos[l.heap[j]] = int32(j)
}

func (l *lru) up(i int) {
	for i > 0 {
		p := (i - 1) / 2
		if !l.less(l.heap[i], l.heap[p]) {
			return
		}
		l.swap(i, p)
		i = p
	}
}

func (l *lru) down(i int) bool {
	start := i
	n := len(l.heap)
	for {
		c := 2*i + 1
		if c >= n {
			break
		}
		if c+1 < n && l.less(l.heap[c+1], l.heap[c]) {
			c++
		}
		if !l.less(l.heap[c], l.heap[i]) {
			break
		}
		l.swap(i, c)
		i = c
	}
	return i > start
}
