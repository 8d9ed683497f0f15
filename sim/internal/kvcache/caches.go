package kvcache

// GPU is a worker's G1: slots hold KV blocks; keyed slots are shared by prefix, and keyed
// slots no request holds are cached and evictable.
type GPU struct {
	capacity int
	worker   int32
	byKey    keyTable
	sl       slots   // uses: requests holding the slot; ready: keyed
	free     []int32 // released or never-used slots below len(sl.v)
	inUse    *int32  // distinct slots held by requests, kept where the router reads it
	// run holds the G1 slots of the run the last Prefix found, for Fits and Acquire.
	run []int32
	// memo guesses the slots of keys Prefix asks for (memo.go).
	memo memo
}

// NewGPU makes worker's G1 of capacity blocks, keyed in the fleet's index; inUse is where it
// keeps its count of slots held by requests.
func NewGPU(capacity int, worker int32, index *Index, inUse *int32) *GPU {
	return &GPU{capacity: capacity, worker: worker, inUse: inUse,
		byKey: keyTable{w: worker, tier: G1, x: index}}
}

// freeCount is the number of slots holding nothing.
func (c *GPU) freeCount() int { return c.capacity - len(c.sl.v) + len(c.free) }

// Used is the number of distinct slots held by requests.
func (c *GPU) Used() int { return int(*c.inUse) }

// Keyed is the number of keyed slots, cached or in use.
func (c *GPU) Keyed() int { return c.byKey.len() }

// Holds reports whether key is keyed (cached or in use): the memo's confirmed guess, else the
// index.
func (c *GPU) Holds(key uint64) bool { return c.memo.lookup(key, &c.sl) >= 0 || c.byKey.has(key) }

// Run counts the leading keys present (cached or in use), stopping at limit.
func (c *GPU) Run(keys []uint64, limit int) int {
	n := 0
	for n < limit && n < len(keys) {
		if !c.byKey.has(keys[n]) {
			break
		}
		n++
	}
	return n
}

// Fits reports whether n new slots can be had while keeping the slots of the G1 run the last
// Prefix found, which the caller is about to share.
func (c *GPU) Fits(n int) bool {
	avail := c.freeCount() + c.sl.evictableCount()
	for _, s := range c.run {
		if c.sl.v[s].uses == 0 {
			avail--
		}
	}
	return avail >= n
}

// Acquire shares the slots of the G1 run the last Prefix found and takes n new slots, evicting
// cached slots least recent first, appending them all to dst. The caller has checked Fits.
func (c *GPU) Acquire(dst []int32, n int) []int32 {
	for _, s := range c.run {
		if c.sl.v[s].uses == 0 {
			c.sl.remove(s)
			*c.inUse++
		}
		c.sl.v[s].uses++
		dst = append(dst, s)
	}
	prefetchVictims(&c.sl, &c.byKey, n-c.freeCount())
	for i := 0; i < n; i++ {
		dst = append(dst, c.Take())
	}
	return dst
}

// prefetchVictims touches the entries of the next n slots to evict (see Index.touch).
func prefetchVictims(l *slots, keys *keyTable, n int) {
	if n <= 0 || l.n == 0 {
		return
	}
	for s := l.head; s >= 0 && n > 0; s = l.v[s].next {
		keys.touch(l.v[s].key)
		n--
	}
}

// Take returns one unkeyed slot held once, or -1 when nothing is free or evictable.
func (c *GPU) Take() int32 {
	var s int32
	switch {
	case len(c.free) > 0:
		s = c.free[len(c.free)-1]
		c.free = c.free[:len(c.free)-1]
	case len(c.sl.v) < c.capacity:
		s = c.sl.add(c.capacity)
	case c.sl.evictableCount() > 0:
		s = c.sl.pop()
		c.byKey.del(c.sl.v[s].key)
		c.sl.v[s].setReady(false)
	default:
		return -1
	}
	c.sl.v[s].uses = 1
	*c.inUse++
	return s
}

// Key keys a computed block in slot s; a key already present leaves the copy unkeyed (
// docs/model.md#precise-rules).
func (c *GPU) Key(s int32, key uint64, depth int) {
	sl := &c.sl.v[s]
	if sl.ready() {
		return
	}
	if !c.byKey.putNew(key, s) {
		return
	}
	sl.set(key, depth, true)
	c.memo.note(key, s)
}

// KeyThrough keys a computed block in slot s of g1 as Key does, and reports whether g2 (nil:
// none), the same worker's G2, holds key (pending or resident), which write-through needs next:
// for a worker in the fleet's index, the one lookup that keys the block also tells.
func KeyThrough(g1 *GPU, g2 *Host, s int32, key uint64, depth int) (g2Holds bool) {
	sl := &g1.sl.v[s]
	v := &g1.byKey
	if sl.ready() || v.x == nil {
		g1.Key(s, key, depth)
		return g2 != nil && g2.Holds(key)
	}
	old := v.putNewIndexed(key, s)
	if old.slot(G1) < 0 {
		sl.set(key, depth, true)
		g1.memo.note(key, s)
	}
	return g2 != nil && old.slot(G2) >= 0
}

// Prefetch loads the lines a lookup of key will probe, so that the misses of several keys
// about to be keyed overlap.
func (c *GPU) Prefetch(key uint64) { c.byKey.touch(key) }

// Release drops one hold on slot s; a keyed slot becomes cached and evictable as of now.
func (c *GPU) Release(s int32, now int64) {
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

// Clear drops everything (the worker is removed; it has left the index when it was detached).
func (c *GPU) Clear() {
	*c.inUse = 0
	*c = GPU{capacity: c.capacity, worker: c.worker, inUse: c.inUse}
}

// Host is a worker's G2: entries are pending (a transfer into G2 is in flight) or resident,
// with a pin count; unpinned resident entries are evictable.
type Host struct {
	capacity int
	worker   int32
	byKey    keyTable
	sl       slots // uses: pins; ready: resident
	free     []int32
	// residentCount is the number of resident entries.
	residentCount int
	// memo guesses the resident slots of keys Prefix asks for (memo.go).
	memo memo
}

// NewHost makes worker's G2 of capacity blocks, keyed in the fleet's index.
func NewHost(capacity int, worker int32, index *Index) *Host {
	return &Host{capacity: capacity, worker: worker,
		byKey: keyTable{w: worker, tier: G2, x: index}}
}

// ResidentCount is the number of resident entries.
func (c *Host) ResidentCount() int { return c.residentCount }

// Holds reports whether key is held, pending or resident.
func (c *Host) Holds(key uint64) bool { return c.byKey.has(key) }

// Resident reports whether slot s is resident.
func (c *Host) Resident(s int32) bool { return c.sl.v[s].ready() }

// ResidentSlot returns the slot of key if it is resident.
func (c *Host) ResidentSlot(key uint64) (int32, bool) {
	if s := c.memo.lookup(key, &c.sl); s >= 0 {
		return s, true
	}
	if x := c.byKey.x; x != nil { // active: the index record says whether it is resident
		if r := x.get(key, c.worker); r.member(G2) {
			return r.slot(G2), true
		}
		return -1, false
	}
	s, ok := c.byKey.get(key)
	if !ok || !c.sl.v[s].ready() {
		return -1, false
	}
	return s, true
}

// Run counts resident keys from keys[from] on, stopping at limit.
func (c *Host) Run(keys []uint64, from, limit int) int {
	n := from
	for n < limit && n < len(keys) {
		if _, ok := c.ResidentSlot(keys[n]); !ok {
			break
		}
		n++
	}
	return n - from
}

// Reserve makes a pending entry for key, which the caller has checked is absent, evicting the
// least recent unpinned resident entry if the cache is full. protect, if not nil, names
// entries that must not be evicted. It returns -1 when no room can be made.
func (c *Host) Reserve(key uint64, depth int, protect func(key uint64, depth int32) bool) int32 {
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
	c.byKey.putNew(key, s)
	sl := &c.sl.v[s]
	sl.set(key, depth, false)
	sl.uses = 0
	return s
}

// PrefetchVictims touches the entries of the entries that reserving n more would evict (see
// Index.touch).
func (c *Host) PrefetchVictims(n int) {
	prefetchVictims(&c.sl, &c.byKey, n-len(c.free)-(c.capacity-len(c.sl.v)))
}

// evict removes the least recent evictable entry that protect allows and returns its slot.
func (c *Host) evict(protect func(key uint64, depth int32) bool) int32 {
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

// PrefetchSlots touches the entries of slots about to become resident (see Index.touch).
func (c *Host) PrefetchSlots(slots []int32) {
	for _, s := range slots {
		c.byKey.touch(c.sl.v[s].key)
	}
}

// MakeResident completes a transfer into G2.
func (c *Host) MakeResident(s int32, now int64) {
	sl := &c.sl.v[s]
	sl.setReady(true)
	c.residentCount++
	c.byKey.setResident(sl.key, s)
	c.memo.note(sl.key, s)
	if sl.uses == 0 {
		c.sl.push(s, now)
	}
}

// Pin keeps slot s from eviction until a matching Unpin.
func (c *Host) Pin(s int32) {
	sl := &c.sl.v[s]
	if sl.uses == 0 && sl.ready() {
		c.sl.remove(s)
	}
	sl.uses++
}

// Unpin drops one pin; a resident entry with none left becomes evictable as of now.
func (c *Host) Unpin(s int32, now int64) {
	sl := &c.sl.v[s]
	sl.uses--
	if sl.uses == 0 && sl.ready() {
		c.sl.push(s, now)
	}
}

// Drop frees a pending entry whose transfer was aborted.
func (c *Host) Drop(s int32) {
	c.byKey.del(c.sl.v[s].key)
	c.free = append(c.free, s)
}

// Clear drops everything (the worker is removed).
func (c *Host) Clear() {
	*c = Host{capacity: c.capacity, worker: c.worker}
}

// Rebind moves the count of slots held by requests to inUse (which gets the current count):
// the simulator keeps the counts of all workers in one array and reallocates it when an
// autoscaler starts workers.
func (c *GPU) Rebind(inUse *int32) {
	*inUse = *c.inUse
	c.inUse = inUse
}

// Retire is Clear for a worker whose slot a later worker may take (an autoscaler's): its slot
// array and free list keep their room, empty, for Reuse, and the table of its keys since it
// detached goes back to the index x for the next worker that detaches.
func (c *GPU) Retire(x *Index) {
	if t := c.byKey.t; t != nil {
		x.giveTable(t)
	}
	*c.inUse = 0
	v, free, run := c.sl.v[:0], c.free[:0], c.run[:0]
	*c = GPU{capacity: c.capacity, worker: c.worker, inUse: c.inUse, sl: slots{v: v}, free: free, run: run}
}

// Reuse makes a retired G1 the empty G1 of worker, as NewGPU would, keeping its arrays' room.
func (c *GPU) Reuse(worker int32, index *Index, inUse *int32) {
	*inUse = 0
	v, free, run := c.sl.v[:0], c.free[:0], c.run[:0]
	*c = GPU{capacity: c.capacity, worker: worker, inUse: inUse, sl: slots{v: v}, free: free, run: run,
		byKey: keyTable{w: worker, tier: G1, x: index}}
}

// Retire is Clear keeping the slot array's and the free list's room, for Reuse.
func (c *Host) Retire() {
	v, free := c.sl.v[:0], c.free[:0]
	*c = Host{capacity: c.capacity, worker: c.worker, sl: slots{v: v}, free: free}
}

// Reuse makes a retired G2 the empty G2 of worker, as NewHost would, keeping its arrays' room.
func (c *Host) Reuse(worker int32, index *Index) {
	v, free := c.sl.v[:0], c.free[:0]
	*c = Host{capacity: c.capacity, worker: worker, sl: slots{v: v}, free: free,
		byKey: keyTable{w: worker, tier: G2, x: index}}
}
