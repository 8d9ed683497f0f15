package sim

import "math"

// The routing structure: active workers in increasing order of the part of their cost that does
// not depend on the prompt, so the router (router.go) visits the few that can win instead of
// scanning the fleet.
//
// For kv_aware the key is prefill_load_scale × pending_prefill_blocks + used_blocks, the cost
// of a worker that holds none of the prompt, less prefill_load_scale × prompt_blocks; for
// least_loaded it is the number of requests on the worker. Keys are refreshed lazily: whatever
// changes a worker's pending prefill, used blocks or requests marks it (noteLoad), and the
// marked workers are re-keyed before the next routing decision.

// loadTree is a tournament tree over worker slots (workerslots.go): leaf n+i holds the key of
// the worker in slot i (+Inf when it is not a candidate), and every inner node the smallest
// (key, id) of its subtree, where id is the worker's id in the report (rank).
type loadTree struct {
	n    int
	key  []float64
	id   []int32 // the slot of the node's smallest leaf
	rank []int32 // by slot: the report id of the worker there
	// frontier of an enumeration in (key, id) order: a binary heap of tree nodes
	front []int32
}

func newLoadTree(workers int) *loadTree {
	n := 1
	for n < workers {
		n *= 2
	}
	t := &loadTree{n: n, key: make([]float64, 2*n), id: make([]int32, 2*n), rank: make([]int32, n)}
	for i := range t.key {
		t.key[i] = math.Inf(1)
	}
	for i := 0; i < n; i++ {
		t.id[n+i] = int32(i)
		t.rank[i] = int32(i)
	}
	for i := n - 1; i >= 1; i-- {
		t.id[i] = t.id[2*i]
	}
	return t
}

// grow rebuilds the tree for at least workers leaves, keeping every key.
func (t *loadTree) grow(workers int) {
	g := newLoadTree(workers)
	for w := 0; w < t.n; w++ {
		g.set(int32(w), t.rank[w], t.key[t.n+w])
	}
	*t = *g
}

// less orders nodes by (key, id).
func (t *loadTree) less(a, b int32) bool {
	if t.key[a] != t.key[b] {
		return t.key[a] < t.key[b]
	}
	return t.rank[t.id[a]] < t.rank[t.id[b]]
}

// set gives the worker of id rid in slot w the key k (+Inf: not a candidate). A slot beyond the
// tree (one taken during the run) grows it.
func (t *loadTree) set(w, rid int32, k float64) {
	if int(w) >= t.n {
		t.grow(int(w) + 1)
	}
	i := int32(t.n) + w
	moved := t.rank[w] != rid // a new worker in the slot: every comparison on the path may change
	if t.key[i] == k && !moved {
		return
	}
	t.key[i] = k
	t.rank[w] = rid
	for i > 1 {
		i /= 2
		c := 2 * i
		if t.less(c+1, c) {
			c++
		}
		if t.key[i] == t.key[c] && t.id[i] == t.id[c] && !moved {
			break // unchanged above
		}
		t.key[i], t.id[i] = t.key[c], t.id[c]
	}
}

// leaf returns worker w's key (+Inf beyond the tree).
func (t *loadTree) leaf(w int32) float64 {
	if int(w) >= t.n {
		return math.Inf(1)
	}
	return t.key[t.n+int(w)]
}

// min returns the worker of smallest (key, id) and its key; ok is false when there is none.
func (t *loadTree) min() (w int32, k float64, ok bool) {
	return t.id[1], t.key[1], !math.IsInf(t.key[1], 1)
}

// begin starts an enumeration of the candidates in increasing (key, id) order.
func (t *loadTree) begin() {
	t.front = t.front[:0]
	if !math.IsInf(t.key[1], 1) {
		t.front = append(t.front, 1)
	}
}

// peek returns the next worker of the enumeration and its key without taking it.
func (t *loadTree) peek() (w int32, k float64, ok bool) {
	for len(t.front) > 0 {
		top := t.front[0]
		if int(top) >= t.n {
			return t.id[top], t.key[top], true
		}
		t.pop()
		for _, c := range [2]int32{2 * top, 2*top + 1} {
			if !math.IsInf(t.key[c], 1) {
				t.push(c)
			}
		}
	}
	return 0, 0, false
}

// next takes the worker peek returned.
func (t *loadTree) next() { t.pop() }

func (t *loadTree) push(node int32) {
	t.front = append(t.front, node)
	h := t.front
	i := len(h) - 1
	for i > 0 {
		p := (i - 1) / 2
		if !t.less(h[i], h[p]) {
			break
		}
		h[i], h[p] = h[p], h[i]
		i = p
	}
}

func (t *loadTree) pop() {
	h := t.front
	n := len(h) - 1
	h[0] = h[n]
	h = h[:n]
	i := 0
	for {
		c := 2*i + 1
		if c >= n {
			break
		}
		if c+1 < n && t.less(h[c+1], h[c]) {
			c++
		}
		if !t.less(h[c], h[i]) {
			break
		}
		h[i], h[c] = h[c], h[i]
		i = c
	}
	t.front = h
}

// Exact costs. The router's choice must be the one the scan over every worker makes with
// costs computed in doubles (docs/model.md#precise-rules). Visiting workers in key order and stopping at a lower
// bound gives that choice only if no operation of the cost rounds: then cost = key +
// scale × (prompt_blocks − overlap) exactly, and the bound is a true bound. That holds when
// prefill_load_scale and host_hit_weight are multiples of 1/256 below 16 (1.0 and 0.75 by
// default) and block counts stay below 2^24: every quantity is then a multiple of 1/65536
// below 2^31, which a double holds exactly. Otherwise the router scans, as before.
const exactBlocks = 1 << 24

func exactWeight(x float64) bool {
	v := x * 256
	return x >= 0 && x < 16 && v == math.Trunc(v)
}

// routeLoads is the engine's part of the structure.
type routeLoads struct {
	tree  *loadTree // nil: the policy scans (round_robin, or kv_aware with rounding weights)
	dirty []*worker // workers whose key may have changed since the last refresh
}

// newRouteLoads builds the structure for the scenario's policy, nil when it does not apply.
func newRouteLoads(s *Scenario) routeLoads {
	switch s.Router.Policy {
	case PolicyLeastLoaded:
	case PolicyKVAware:
		if !exactWeight(s.Router.PrefillLoadScale) || !exactWeight(s.Router.HostHitWeight) {
			return routeLoads{}
		}
	default:
		return routeLoads{}
	}
	return routeLoads{tree: newLoadTree(s.Fleet.Workers)}
}

// noteLoad marks w for re-keying before the next routing decision.
func (e *engine) noteLoad(w *worker) {
	if e.loads.tree != nil && !w.loadDirty {
		w.loadDirty = true
		e.loads.dirty = append(e.loads.dirty, w)
	}
}

// loadKey is w's key (+Inf unless active).
func (e *engine) loadKey(w *worker) float64 {
	if w.state != StateActive || w.role == roleDecode {
		return math.Inf(1)
	}
	if e.s.Router.Policy == PolicyLeastLoaded {
		return float64(w.nReq)
	}
	p := e.pendPrefill[w.slot]
	if p >= exactBlocks {
		e.loads.tree = nil // beyond exact arithmetic: scan from now on
		return 0
	}
	return float64(e.s.Router.PrefillLoadScale*float64(p)) + float64(e.usedBlocks[w.slot])
}

// refreshLoads re-keys the marked workers.
func (e *engine) refreshLoads() {
	for _, w := range e.loads.dirty {
		w.loadDirty = false
		if e.ws[w.slot] != w {
			continue // removed, its slot taken by a later worker (takeSlot keyed the slot)
		}
		k := e.loadKey(w)
		if e.loads.tree == nil {
			break
		}
		e.loads.tree.set(w.slot, w.id, k)
	}
	e.loads.dirty = e.loads.dirty[:0]
}
