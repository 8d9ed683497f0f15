package kvcache

import (
	"fmt"
	"slices"
)

// The checks below state the caches' invariants for the simulator's invariant tests, which
// know from the model how many holds and pins each slot must have.

// Check checks G1 against holds (the number of requests the model says hold each slot): the
// eviction list, the hold counts, the used counter and the conservation of slots.
func (c *GPU) Check(holds func(s int32) int32) error {
	if err := c.sl.check(); err != nil {
		return fmt.Errorf("G1 of worker %d: %w", c.worker, err)
	}
	inUse, cached, free := 0, 0, 0
	for s := range c.sl.v {
		sl := &c.sl.v[s]
		if want := holds(int32(s)); sl.uses != want {
			return fmt.Errorf("G1 of worker %d: slot %d is held %d times, the model holds it %d times", c.worker, s, sl.uses, want)
		}
		switch {
		case sl.uses > 0:
			inUse++
		case sl.ready():
			cached++
			if !sl.evictable() {
				return fmt.Errorf("G1 of worker %d: cached slot %d is not evictable", c.worker, s)
			}
		default:
			free++
		}
	}
	switch {
	case cached != c.sl.evictableCount():
		return fmt.Errorf("G1 of worker %d: %d cached slots, %d evictable", c.worker, cached, c.sl.evictableCount())
	case inUse != c.Used():
		return fmt.Errorf("G1 of worker %d: %d slots in use, the counter says %d", c.worker, inUse, c.Used())
	case free != len(c.free):
		return fmt.Errorf("G1 of worker %d: %d free slots, %d in the free list", c.worker, free, len(c.free))
	case c.capacity != inUse+cached+c.freeCount():
		return fmt.Errorf("G1 of worker %d: %d in use + %d cached + %d free is not the capacity %d", c.worker, inUse, cached, c.freeCount(), c.capacity)
	}
	return nil
}

// Check checks G2 against pins (the pins the model says each slot has) and pending (whether
// the model has a transfer in flight into the slot): the eviction list, keys, pins, and the
// resident count.
func (c *Host) Check(pins func(s int32) int32, pending func(s int32) bool) error {
	if err := c.sl.check(); err != nil {
		return fmt.Errorf("G2 of worker %d: %w", c.worker, err)
	}
	held := c.HeldSlots()
	if len(held) > c.capacity || len(held) != c.byKey.len() {
		return fmt.Errorf("G2 of worker %d: %d entries held, %d keyed, capacity %d", c.worker, len(held), c.byKey.len(), c.capacity)
	}
	res := 0
	for _, s := range held {
		sl := &c.sl.v[s]
		if got, ok := c.byKey.get(sl.key); !ok || got != s {
			return fmt.Errorf("G2 of worker %d: slot %d: its key finds slot %d (found: %v)", c.worker, s, got, ok)
		}
		if want := pins(s); sl.uses != want {
			return fmt.Errorf("G2 of worker %d: slot %d has %d pins, the model pins it %d times", c.worker, s, sl.uses, want)
		}
		if sl.ready() {
			res++
			if (sl.uses == 0) != sl.evictable() {
				return fmt.Errorf("G2 of worker %d: resident slot %d with %d pins, evictable %v", c.worker, s, sl.uses, sl.evictable())
			}
		} else if !pending(s) {
			return fmt.Errorf("G2 of worker %d: pending entry %d without a transfer", c.worker, s)
		}
	}
	if res != c.residentCount {
		return fmt.Errorf("G2 of worker %d: %d resident entries, the count says %d", c.worker, res, c.residentCount)
	}
	return nil
}

// HeldSlots lists the held slots (pending or resident): those not free.
func (c *Host) HeldSlots() []int32 {
	free := map[int32]bool{}
	for _, s := range c.free {
		free[s] = true
	}
	var held []int32
	for s := range c.sl.v {
		if !free[int32(s)] {
			held = append(held, int32(s))
		}
	}
	return held
}

// Pins returns the pins of slot s.
func (c *Host) Pins(s int32) int32 { return c.sl.v[s].uses }

// check checks the eviction list: links agree both ways, it holds exactly the slots flagged
// evictable, and they are in eviction order by depth within an instant's group (the instants
// themselves are not stored).
func (l *slots) check() error {
	if len(l.v) == 0 {
		if l.n != 0 {
			return fmt.Errorf("eviction list of %d without slots", l.n)
		}
		return nil
	}
	n, prev := 0, int32(-1)
	for s := l.head; s >= 0; s = l.v[s].next {
		switch {
		case l.v[s].prev != prev:
			return fmt.Errorf("eviction list: slot %d links back to %d, not %d", s, l.v[s].prev, prev)
		case !l.v[s].evictable():
			return fmt.Errorf("eviction list: slot %d in the list but not evictable", s)
		}
		prev = s
		n++
		if n > len(l.v) {
			return fmt.Errorf("eviction list has a cycle")
		}
	}
	if prev != l.tail || n != l.n {
		return fmt.Errorf("eviction list: tail %d after walking to %d; %d slots, counted %d", l.tail, prev, n, l.n)
	}
	flagged := 0
	for i := range l.v {
		if l.v[i].evictable() {
			flagged++
		}
	}
	if flagged != n {
		return fmt.Errorf("eviction list: %d slots flagged evictable, %d listed", flagged, n)
	}
	if l.groupFirst >= 0 {
		for s := l.groupFirst; l.v[s].next >= 0; s = l.v[s].next {
			if l.v[s].depth() < l.v[l.v[s].next].depth() {
				return fmt.Errorf("eviction list: the tail group is not deepest first at slot %d", s)
			}
		}
	}
	return nil
}

// Check checks the index against the caches of the fleet's workers (workers(w) gives worker
// w's; active says whether w is in the index). The index holds exactly the active workers'
// keyed G1 slots and held G2 entries (pending or resident, with the right flag), and each key's
// list is sorted, of two or more, with member counts and fingerprints that match.
func (x *Index) Check(workers int, caches func(w int32) (g1 *GPU, g2 *Host, active bool)) error {
	want := 0
	for w := range int32(workers) {
		g1, g2, active := caches(w)
		if !active {
			if g1 != nil && !g1.Detached() {
				return fmt.Errorf("worker %d is not active but still in the index", w)
			}
			continue
		}
		n, err := x.checkWorker(w, g1, g2)
		if err != nil {
			return err
		}
		want += n
	}
	got, entries := 0, 0
	for _, en := range x.e {
		if en.rec == 0 {
			continue
		}
		entries++
		recs, err := x.records(en)
		if err != nil {
			return fmt.Errorf("key %x: %w", en.key, err)
		}
		for _, r := range recs {
			if r.empty() {
				return fmt.Errorf("key %x: a record holding nothing", en.key)
			}
			g1, g2, active := caches(r.worker())
			if !active {
				return fmt.Errorf("key %x: worker %d is in the index but not active", en.key, r.worker())
			}
			if s := r.slot(G1); s >= 0 && (g1.sl.v[s].key != en.key || !g1.sl.v[s].ready()) {
				return fmt.Errorf("key %x: G1 slot %d of worker %d holds another key or none", en.key, s, r.worker())
			}
			if s := r.slot(G2); s >= 0 && (g2.sl.v[s].key != en.key || g2.sl.v[s].ready() != r.resident()) {
				return fmt.Errorf("key %x: G2 slot %d of worker %d holds another key or has the wrong resident flag", en.key, s, r.worker())
			}
			got++
		}
		for tier := range 2 {
			v := x.Holders(tier)
			hs := v.Append(nil, en.key)
			var fp uint64
			for _, h := range hs {
				fp ^= WorkerPrint(h)
				if !x.get(en.key, h).member(tier) {
					return fmt.Errorf("key %x: tier %d lists holder %d without a member record", en.key, tier, h)
				}
			}
			if c, print := v.Count(en.key); c != len(hs) || print != fp {
				return fmt.Errorf("key %x: tier %d counts %d holders (print %x), lists %d (print %x)", en.key, tier, c, print, len(hs), fp)
			}
		}
	}
	if x.n != entries {
		return fmt.Errorf("index counts %d entries, holds %d", x.n, entries)
	}
	if want != got {
		return fmt.Errorf("index holds %d records, the caches %d", got, want)
	}
	return nil
}

// checkWorker checks that active worker w's keyed slots are in the index and returns how many
// keys it holds.
func (x *Index) checkWorker(w int32, g1 *GPU, g2 *Host) (int, error) {
	keys := map[uint64]bool{}
	n1 := 0
	for s := range g1.sl.v {
		if sl := &g1.sl.v[s]; sl.ready() {
			if x.get(sl.key, w).slot(G1) != int32(s) {
				return 0, fmt.Errorf("worker %d G1 slot %d not in the index", w, s)
			}
			keys[sl.key] = true
			n1++
		}
	}
	if n1 != g1.byKey.len() {
		return 0, fmt.Errorf("worker %d: %d keyed G1 slots, counted %d", w, n1, g1.byKey.len())
	}
	if g2 != nil {
		held := g2.HeldSlots()
		for _, s := range held {
			sl := &g2.sl.v[s]
			r := x.get(sl.key, w)
			if r.slot(G2) != s || sl.ready() != r.resident() {
				return 0, fmt.Errorf("worker %d G2 slot %d not in the index, or with the wrong resident flag", w, s)
			}
			keys[sl.key] = true
		}
		if len(held) != g2.byKey.len() {
			return 0, fmt.Errorf("worker %d: %d held G2 entries, counted %d", w, len(held), g2.byKey.len())
		}
	}
	return len(keys), nil
}

// records returns the records of an entry, checking its list.
func (x *Index) records(en holderEntry) ([]holderRec, error) {
	if en.rec&recList == 0 {
		return []holderRec{en.rec}, nil
	}
	if en.rec&recSmall != 0 {
		return x.smallRecords(&x.small[en.rec.list()])
	}
	l := &x.lists[en.rec.list()]
	var recs []holderRec
	l.each(func(h holderRec) { recs = append(recs, h) })
	if int(l.size) != len(recs) {
		return nil, fmt.Errorf("list of size %d holds %d records", l.size, len(recs))
	}
	if l.dense {
		if len(l.recs) != int(x.workers) {
			return nil, fmt.Errorf("dense list of %d places for %d workers", len(l.recs), x.workers)
		}
		for i, h := range l.recs {
			if h != 0 && h.worker() != int32(i) {
				return nil, fmt.Errorf("dense list: record of worker %d at %d", h.worker(), i)
			}
		}
	}
	if len(recs) <= smallAgain {
		return nil, fmt.Errorf("a list of %d holders: it should be small", len(recs))
	}
	var n [2]int32
	var fp [2]uint64
	for i, r := range recs {
		if i > 0 && recs[i-1].worker() >= r.worker() {
			return nil, fmt.Errorf("list not sorted by worker")
		}
		for tier := range 2 {
			if r.member(tier) {
				n[tier]++
				fp[tier] ^= WorkerPrint(r.worker())
			}
		}
	}
	if n != l.n || fp != l.fp {
		return nil, fmt.Errorf("list member counts %v and prints %v, should be %v and %v", l.n, l.fp, n, fp)
	}
	return recs, nil
}

// smallRecords returns the records of a small list, checking it: two or more, sorted by worker,
// the unused places at the end.
func (x *Index) smallRecords(l *smallList) ([]holderRec, error) {
	n := l.size()
	for _, h := range l[n:] {
		if h != 0 {
			return nil, fmt.Errorf("small list with a record after an unused place")
		}
	}
	if n < 2 {
		return nil, fmt.Errorf("a small list of %d holders", n)
	}
	for i := 1; i < n; i++ {
		if l[i-1].worker() >= l[i].worker() {
			return nil, fmt.Errorf("small list not sorted by worker")
		}
	}
	return slices.Clone(l[:n]), nil
}
