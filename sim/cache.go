package sim

// gpuCache is a worker's G1: slots hold KV blocks; keyed slots are shared by prefix, and keyed
// slots no request holds are cached and evictable.
type gpuCache struct {
	capacity int
	worker   int32
	byKey    keyTable
	sl       slots   // uses: requests holding the slot; ready: keyed
	free     []int32 // released or never-used slots below len(sl.v)
	inUse    *int32  // distinct slots held by requests, kept where the router reads it
}

func newGPUCache(capacity int, worker int32, index *blockIndex, inUse *int32) *gpuCache {
	return &gpuCache{capacity: capacity, worker: worker, inUse: inUse,
		byKey: keyTable{w: worker, tier: tierG1, x: index}}
}

// freeCount is the number of slots holding nothing.
func (c *gpuCache) freeCount() int { return c.capacity - len(c.sl.v) + len(c.free) }

// used is the number of distinct slots held by requests.
func (c *gpuCache) used() int { return int(*c.inUse) }

// keyedCount is the number of keyed slots, cached or in use.
func (c *gpuCache) keyedCount() int { return c.byKey.len() }

// run counts the leading keys present (cached or in use), stopping at limit.
func (c *gpuCache) run(keys []uint64, limit int) int {
	n := 0
	for n < limit && n < len(keys) {
		if !c.byKey.has(keys[n]) {
			break
		}
		n++
	}
	return n
}

// fits reports whether n new slots can be had while keeping the slots of the k1 run, which
// the caller is about to share.
func (c *gpuCache) fits(k1Slots []int32, n int) bool {
	avail := c.freeCount() + c.sl.evictableCount()
	for _, s := range k1Slots {
		if c.sl.v[s].uses == 0 {
			avail--
		}
	}
	return avail >= n
}

// acquire shares the slots of the k1 run and takes n new slots, evicting cached slots least
// recent first. The caller has checked fits.
func (c *gpuCache) acquire(dst []int32, k1Slots []int32, n int) []int32 {
	for _, s := range k1Slots {
		if c.sl.v[s].uses == 0 {
			c.sl.remove(s)
			*c.inUse++
		}
		c.sl.v[s].uses++
		dst = append(dst, s)
	}
	c.touchVictims(n - c.freeCount())
	for i := 0; i < n; i++ {
		dst = append(dst, c.take())
	}
	return dst
}

// touchVictims touches the entries of the next n slots to evict (see blockIndex.touch).
func (c *gpuCache) touchVictims(n int) { touchVictims(&c.sl, &c.byKey, n) }

func touchVictims(l *slots, keys *keyTable, n int) {
	if n <= 0 || l.n == 0 {
		return
	}
	for s := l.head; s >= 0 && n > 0; s = l.v[s].next {
		keys.touch(l.v[s].key)
		n--
	}
}

// take returns one unkeyed slot with a reference, or -1 when nothing is free or evictable.
func (c *gpuCache) take() int32 {
	var s int32
	switch {
	case len(c.free) > 0:
		s = c.free[len(c.free)-1]
		c.free = c.free[:len(c.free)-1]
	case len(c.sl.v) < c.capacity:
		s = c.sl.add(c.capacity)
	case c.sl.evictableCount() > 0:
		s = c.sl.pop()
		c.unkey(s)
	default:
		return -1
	}
	c.sl.v[s].uses = 1
	*c.inUse++
	return s
}

func (c *gpuCache) unkey(s int32) {
	c.byKey.del(c.sl.v[s].key)
	c.sl.v[s].setReady(false)
}

// setKey keys a computed block; a key already present leaves the copy unkeyed (SPEC §3.14).
func (c *gpuCache) setKey(s int32, key uint64, depth int) {
	sl := &c.sl.v[s]
	if sl.ready() {
		return
	}
	if !c.byKey.putNew(key, s) {
		return
	}
	sl.set(key, depth, true)
}

// release drops one reference; a keyed slot becomes cached and evictable as of now.
func (c *gpuCache) release(s int32, now int64) {
	sl := &c.sl.v[s]
	sl.uses--
	if sl.uses > 0 {
		return
	}
	*c.inUse--
	if sl.ready() {
		c.sl.push(s, now)
		return
	}
	c.free = append(c.free, s)
}

// clear drops everything (the worker is removed; it has left the index when it started to
// drain).
func (c *gpuCache) clear() {
	*c.inUse = 0
	*c = gpuCache{capacity: c.capacity, worker: c.worker, inUse: c.inUse}
}

// hostCache is a worker's G2: entries are pending (a transfer into G2 is in flight) or resident,
// with a pin count; unpinned resident entries are evictable.
type hostCache struct {
	capacity int
	worker   int32
	byKey    keyTable
	sl       slots // uses: pins; ready: resident
	free     []int32
	// residentCount is the number of resident entries.
	residentCount int
}

func newHostCache(capacity int, worker int32, index *blockIndex) *hostCache {
	return &hostCache{capacity: capacity, worker: worker,
		byKey: keyTable{w: worker, tier: tierG2, x: index}}
}

func (c *hostCache) held() int { return len(c.sl.v) - len(c.free) }

// holds reports whether key is held, pending or resident.
func (c *hostCache) holds(key uint64) bool { return c.byKey.has(key) }

// resident reports whether slot s is resident.
func (c *hostCache) resident(s int32) bool { return c.sl.v[s].ready() }

// residentSlot returns the slot of key if it is resident.
func (c *hostCache) residentSlot(key uint64) (int32, bool) {
	s, ok := c.byKey.get(key)
	if !ok || !c.sl.v[s].ready() {
		return -1, false
	}
	return s, true
}

// run counts resident keys from keys[from] on, stopping at limit.
func (c *hostCache) run(keys []uint64, from, limit int) int {
	n := from
	for n < limit && n < len(keys) {
		if _, ok := c.residentSlot(keys[n]); !ok {
			break
		}
		n++
	}
	return n - from
}

// reserve makes a pending entry for key, evicting the least recent unpinned resident entry if
// the cache is full. protect, if not nil, names entries that must not be evicted. It returns
// -1 when no room can be made.
func (c *hostCache) reserve(key uint64, depth int, protect func(key uint64, depth int32) bool) int32 {
	var s int32
	switch {
	case len(c.free) > 0:
		s = c.free[len(c.free)-1]
		c.free = c.free[:len(c.free)-1]
	case len(c.sl.v) < c.capacity:
		s = c.sl.add(c.capacity)
	default:
		s = c.evict(protect)
		if s < 0 {
			return -1
		}
	}
	c.byKey.putNew(key, s) // the caller checked key is absent
	sl := &c.sl.v[s]
	sl.set(key, depth, false)
	sl.uses = 0
	return s
}

// touchVictims touches the entries of the entries that reserving n more would evict (see
// blockIndex.touch).
func (c *hostCache) touchVictims(n int) {
	touchVictims(&c.sl, &c.byKey, n-len(c.free)-(c.capacity-len(c.sl.v)))
}

// evict removes the least recent evictable entry that protect allows and returns its slot.
func (c *hostCache) evict(protect func(key uint64, depth int32) bool) int32 {
	var skip func(int32) bool
	if protect != nil {
		skip = func(s int32) bool { return protect(c.sl.v[s].key, c.sl.v[s].depth()) }
	}
	victim := c.sl.popFirst(skip)
	if victim >= 0 {
		c.byKey.del(c.sl.v[victim].key)
		c.sl.v[victim].setReady(false)
		c.residentCount--
	}
	return victim
}

// touchIndex touches the entries of slots about to become resident (see blockIndex.touch).
func (c *hostCache) touchIndex(slots []int32) {
	for _, s := range slots {
		c.byKey.touch(c.sl.v[s].key)
	}
}

// makeResident completes a transfer into G2.
func (c *hostCache) makeResident(s int32, now int64) {
	sl := &c.sl.v[s]
	sl.setReady(true)
	c.residentCount++
	c.byKey.setResident(sl.key, s)
	if sl.uses == 0 {
		c.sl.push(s, now)
	}
}

func (c *hostCache) pin(s int32) {
	sl := &c.sl.v[s]
	if sl.uses == 0 && sl.ready() {
		c.sl.remove(s)
	}
	sl.uses++
}

func (c *hostCache) unpin(s int32, now int64) {
	sl := &c.sl.v[s]
	sl.uses--
	if sl.uses == 0 && sl.ready() {
		c.sl.push(s, now)
	}
}

// drop frees a pending entry whose transfer was aborted.
func (c *hostCache) drop(s int32) {
	c.byKey.del(c.sl.v[s].key)
	c.free = append(c.free, s)
}

func (c *hostCache) clear() {
	*c = hostCache{capacity: c.capacity, worker: c.worker}
}

// prefix returns a worker's k1 (the G1 run from block 0) and k2 (the resident G2 run that
// continues it), both stopping at limit, with one probe per block; the k1 run's G1 slots are
// left in w.k1Slots for fits and acquire. It touches the entries of the keys a few blocks
// ahead, so the misses of a long run overlap.
func (w *worker) prefix(keys []uint64, limit int) (k1, k2 int) {
	w.k1Slots = w.k1Slots[:0]
	x := w.g1.byKey.x
	if x == nil {
		return w.prefixDrained(keys, limit)
	}
	var sink uint64
	defer func() { x.sink ^= sink }()
	const ahead = 8
	for j := 0; j < min(ahead, limit); j++ {
		sink ^= x.touch(keys[j])
	}
	for j := 0; j < limit; j++ {
		if j+ahead < limit {
			sink ^= x.touch(keys[j+ahead])
		}
		r := x.get(keys[j], w.id)
		if k2 == 0 {
			if s := r.slot(tierG1); s >= 0 {
				w.k1Slots = append(w.k1Slots, s)
				k1++
				continue
			}
		}
		if !r.member(tierG2) {
			break
		}
		k2++
	}
	return k1, k2
}

// prefixDrained is prefix for a draining worker, over its own table.
func (w *worker) prefixDrained(keys []uint64, limit int) (k1, k2 int) {
	t := w.g1.byKey.t
	if t == nil {
		return 0, 0
	}
	for k1 < limit {
		i := t.find(keys[k1])
		if i < 0 {
			return k1, 0
		}
		if s := t.e[i].slot[tierG1]; s >= 0 {
			w.k1Slots = append(w.k1Slots, s)
			k1++
			continue
		}
		if w.g2 == nil {
			return k1, 0
		}
		for {
			s := t.e[i].slot[tierG2]
			if s < 0 || !w.g2.sl.v[s].ready() {
				return k1, k2
			}
			k2++
			if k1+k2 >= limit {
				return k1, k2
			}
			if i = t.find(keys[k1+k2]); i < 0 {
				return k1, k2
			}
		}
	}
	return k1, 0
}
