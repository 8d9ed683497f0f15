package kvcache

// The watch: a caller that read the holder sets of some keys, each held by two workers or more,
// learns whether any of them changed since by comparing one number (Holders.Watch, WatchGen).
// The routing walk remembers so how far a system prompt shared by the fleet kept every holder
// (sim/router.go, walkMemo). The index's fields are in index.go (Index.watch, watchN,
// watchGen); set calls noteShared on every change of a key with two holders or more.

// Watch has watcher (0 to Watchers−1) watch keys, each held by two workers or more now, and
// returns its generation: until it changes (WatchGen), no worker joined or left either tier's
// holder set of any of them, so a caller may reuse what it saw of their sets. The generation
// also changes now and then when an unwatched key's does (the filter is indexed by the keys'
// top bits), and the keys a watcher watched before stay watched until the filter fills and is
// cleared.
func (v *Holders) Watch(watcher int, keys []uint64) uint64 {
	x := v.x
	if x.watch == nil || x.watchN+len(keys) > watchMax {
		x.watch = new([watchSize]uint8)
		x.watchN = 0
		for i := range x.watchGen {
			x.watchGen[i]++
		}
	}
	for _, k := range keys {
		p := &x.watch[k>>(64-watchShift)]
		if *p == 0 {
			x.watchN++
		}
		*p |= 1 << watcher
	}
	return x.watchGen[watcher]
}

// WatchGen is watcher's generation (Watch).
func (v *Holders) WatchGen(watcher int) uint64 { return v.x.watchGen[watcher] }

// noteShared counts a change of a watched shared key's holder sets (Watch): w's record going
// from old to nr changes them if w joins or leaves either tier's set.
func (x *Index) noteShared(k uint64, old, nr holderRec) {
	if x.watch == nil {
		return
	}
	if m := x.watch[k>>(64-watchShift)]; m != 0 && (old.member(G1) != nr.member(G1) || old.member(G2) != nr.member(G2)) {
		for i := range x.watchGen {
			if m&(1<<i) != 0 {
				x.watchGen[i]++
			}
		}
	}
}

// The watch filter has watchSize places (8 KiB); past watchMax places set it is cleared, which
// changes every watcher's generation.
const (
	Watchers   = 8
	watchShift = 13
	watchSize  = 1 << watchShift
	watchMax   = watchSize / 32
)
