package sim

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/scalein-planner/scalein/sim/internal/kvcache"
	"github.com/scalein-planner/scalein/sim/podautoscaler"
)

// randomScenario builds a valid scripted scenario from a seed: a small fleet under pressure,
// shared prefixes, random scale-in with and without grace, random guard, hints and policy.
func randomScenario(seed uint64) map[string]any {
	rng := rand.New(rand.NewPCG(seed, 99))
	bs := []int{4, 8, 16}[rng.IntN(3)]
	workers := 1 + rng.IntN(6)
	big := seed%5 == 0 // larger fleets exercise the index walk's set paths
	if big {
		workers = 10 + rng.IntN(40)
	}
	gpu := 8 + rng.IntN(40)
	host := 0
	if rng.IntN(4) > 0 {
		host = 4 + rng.IntN(40)
	}
	seqs := 1 + rng.IntN(4)
	batched := seqs + rng.IntN(64)
	pick := func(xs ...float64) float64 { return xs[rng.IntN(len(xs))] }
	fleet := map[string]any{
		"workers": workers, "gpu_blocks": gpu, "host_blocks": host, "block_size": bs,
		"bytes_per_token": []int{1000, 65536, 131072}[rng.IntN(3)],
		"max_num_seqs":    seqs, "max_batched_tokens": batched,
		"h2d_gbps": pick(0, 1, 4, 32), "d2h_gbps": pick(0, 1, 8, 32),
		"timing": map[string]any{
			"prefill_ms": pick(0, 1, 2), "prefill_ms_per_1k_tokens": pick(0, 10, 65),
			"decode_ms": pick(0, 1, 0.5), "decode_ms_per_seq": pick(0, 0.05),
			"decode_ms_per_1k_kv_tokens": pick(0, 0.03, 10),
		},
	}
	kvcr := map[string]any{"enabled": host > 0 && rng.IntN(5) > 0, "latency_ms": pick(0, 0.5, 1),
		"bandwidth_gbps": pick(0.3, 1, 3, 50), "reject_draining_sources": rng.IntN(2) == 0}
	router := map[string]any{"policy": []string{"kv_aware", "kv_aware", "round_robin", "least_loaded"}[rng.IntN(4)],
		"hints": rng.IntN(4) > 0}

	var actions []any
	budget := workers - 1
	used := map[int]bool{}
	for i := 0; i < 3 && budget > 0; i++ {
		at := float64(rng.IntN(80))
		a := map[string]any{"at_ms": at}
		if rng.IntN(2) == 0 {
			id := rng.IntN(workers)
			if used[id] {
				continue
			}
			used[id] = true
			a["workers"] = []int{id}
		} else {
			a["count"] = 1
			a["select"] = []string{"highest_id", "least_loaded", "least_cached"}[rng.IntN(3)]
		}
		if rng.IntN(2) == 0 {
			a["grace_ms"] = float64(rng.IntN(40))
		}
		budget--
		actions = append(actions, a)
	}

	if rng.IntN(4) > 0 {
		router["migration_limit"] = rng.IntN(3)
	}
	var autoscaler map[string]any
	if seed%3 == 0 { // an autoscaler instead of the schedule (docs/model.md#model-3)
		actions = nil
		interval := pick(5, 10, 20)
		minW := 1 + rng.IntN(workers)
		autoscaler = map[string]any{
			"interval_ms": interval, "metric_delay_ms": float64(rng.IntN(int(interval))),
			"tolerance": pick(0, 0.1, 0.5), "min_workers": minW, "max_workers": minW + rng.IntN(workers+3),
			"scale_down_window_ms": pick(0, 10, 30), "scale_up_window_ms": pick(0, 0, 10),
			"select":         []string{"highest_id", "least_loaded", "least_cached"}[rng.IntN(3)],
			"startup_ms":     pick(0, 3, 10, 40),
			"reuse_draining": rng.IntN(2) == 0,
		}
		switch rng.IntN(4) {
		case 0:
			autoscaler["metric"], autoscaler["target"] = "kv_usage", pick(0.05, 0.2, 0.5)
		case 1:
			autoscaler["metric"], autoscaler["target"] = "requests_waiting", pick(0.5, 1, 2)
		case 2:
			autoscaler["metric"], autoscaler["target"] = "requests_running", pick(1, 2, 4)
		default:
			autoscaler["target"] = pick(0.5, 1, 2, 4)
		}
		if rng.IntN(3) == 0 { // KEDA: an External metric (docs/model.md#autoscaler)
			autoscaler["source"] = "external"
			autoscaler["aggregate"] = []string{"sum", "avg", "max"}[rng.IntN(3)]
		}
		autoscaler["pending_ms"] = float64(rng.IntN(int(autoscaler["startup_ms"].(float64)) + 1))
		switch rng.IntN(3) {
		case 0: // model 3's shorthand: the behavior path
			for _, k := range []string{"max_remove_per_tick", "max_add_per_tick"} {
				if rng.IntN(2) == 0 {
					autoscaler[k] = 1 + rng.IntN(2)
				}
			}
		case 1: // no behavior: the legacy path
			delete(autoscaler, "scale_down_window_ms")
			delete(autoscaler, "scale_up_window_ms")
			autoscaler["downscale_window_ms"] = pick(0, 10, 30)
		default: // a behavior with random policies
			delete(autoscaler, "scale_down_window_ms")
			delete(autoscaler, "scale_up_window_ms")
			rules := func() map[string]any {
				r := map[string]any{}
				if rng.IntN(2) == 0 {
					r["window_ms"] = []int{0, 10, 20, 30}[rng.IntN(4)]
				}
				if rng.IntN(2) == 0 {
					r["select"] = []string{"max", "min", "disabled"}[rng.IntN(3)]
				}
				if rng.IntN(3) == 0 {
					r["tolerance"] = pick(0, 0.2)
				}
				if rng.IntN(3) > 0 {
					var ps []any
					for range 1 + rng.IntN(3) {
						ps = append(ps, map[string]any{"type": []string{"pods", "percent"}[rng.IntN(2)],
							"value": []int{1, 2, 50, 100, 200}[rng.IntN(5)], "period_ms": []int{5, 10, 20, 40}[rng.IntN(4)]})
					}
					r["policies"] = ps
				}
				return r
			}
			b := map[string]any{}
			if rng.IntN(3) > 0 {
				b["scale_up"] = rules()
			}
			if rng.IntN(3) > 0 {
				b["scale_down"] = rules()
			}
			autoscaler["behavior"] = b
		}
		autoscaler["grace_ms"] = []any{nil, 0.0, 5.0, 20.0}[rng.IntN(4)]
	}

	prefixes := []string{"S", "T", "U"}
	var reqs []any
	n := 5 + rng.IntN(35)
	if big {
		n = 60 + rng.IntN(100)
	}
	for i := 0; i < n; i++ {
		var blocks []string
		maxBlocks := max(1, min(gpu/2, 12))
		nb := rng.IntN(maxBlocks)
		if nb > 0 {
			shared := rng.IntN(nb + 1)
			if shared > 0 {
				blocks = append(blocks, fmt.Sprintf("%s*%d", prefixes[rng.IntN(len(prefixes))], shared))
			}
			for k := shared; k < nb; k++ {
				blocks = append(blocks, fmt.Sprintf("u%d-%d", i, k))
			}
		}
		tail := rng.IntN(bs)
		if nb == 0 && tail == 0 {
			tail = 1
		}
		prompt := nb*bs + tail
		maxOut := gpu*bs - prompt
		outCap := 20
		if autoscaler != nil && i%3 == 0 {
			outCap = 120 // long requests keep drains going, so scale-ups find draining workers
		}
		out := 1 + rng.IntN(max(1, min(maxOut, outCap)))
		r := map[string]any{"id": fmt.Sprintf("r%d", i), "at_ms": float64(rng.IntN(100*(1+n/40))) / 2,
			"blocks": blocks, "tail_tokens": tail, "output_tokens": out}
		if blocks == nil {
			r["blocks"] = []string{}
		}
		if autoscaler != nil && seed%2 == 1 {
			// Load that falls and rises: a wave, a lull with the long requests draining, a wave.
			r["at_ms"] = float64([]int{rng.IntN(10), 45 + rng.IntN(15)}[i%2])
		}
		if rng.IntN(4) == 0 {
			r["route_to"] = rng.IntN(workers)
		}
		reqs = append(reqs, r)
	}
	sc := map[string]any{
		"name": fmt.Sprintf("random %d", seed), "seed": seed, "fleet": fleet, "kvcr": kvcr,
		"router": router, "scale_in": append([]any{}, actions...),
		"workload": map[string]any{"type": "requests", "requests": reqs},
		"report":   map[string]any{"per_request": true},
	}
	if autoscaler != nil {
		sc["autoscaler"] = autoscaler
	}
	if seed%10 == 2 || seed%10 == 5 || seed%10 == 8 {
		disaggregate(sc, rng, workers)
	}
	return sc
}

// disaggregate turns about 30 % of the random scenarios into prefill and decode pools
// (docs/model.md#model-5): pool sizes and a smaller decode pool, leases, failure policies,
// drain modes, per-pool scale-in and autoscalers, route_to among the prefill workers.
func disaggregate(sc map[string]any, rng *rand.Rand, workers int) {
	pick := func(xs ...float64) float64 { return xs[rng.IntN(len(xs))] }
	P, D := 1+rng.IntN(min(workers, 3)+1), 1+rng.IntN(3)
	fleet := sc["fleet"].(map[string]any)
	delete(fleet, "workers")
	decode := map[string]any{"workers": D}
	if rng.IntN(2) == 0 {
		decode["max_num_seqs"] = 1 + rng.IntN(2)
		decode["max_batched_tokens"] = fleet["max_batched_tokens"]
	}
	d := map[string]any{
		"prefill":             map[string]any{"workers": P},
		"decode":              decode,
		"transfer":            map[string]any{"latency_ms": pick(0, 0.5, 1), "bandwidth_gbps": pick(0.01, 0.1, 1, 50)},
		"load_failure_policy": []string{"fail", "recompute"}[rng.IntN(2)],
		"prefill_drain":       map[string]any{"mode": []string{"wait", "fixed", "skip"}[rng.IntN(3)], "fixed_ms": pick(0, 3, 10, 40)},
	}
	if rng.IntN(2) == 0 {
		d["lease"] = map[string]any{"mode": "fixed", "ttl_ms": pick(1, 5, 20)}
	}
	sc["disaggregation"] = d
	sc["kvcr"] = map[string]any{"enabled": false}
	for _, r := range sc["workload"].(map[string]any)["requests"].([]any) {
		m := r.(map[string]any)
		if _, ok := m["route_to"]; ok {
			m["route_to"] = rng.IntN(P)
		}
	}
	var actions []any
	drained := map[string]int{}
	named := map[int]bool{}
	for range rng.IntN(4) {
		a := map[string]any{"at_ms": float64(rng.IntN(80))}
		role, pool := "prefill", P
		if rng.IntN(2) == 0 {
			role, pool = "decode", D
		}
		if drained[role] >= pool-1 {
			continue
		}
		if rng.IntN(2) == 0 {
			id := rng.IntN(pool)
			if role == "decode" {
				id += P
			}
			if named[id] {
				continue
			}
			named[id] = true
			a["workers"] = []int{id}
		} else {
			a["count"], a["role"] = 1, role
			a["select"] = []string{"highest_id", "least_loaded", "least_cached"}[rng.IntN(3)]
		}
		drained[role]++
		if rng.IntN(2) == 0 {
			a["grace_ms"] = float64(rng.IntN(40))
		}
		actions = append(actions, a)
	}
	sc["scale_in"] = append([]any{}, actions...)
	if a, ok := sc["autoscaler"].(map[string]any); ok {
		pools := map[string]any{}
		for _, role := range []string{"prefill", "decode"} {
			if rng.IntN(3) == 0 {
				continue
			}
			c := map[string]any{}
			for k, v := range a {
				c[k] = v
			}
			n := P
			if role == "decode" {
				n = D
			}
			c["min_workers"] = 1 + rng.IntN(n)
			c["max_workers"] = c["min_workers"].(int) + rng.IntN(n+2)
			if role == "prefill" && rng.IntN(3) == 0 {
				c["metric"], c["target"] = "handoffs_held", pick(0.5, 1, 2)
				delete(c, "aggregate")
				c["source"] = "pods"
			}
			pools[role] = c
		}
		sc["autoscaler"] = pools
		sc["scale_in"] = []any{}
	}
}

// checkInvariants verifies conservation of G1 and G2 blocks and pins against the requests,
// transfers and pulls that hold them.
func checkInvariants(t *testing.T, e *engine) {
	t.Helper()
	checkIndex(t, e)
	checkLoads(t, e)
	g1refs := map[*worker]map[int32]int32{}
	g2pins := map[*worker]map[int32]int32{}
	pending := map[*worker]map[int32]bool{}
	for _, w := range e.ws {
		g1refs[w], g2pins[w], pending[w] = map[int32]int32{}, map[int32]int32{}, map[int32]bool{}
	}
	for _, w := range e.ws {
		if w.state == StateStarting {
			require.Nil(t, w.g1, "starting worker %d holds a cache", w.id)
			require.Zero(t, w.nReq, "starting worker %d has requests", w.id)
			continue
		}
		if w.state == StateRemoved {
			require.Empty(t, w.outPulls, "worker %d removed while pulls pin it", w.id)
			require.Zero(t, w.nReq, "worker %d removed with requests", w.id)
			continue
		}
		seen := map[*request]bool{}
		hold := func(r *request) {
			if seen[r] {
				return
			}
			seen[r] = true
			for _, s := range r.blocks {
				g1refs[w][s]++
			}
			for _, s := range r.restore {
				g2pins[w][s]++
			}
			for _, s := range r.landed {
				g2pins[w][s]++
			}
		}
		nReq := 0
		for q := w.held.head; q != nil; q = q.next {
			hold(q)
			nReq++
		}
		if w.ph != nil {
			checkHolds(t, e, w, g1refs[w])
		}
		for q := w.pre.head; q != nil; q = q.next {
			hold(q)
			nReq++
		}
		for q := w.fresh.head; q != nil; q = q.next {
			hold(q)
			nReq++
		}
		for _, q := range w.running {
			hold(q)
			nReq++
		}
		for _, tr := range w.transfers {
			if tr.kind == trH2D {
				hold(tr.r)
				nReq++
			}
			for _, s := range tr.slots {
				pending[w][s] = true
			}
		}
		require.Equal(t, w.nReq, nReq, "worker %d request count", w.id)
		for _, p := range w.outPulls {
			for _, s := range p.srcSlots {
				g2pins[w][s]++
			}
			for _, s := range p.dstSlots {
				pending[p.dst][s] = true
			}
		}
	}
	for _, w := range e.ws {
		if w.state == StateRemoved || w.state == StateStarting {
			continue
		}
		require.NoError(t, w.g1.Check(func(s int32) int32 { return g1refs[w][s] }))
		if w.g2 != nil {
			require.NoError(t, w.g2.Check(func(s int32) int32 { return g2pins[w][s] },
				func(s int32) bool { return pending[w][s] }))
		}
	}
}

// checkIndex checks the block index against the caches (kvcache.Index.Check).
func checkIndex(t *testing.T, e *engine) {
	t.Helper()
	require.NoError(t, e.index.Check(len(e.ws), func(id int32) (*kvcache.GPU, *kvcache.Host, bool) {
		w := e.ws[id]
		return w.g1, w.g2, w.state == StateActive
	}))
}

// invariantSeeds is how many random scenarios TestInvariantsOnRandomScenarios checks: a few
// dozen by default (every fifth a large fleet), the full sweep with SCALEIN_SLOW=1.
func invariantSeeds() int {
	if slowTests() {
		return 300
	}
	return 30
}

// Every state invariant holds after every instant of random scenarios, routing matches an
// oracle that probes each worker directly, and the end state and report are consistent and
// deterministic. Seeds run as parallel subtests.
func TestInvariantsOnRandomScenarios(t *testing.T) {
	for seed := uint64(1); seed <= uint64(invariantSeeds()); seed++ {
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			t.Parallel()
			checkRandomScenario(t, seed)
		})
	}
}

// checkRandomScenario runs the scenario of one seed with every check on.
func checkRandomScenario(t *testing.T, seed uint64) {
	js, err := json.Marshal(randomScenario(seed))
	require.NoError(t, err)
	s, err := Parse(js, ParseEnv{})
	require.NoError(t, err, "seed %d: %s", seed, js)
	e, err := newEngine(s, RunOptions{MaxEvents: DefaultMaxEvents, MaxVirtualMS: DefaultMaxVirtualMS})
	require.NoError(t, err)
	e.afterInstant = func() { checkInvariants(t, e) }
	e.onRoute = func(r *request, target *worker, hint int32) { checkRouting(t, e, r, target, hint) }
	require.NoError(t, e.loop(context.Background()), "seed %d", seed)
	// At the end every pin is released and every block is back to free or cached.
	for _, w := range e.ws {
		if w.state == StateRemoved || w.state == StateStarting {
			continue
		}
		require.Zero(t, w.g1.Used(), "seed %d worker %d holds G1 blocks at the end", seed, w.id)
		if w.g2 != nil {
			for _, s := range w.g2.HeldSlots() {
				require.Zero(t, w.g2.Pins(s), "seed %d worker %d G2 pin left", seed, w.id)
				require.True(t, w.g2.Resident(s), "seed %d: pending entry at the end", seed)
			}
		}
		require.Empty(t, w.outPulls)
		require.Equal(t, StateActive, w.state, "seed %d: worker %d still draining at the end", seed, w.id)
	}
	rep := e.report()
	failed := int64(0)
	if e.pd != nil {
		failed = *rep.Summary.Requests.Failed
		checkPDEnd(t, e, rep)
	}
	require.Equal(t, rep.Summary.Requests.Total, rep.Summary.Requests.Completed+rep.Summary.Requests.Killed+failed, "seed %d: every request ends once", seed)
	for _, r := range rep.Requests {
		require.Contains(t, []string{StatusCompleted, StatusKilled, StatusFailed}, r.Status)
		if r.Status == StatusCompleted {
			require.NotNil(t, r.DoneMS)
		}
	}
	tok := rep.Summary.Tokens
	require.Equal(t, tok.Prompt, tok.G1Reused+tok.G2Reused+tok.KVCRPulled+tok.Recomputed, "seed %d token accounting", seed)
	k := rep.KVCR
	require.Equal(t, k.Staged, k.Success+k.Partial)
	require.LessOrEqual(t, k.Success+k.Partial+k.Miss+k.NotNeeded+k.RejectedDraining+k.RejectedRemoved, k.Hints)
	if s.KVCR.RejectDrainingSources {
		require.Zero(t, k.StagedFromDraining, "seed %d: guard on but staged from draining", seed)
	}
	checkModel3(t, s, rep)
	// Deterministic: a second run gives the same report.
	again, err := Run(context.Background(), s, RunOptions{})
	require.NoError(t, err)
	require.Equal(t, rep.Digest, again.Digest, "seed %d not deterministic", seed)
}

// checkRouting recomputes a routing decision by probing every worker's caches directly and
// compares it with the engine's index walk.
func checkRouting(t *testing.T, e *engine, r *request, target *worker, hint int32) {
	t.Helper()
	if e.s.Router.Policy == PolicyKVAware && (e.byID(r.routeTo) == nil || e.byID(r.routeTo).state != StateActive) {
		e.overlaps(r.keys, r.reuse, e.loads.tree != nil) // as the router walked it
		var best *worker
		bestCost := 0.0
		for _, w := range e.ws {
			if w.state != StateActive || w.role == roleDecode {
				continue
			}
			// Oracle: each tier probed on its own, independent of the index and of prefix().
			k1 := w.g1.Run(r.keys, r.reuse)
			k2 := 0
			if w.g2 != nil {
				k2 = w.g2.Run(r.keys, k1, r.reuse)
			}
			pk1, pk2 := kvcache.Prefix(w.g1, w.g2, r.keys, r.reuse)
			require.Equal(t, [2]int{k1, k2}, [2]int{pk1, pk2}, "prefix of worker %d for %s", w.id, r.id)
			g1, g2 := e.overlapOf(w.slot)
			require.Equal(t, [2]int{k1, k2}, [2]int{int(g1), int(g2)}, "overlap of worker %d for %s", w.id, r.id)
			overlap := float64(k1) + float64(e.s.Router.HostHitWeight*float64(k2))
			pb := int64(ceilDiv(r.promptTokens, e.s.Fleet.BlockSize))
			pending := e.pendPrefill[w.slot]
			if w == target {
				pending -= int64(r.pending) // already added by arrive
			}
			cost := float64(e.s.Router.PrefillLoadScale*math.Max(float64(pending+pb)-overlap, 0)) + float64(w.g1.Used())
			if best == nil || cost < bestCost || cost == bestCost && w.id < best.id { // e.ws is by slot
				best, bestCost = w, cost
			}
		}
		require.Equal(t, best.id, target.id, "kv_aware target for %s", r.id)
	}
	k1, k2 := kvcache.Prefix(target.g1, target.g2, r.keys, r.reuse)
	if e.pd == nil && r.firstToken < 0 {
		// The prefix the arrival counted as pending (from the routing walk when there was one).
		require.Equal(t, ceilDiv(r.promptTokens, e.s.Fleet.BlockSize)-(k1+k2), r.pending, "pending prefill of %s", r.id)
	}
	if !e.hints {
		return
	}
	want, wantRun := int32(-1), k1+k2
	for _, w := range e.ws {
		if w == target || w.state != StateActive {
			continue
		}
		if run := w.g2.Run(r.keys, 0, r.reuse); run > wantRun || run == wantRun && want >= 0 && w.id < want {
			want, wantRun = w.id, run
		}
	}
	require.Equal(t, want, hint, "hint for %s", r.id)
}

// checkLoads checks the routing structure: every worker not marked for re-keying has its
// current key, and the tree's inner nodes hold their subtrees' minimum.
func checkLoads(t *testing.T, e *engine) {
	t.Helper()
	tree := e.loads.tree
	if tree == nil {
		return
	}
	for _, w := range e.ws {
		if !w.loadDirty {
			require.Equal(t, e.loadKey(w), tree.leaf(w.slot), "routing key of worker %d", w.id)
		}
	}
	for i := tree.n - 1; i >= 1; i-- {
		c := 2 * i
		if tree.less(int32(c+1), int32(c)) {
			c++
		}
		require.Equal(t, [2]any{tree.key[c], tree.id[c]}, [2]any{tree.key[i], tree.id[i]}, "tree node %d", i)
	}
}

// checkModel3 checks the autoscaler's and migration's invariants on a finished run (docs/model.md#model-3):
// each decision moves active + starting from current towards desired by what its lists say,
// within the bounds when the fleet started within them; a started worker is active startup_ms
// later unless cancelled; every migration is accounted; killed counts only requests that ended
// killed.
func checkModel3(t *testing.T, s *Scenario, rep *Report) {
	t.Helper()
	var moves, killed int64
	for _, r := range rep.Requests {
		require.LessOrEqual(t, r.Migrations, int64(s.Router.MigrationLimit), "%s migrated past the limit", r.ID)
		moves += r.Migrations
		if r.Status == StatusKilled {
			killed++
		}
	}
	var bucketMoves int64
	for _, b := range rep.Timeseries.Buckets {
		bucketMoves += b.Migrated
	}
	require.Equal(t, moves, rep.Summary.Requests.Migrated, "migrations: requests vs summary")
	require.Equal(t, moves, bucketMoves, "migrations: requests vs time series")
	require.Equal(t, killed, rep.Summary.Requests.Killed)
	if s.Disaggregation != nil {
		checkPoolAutoscalers(t, s, rep)
		return
	}
	a := s.Autoscaler
	if a == nil {
		require.Nil(t, rep.Autoscaler)
		require.Len(t, rep.Workers, s.Fleet.Workers)
		return
	}
	require.NotNil(t, rep.Autoscaler)
	checkDecisions(t, s, rep.Autoscaler.Decisions)
	startup := float64(msToNS(a.StartupMS)) / 1e6
	for _, w := range rep.Workers[s.Fleet.Workers:] {
		require.NotNil(t, w.StartedAtMS, "worker %d", w.ID)
		switch {
		case w.ActiveAtMS != nil:
			require.InDelta(t, *w.StartedAtMS+startup, *w.ActiveAtMS, 1e-9, "worker %d active startup_ms after its start", w.ID)
		case w.FinalState == StateRemoved:
			require.Nil(t, w.MarkedAtMS, "worker %d: cancelled, never drained", w.ID)
			require.Less(t, *w.RemovedAtMS, *w.StartedAtMS+startup, "worker %d cancelled after its startup", w.ID)
		default:
			require.Equal(t, StateStarting, w.FinalState, "worker %d", w.ID)
		}
	}
	require.GreaterOrEqual(t, rep.Summary.Workers.Peak, max(rep.Summary.Workers.Initial, rep.Summary.Workers.Final))
}

// checkDecisions holds every decision against the rules of docs/model.md#autoscaler, recomputed from the
// report alone: the change carried out is desired − current; desired lies in [min, max]; on
// the behavior path desired respects the policy limits computed from the earlier decisions'
// changes; and no window lets through a change that a recommendation inside it contradicts.
func checkDecisions(t *testing.T, s *Scenario, ds []Decision) {
	t.Helper()
	a := s.Autoscaler
	st := a.ControllerSettings()
	prev := s.Fleet.Workers
	type rec struct {
		t int64
		v int
	}
	var recs []rec
	var changes []scaleChange
	for i, d := range ds {
		tNS := msToNS(d.TMS)
		if i == 0 {
			recs = append(recs, rec{tNS, d.Current}) // the seed
		}
		require.Equal(t, prev, d.Current, "decision %d: current is what the last decision left", i)
		after := d.Current + len(d.Started) + len(d.Reactivated) - len(d.Cancelled) - len(d.Drained)
		require.Equal(t, d.Desired, after, "decision %d: the change carried out is desired − current", i)
		if d.Desired > d.Current {
			require.Empty(t, d.Cancelled)
			require.Empty(t, d.Drained)
		}
		require.GreaterOrEqual(t, d.Desired, a.MinWorkers, "decision %d below min_workers", i)
		require.LessOrEqual(t, d.Desired, a.MaxWorkers, "decision %d above max_workers", i)
		require.GreaterOrEqual(t, after-len(d.Started), 1, "decision %d left no active worker", i)
		if d.Rec != nil {
			b := st.Behavior
			inWindow := func(w int64) []int {
				var out []int
				for _, r := range recs {
					if r.t > tNS-w {
						out = append(out, r.v)
					}
				}
				return out
			}
			if b != nil && d.Desired > d.Current {
				for _, v := range inWindow(b.Up.WindowNS) {
					require.LessOrEqual(t, d.Desired, v, "decision %d: scale-up past a recommendation in the window", i)
				}
				require.LessOrEqual(t, d.Desired, policyLimit(changes, tNS, d.Current, b.Up, true), "decision %d: scale-up past the policies", i)
			}
			if d.Desired < d.Current {
				w := st.DownscaleWindowNS
				if b != nil {
					w = b.Down.WindowNS
					require.GreaterOrEqual(t, d.Desired, policyLimit(changes, tNS, d.Current, b.Down, false), "decision %d: scale-down past the policies", i)
				}
				for _, v := range inWindow(w) {
					require.GreaterOrEqual(t, d.Desired, min(v, d.Current), "decision %d: scale-down past a recommendation in the window", i)
				}
			}
			recs = append(recs, rec{tNS, *d.Rec})
		}
		if d.Desired != d.Current {
			changes = append(changes, scaleChange{tNS, d.Desired - d.Current})
		}
		prev = after
	}
}

type scaleChange struct {
	t int64
	k int
}

// policyLimit recomputes a direction's limit from the recorded changes, independently of the
// controller's bookkeeping.
func policyLimit(changes []scaleChange, t int64, current int, r podautoscaler.Rules, up bool) int {
	if r.Select == podautoscaler.SelectDisabled {
		return current
	}
	var out []int
	for _, p := range r.Policies {
		start := current
		for _, c := range changes {
			if c.t > t-p.PeriodNS {
				start -= c.k
			}
		}
		switch {
		case up && p.Type == podautoscaler.PolicyPods:
			out = append(out, start+p.Value)
		case up:
			out = append(out, int(math.Ceil(float64(start)*(1+float64(p.Value)/100))))
		case p.Type == podautoscaler.PolicyPods:
			out = append(out, start-p.Value)
		default:
			out = append(out, int(float64(start)*(1-float64(p.Value)/100)))
		}
	}
	pick := slices.Max(out)
	if (r.Select == podautoscaler.SelectMin) == up {
		pick = slices.Min(out)
	}
	if up {
		return max(pick, current)
	}
	return min(pick, current)
}

// The routing walk's memo (routeScratch.memo) starts walks past a shared system prompt while its
// holders stay the same: on the one-hour day, whose 16-block system prompts are evicted and
// taken back by workers all along, every routing decision still matches the oracle that probes
// each worker's caches, the memo is used, and it is found changed and walked again too.
func TestWalkMemoMatchesOracle(t *testing.T) {
	p, ok := PresetByKey("autoscaler-hour")
	require.True(t, ok)
	s, err := Parse(p.JSON, ParseEnv{})
	require.NoError(t, err)
	s.Workload.Sessions.Count = 4000
	e, err := newEngine(s, RunOptions{MaxEvents: DefaultMaxEvents, MaxVirtualMS: DefaultMaxVirtualMS})
	require.NoError(t, err)
	routes, hits, stale, x := 0, 0, 0, &e.scratch
	lastHits, lastStale := 0, 0
	e.onRoute = func(r *request, target *worker, hint int32) {
		routes++
		hits, stale = hits+x.memoHits-lastHits, stale+x.memoStale-lastStale // the router's walk
		checkRouting(t, e, r, target, hint)                                 // walks again
		lastHits, lastStale = x.memoHits, x.memoStale
	}
	require.NoError(t, e.loop(context.Background()))
	t.Logf("%d routes, %d walked from the memo, %d found it changed", routes, hits, stale)
	require.Greater(t, hits, routes/2)
	require.Greater(t, stale, 0)
}
