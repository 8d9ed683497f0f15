package kvcache

// memo is a small direct-mapped cache of a tier's recent key → slot answers, for Prefix (issue
// 35, second round): a session's next turn, and every prompt's shared system prompt, look up
// keys its worker answered a moment before, and the fleet's index answers each after a probe of
// a large table and a search of the key's holders. An entry is only a guess: it counts when the
// slot's own record confirms it (ready, that key), which is exactly when the tier holds the key
// in that slot (a G1 slot is ready while keyed, a G2 entry while resident, and a key is in at
// most one slot of a tier), so the memo can be stale but never wrong, and needs no upkeep
// when slots are evicted, reused or the worker detaches.
type memo [memoSize]memoEntry

type memoEntry struct {
	key  uint64
	slot int32
}

const (
	memoBits = 8
	memoSize = 1 << memoBits
	// MemoBytes is the memory of one tier's memo (memory_estimate.go).
	MemoBytes = memoSize * 16
)

// at is where key's guess is kept (keys are mixed hashes: their top bits are uniform).
func (m *memo) at(key uint64) *memoEntry { return &m[key>>(64-memoBits)] }

// lookup returns the slot of key in l if the memo's guess is confirmed, else -1.
func (m *memo) lookup(key uint64, l *slots) int32 {
	en := m.at(key)
	if en.key != key {
		return -1
	}
	if s := en.slot; int(s) < len(l.v) && l.v[s].key == key && l.v[s].ready() {
		return s
	}
	return -1
}

// note keeps slot s as the guess for key.
func (m *memo) note(key uint64, s int32) { *m.at(key) = memoEntry{key: key, slot: s} }
