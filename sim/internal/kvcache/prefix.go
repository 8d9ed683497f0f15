package kvcache

// Prefix returns a worker's k1 (the run of its G1, g1, from block 0) and k2 (the run of
// resident entries of its G2, g2 (nil: none), that continues it), both stopping at limit, with
// one probe per block. It keeps the k1 run's G1 slots for g1's Fits and Acquire. The tiers'
// memos answer most probes (memo.go); the others ask the index.
func Prefix(g1 *GPU, g2 *Host, keys []uint64, limit int) (k1, k2 int) {
	g1.run = g1.run[:0]
	x := g1.byKey.x
	if x == nil {
		return prefixDetached(g1, g2, keys, limit)
	}
	for j := 0; j < limit; j++ {
		k := keys[j]
		// The tiers' memos first (memo.go): a confirmed guess is the index's answer.
		if k2 == 0 {
			if s := g1.memo.lookup(k, &g1.sl); s >= 0 {
				g1.run = append(g1.run, s)
				k1++
				continue
			}
		} else if g2.memo.lookup(k, &g2.sl) >= 0 {
			k2++
			continue
		}
		r := x.get(k, g1.worker)
		if k2 == 0 {
			if s := r.slot(G1); s >= 0 {
				g1.memo.note(k, s)
				g1.run = append(g1.run, s)
				k1++
				continue
			}
		}
		if !r.member(G2) {
			break
		}
		g2.memo.note(k, r.slot(G2))
		k2++
	}
	return k1, k2
}

// prefixDetached is Prefix for a detached (draining) worker, over its own table.
func prefixDetached(g1 *GPU, g2 *Host, keys []uint64, limit int) (k1, k2 int) {
	t := g1.byKey.t
	if t == nil {
		return 0, 0
	}
	for k1 < limit {
		i := t.find(keys[k1])
		if i < 0 {
			return k1, 0
		}
		if s := t.e[i].slot[G1]; s >= 0 {
			g1.run = append(g1.run, s)
			k1++
			continue
		}
		if g2 == nil {
			return k1, 0
		}
		for {
			s := t.e[i].slot[G2]
			if s < 0 || !g2.sl.v[s].ready() {
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

// Detach takes a worker that starts to drain out of the fleet's index: its keys move to a table
// of its own, which its G1, g1, and G2, g2 (nil: none), then use, so it is never a routing
// candidate or a hint source again. The keys are found from the slots: keyed G1 slots, and G2
// slots that the index names for their key (pending or resident).
func Detach(g1 *GPU, g2 *Host) {
	x, w := g1.byKey.x, g1.worker
	if x == nil {
		return
	}
	t := x.takeTable()
	s1 := g1.sl.v
	for s := range s1 {
		if s1[s].ready() {
			t.e[t.findOrInsert(s1[s].key)].slot[G1] = int32(s)
		}
	}
	if g2 != nil {
		s2 := g2.sl.v
		for s := range s2 {
			k := s2[s].key
			if x.get(k, w).slot(G2) == int32(s) {
				t.e[t.findOrInsert(k)].slot[G2] = int32(s)
			}
		}
	}
	for _, en := range t.e {
		if !en.empty() {
			x.drop(en.key, w)
		}
	}
	g1.byKey.x, g1.byKey.t = nil, t
	if g2 != nil {
		g2.byKey.x, g2.byKey.t = nil, t
	}
}

// Detached reports whether the worker of g1 has left the fleet's index.
func (c *GPU) Detached() bool { return c.byKey.x == nil }

// Attach puts a detached worker back into the fleet's index x (an autoscaler made a draining
// worker active again, docs/model.md#model-3 reuse_draining): every key of its own table is recorded in
// the index with its G1 slot and its G2 slot (pending or resident), so it is a routing candidate
// and a hint source again with the caches it kept.
func Attach(g1 *GPU, g2 *Host, x *Index) {
	t, w := g1.byKey.t, g1.worker
	if g1.byKey.x != nil {
		return
	}
	if t != nil {
		for _, en := range t.e {
			if en.empty() {
				continue
			}
			if s := en.slot[G1]; s >= 0 {
				x.set(en.key, w, G1, s, false, false)
			}
			if s := en.slot[G2]; s >= 0 && g2 != nil {
				x.set(en.key, w, G2, s, g2.sl.v[s].ready(), false)
			}
		}
	}
	g1.byKey.x, g1.byKey.t = x, nil
	if g2 != nil {
		g2.byKey.x, g2.byKey.t = x, nil
	}
	if t != nil {
		x.giveTable(t)
	}
}
