package sim

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/scalein-planner/scalein/sim/internal/kvcache"
)

// flappingScenario is a fleet of 1 to 12 workers whose autoscaler, on offered_rate with no lag,
// goes to 12 workers at every interval with an arrival and back to 1 at every interval without:
// 11 workers started per burst. A burst of three requests arrives every other 10 ms interval from
// 1 s on (the third shares a prefix with the first: a hint under round_robin). Before, worker 1 serves a request sent to it while worker 0 is drained at the first
// decision, so the survivor is worker 1 in slot 1 and later workers take slot 0 again: a tie
// between idle workers (the burst's second request shares no block with anyone) must go to
// worker 1, the lowest id, not to the lowest slot.
func flappingScenario(t testing.TB, bursts int, policy, extra string, sTokens int) *Scenario {
	t.Helper()
	reqs := []string{`{"id": "first", "at_ms": 0, "blocks": ["F"], "output_tokens": 200, "route_to": 1}`}
	for i := range bursts {
		// One at the start of the interval (the fleet of 1 serves it), one when the 12 are up.
		reqs = append(reqs, fmt.Sprintf(`{"id": "r%d", "at_ms": %d, "blocks": ["P*2", "Q%d"], "output_tokens": 2}`, i, 1010+20*i, i%50),
			fmt.Sprintf(`{"id": "s%d", "at_ms": %d, "blocks": ["S%d*3"], "output_tokens": %d}`, i, 1015+20*i, i, sTokens),
			fmt.Sprintf(`{"id": "t%d", "at_ms": %d, "blocks": ["P*2", "T%d"], "output_tokens": 2}`, i, 1016+20*i, i))
	}
	grace := `, "grace_ms": 5`
	if strings.Contains(extra, "grace_ms") {
		grace = ""
	}
	return mustParse(t, `{"fleet": {"workers": 2, "gpu_blocks": 64, "host_blocks": 64, "block_size": 16, "max_num_seqs": 4,
		"max_batched_tokens": 64, "timing": {"prefill_ms": 2, "decode_ms": 1, "prefill_ms_per_1k_tokens": 0,
		"decode_ms_per_seq": 0, "decode_ms_per_1k_kv_tokens": 0}},
		"kvcr": {"enabled": true}, "router": {"policy": "`+policy+`", "hints": true},
		"autoscaler": {"interval_ms": 10, "metric": "offered_rate", "source": "external", "target": 1,
			"tolerance": 0, "min_workers": 1, "max_workers": 12, "startup_ms": 0, "select": "least_loaded"`+grace+extra+`,
			"behavior": {"scale_down": {"window_ms": 0}, "scale_up": {"policies": [{"type": "pods", "value": 100, "period_ms": 1}]}}},
		"workload": {"type": "requests", "requests": [`+strings.Join(reqs, ",")+`]}}`)
}

// A run that starts 50,000 workers on a fleet of at most 12 finishes: ids grow, slots are given
// back and taken again, so the engine's tables stay at the workers alive at once.
func TestFiftyThousandWorkersOnTwelve(t *testing.T) {
	bursts := 50_000/11 + 1
	s := flappingScenario(t, bursts, PolicyKVAware, "", 2)
	e, err := newEngine(s, RunOptions{MaxEvents: DefaultMaxEvents, MaxVirtualMS: DefaultMaxVirtualMS})
	require.NoError(t, err)
	require.NoError(t, e.loop(context.Background()))
	rep := e.report()
	started := len(rep.Workers) - 2
	assert.GreaterOrEqual(t, started, 50_000)
	assert.Equal(t, 12, rep.Summary.Workers.Peak)
	assert.LessOrEqual(t, len(e.ws), 24, "slots: the workers alive at once")
	assert.LessOrEqual(t, len(e.usedBlocks), 24)
	assert.Equal(t, int64(3*bursts+1), rep.Summary.Requests.Completed)
	for i, row := range rep.Workers {
		require.Equal(t, i, row.ID, "rows by id")
	}
	// The memory estimate counts a row for every worker the run started (at most max_workers
	// for every two decisions).
	var rowBytes int64
	for _, d := range EstimateMemory(s).Drivers {
		if d.Field == "autoscaler.max_workers" {
			rowBytes = d.Bytes
		}
	}
	assert.GreaterOrEqual(t, rowBytes, int64(started)*(goneWorkerRowBytes+workerRowJSONBytes*jsonCopies))
	assert.LessOrEqual(t, rep.Summary.Workers.Final, 12)
	data, err := json.Marshal(rep)
	require.NoError(t, err)
	t.Logf("%d workers started, %d slots, report %d bytes (%d a worker row)", started, len(e.ws), len(data), len(data)/len(rep.Workers))
}

// With hints and kv_aware routing on a fleet whose slots are taken again and again, every
// invariant holds after every instant and routing matches the oracle that probes every worker:
// ties go to the lowest id, not the lowest slot, and a hint never names a slot's later worker.
func TestSlotsReusedKeepInvariants(t *testing.T) {
	for _, c := range []struct {
		policy, extra string
		sTokens       int
	}{
		{PolicyKVAware, "", 2}, {PolicyRoundRobin, "", 2}, {PolicyLeastLoaded, "", 2},
		// draining workers (busy with long answers) made active again: their key tables go back
		// to the index's spares
		{PolicyRoundRobin, `, "reuse_draining": true, "grace_ms": 100`, 40},
	} {
		policy := c.policy
		t.Run(policy+c.extra, func(t *testing.T) {
			s := flappingScenario(t, 150, policy, c.extra, c.sTokens)
			e, err := newEngine(s, RunOptions{MaxEvents: DefaultMaxEvents, MaxVirtualMS: DefaultMaxVirtualMS})
			require.NoError(t, err)
			reused := 0
			e.afterInstant = func() {
				checkInvariants(t, e)
				for slot, w := range e.ws {
					if int(w.id) != slot {
						reused++
					}
				}
			}
			ties := 0
			e.onRoute = func(r *request, target *worker, hint int32) {
				checkRouting(t, e, r, target, hint)
				if policy == PolicyLeastLoaded && r.routeTo < 0 {
					var best *worker
					for _, w := range e.ws { // by slot
						if w.state == StateActive && (best == nil || w.nReq < best.nReq || w.nReq == best.nReq && w.id < best.id) {
							best = w
						}
					}
					require.Equal(t, best.id, target.id, "least_loaded target for %s", r.id)
				}
				if strings.HasPrefix(r.id, "s") && target.id == 1 && e.ws[0].id > 1 && e.ws[0].state == StateActive {
					ties++ // worker 1 won over the later worker in slot 0
				}
			}
			require.NoError(t, e.loop(context.Background()))
			assert.Positive(t, reused, "slots were taken by later workers")
			if policy != PolicyRoundRobin && c.extra == "" {
				assert.Positive(t, ties, "ties between worker 1 and a later worker in slot 0")
			}
			rep := e.report()
			again, err := Run(context.Background(), s, RunOptions{})
			require.NoError(t, err)
			assert.Equal(t, rep.Digest, again.Digest)
			if c.extra != "" {
				var back int64
				for _, row := range rep.Workers {
					back += row.Reactivations
				}
				assert.Positive(t, back, "draining workers were made active again")
			}
			if policy == PolicyRoundRobin {
				assert.Positive(t, rep.KVCR.Hints, "new workers lack the prefix that others hold")
			}
		})
	}
}

// The routing tree ranks its leaves by id: a slot taken by a later worker moves behind the
// workers of lower ids with the same key.
func TestLoadTreeRanksByID(t *testing.T) {
	tree := newLoadTree(4)
	for w := range int32(4) {
		tree.set(w, w, 1)
	}
	w, _, _ := tree.min()
	assert.Equal(t, int32(0), w)
	tree.set(0, 9, 1) // slot 0 now holds worker 9, same key
	w, _, _ = tree.min()
	assert.Equal(t, int32(1), w, "worker 1 (slot 1) now has the lowest id")
	tree.set(1, 1, 2)
	tree.set(2, 2, 2)
	tree.set(3, 3, 2)
	w, _, _ = tree.min()
	assert.Equal(t, int32(0), w, "the only key of 1")
}

// The limits count the workers alive at once and the workers started, with messages that say
// what to change.
func TestWorkerLimitsMessages(t *testing.T) {
	s := flappingScenario(t, 2, PolicyKVAware, "", 2)
	e, err := newEngine(s, RunOptions{})
	require.NoError(t, err)
	e.gen.next = MaxStartedWorkers
	assert.False(t, e.takeSlot(&worker{}))
	require.ErrorIs(t, e.fail, ErrLimit)
	assert.Contains(t, e.fail.Error(), "the report lists each one; lengthen its windows")

	e, err = newEngine(s, RunOptions{})
	require.NoError(t, err)
	for len(e.ws) < kvcache.MaxWorkers {
		e.growSlots(&worker{state: StateActive})
	}
	assert.False(t, e.takeSlot(&worker{}))
	assert.Contains(t, e.fail.Error(), "workers alive at once (active, starting and draining): lower autoscaler.max_workers")
}

// flappingPoolsScenario is flappingScenario with prefill and decode pools, each with its own
// autoscaler on offered_rate with no lag: both pools go to 12 workers at every interval with an
// arrival and back to 1 at every interval without, so each burst starts 22 workers.
func flappingPoolsScenario(t testing.TB, bursts int) *Scenario {
	t.Helper()
	var reqs []string
	for i := range bursts {
		reqs = append(reqs, fmt.Sprintf(`{"id": "r%d", "at_ms": %d, "blocks": ["P*2", "Q%d"], "output_tokens": 2}`, i, 1010+20*i, i%50),
			fmt.Sprintf(`{"id": "s%d", "at_ms": %d, "blocks": ["S%d*3"], "output_tokens": 2}`, i, 1015+20*i, i))
	}
	pool := `{"interval_ms": 10, "metric": "offered_rate", "source": "external", "target": 1,
		"tolerance": 0, "min_workers": 1, "max_workers": 12, "startup_ms": 0, "select": "least_loaded", "grace_ms": 5,
		"behavior": {"scale_down": {"window_ms": 0}, "scale_up": {"policies": [{"type": "pods", "value": 100, "period_ms": 1}]}}}`
	return mustParse(t, `{"fleet": {"gpu_blocks": 64, "host_blocks": 64, "block_size": 16, "max_num_seqs": 4,
		"max_batched_tokens": 64, "timing": {"prefill_ms": 2, "decode_ms": 1, "prefill_ms_per_1k_tokens": 0,
		"decode_ms_per_seq": 0, "decode_ms_per_1k_kv_tokens": 0}},
		"disaggregation": {"prefill": {"workers": 1}, "decode": {"workers": 1}, "transfer": {"latency_ms": 1, "bandwidth_gbps": 50}},
		"router": {"policy": "kv_aware"},
		"autoscaler": {"prefill": `+pool+`, "decode": `+pool+`},
		"workload": {"type": "requests", "requests": [`+strings.Join(reqs, ",")+`]}}`)
}

// With pools, a removed worker gives its slot back too (issue 35: ids never run out): a run
// whose two pool autoscalers start more workers than kvcache.MaxWorkers over its life finishes,
// on as many slots as workers alive at once, with a row for every worker, by id, that says its
// pool; and with every invariant checked after every instant, a shorter run of the same kind
// gives the same report twice.
func TestPoolsReuseSlots(t *testing.T) {
	short := flappingPoolsScenario(t, 120)
	e, err := newEngine(short, RunOptions{MaxEvents: DefaultMaxEvents, MaxVirtualMS: DefaultMaxVirtualMS})
	require.NoError(t, err)
	reused := 0
	e.afterInstant = func() {
		checkInvariants(t, e)
		for slot, w := range e.ws {
			if int(w.id) != slot {
				reused++
			}
		}
	}
	e.onRoute = func(r *request, target *worker, hint int32) { checkRouting(t, e, r, target, hint) }
	require.NoError(t, e.loop(context.Background()))
	assert.Positive(t, reused, "slots were taken by later workers")
	rep := e.report()
	checkPDEnd(t, e, rep)
	checkPoolAutoscalers(t, short, rep)
	again, err := Run(context.Background(), short, RunOptions{})
	require.NoError(t, err)
	assert.Equal(t, rep.Digest, again.Digest)

	bursts := kvcache.MaxWorkers/22 + 50
	s := flappingPoolsScenario(t, bursts)
	e, err = newEngine(s, RunOptions{MaxEvents: DefaultMaxEvents, MaxVirtualMS: DefaultMaxVirtualMS})
	require.NoError(t, err)
	require.NoError(t, e.loop(context.Background()))
	rep = e.report()
	assert.Greater(t, len(rep.Workers), kvcache.MaxWorkers, "more workers started than slots exist")
	assert.LessOrEqual(t, len(e.ws), 48, "slots: the workers alive at once")
	roles := map[string]int{}
	var held float64
	for i, row := range rep.Workers {
		require.Equal(t, i, row.ID, "rows by id")
		roles[row.Role]++
		if v, ok := row.HeldBlockSeconds.Value(); ok {
			held += v
		}
	}
	assert.Positive(t, roles[RolePrefill])
	assert.Positive(t, roles[RoleDecode])
	assert.Equal(t, len(rep.Workers), roles[RolePrefill]+roles[RoleDecode], "every row names its pool")
	ds := rep.Summary.Disaggregation
	assert.InDelta(t, ds.HeldBlockSeconds, held, 1e-6, "the summary's held block-seconds are the rows' sum")
	ws := ds.WorkerSeconds
	assert.InDelta(t, rep.Summary.WorkerSeconds, ws.Prefill+ws.Decode, 1e-6, "pool worker-seconds add up")
	assert.Equal(t, int64(2*bursts), rep.Summary.Requests.Completed+*rep.Summary.Requests.Failed)
	// The memory estimate counts a row for every worker each pool's autoscaler may start.
	var rowBytes int64
	for _, d := range EstimateMemory(s).Drivers {
		if d.Field == "autoscaler.prefill.max_workers" || d.Field == "autoscaler.decode.max_workers" {
			rowBytes += d.Bytes
		}
	}
	assert.GreaterOrEqual(t, rowBytes, int64(len(rep.Workers))*(goneWorkerRowBytes+workerRowJSONBytes*jsonCopies))
	t.Logf("%d workers started, %d slots", len(rep.Workers), len(e.ws))
}

// A decode worker's tie (as many free blocks, as many requests) goes to the lowest id, not the
// lowest slot: a later worker may sit in a lower slot.
func TestRouteDecodeTiesByID(t *testing.T) {
	e, err := newEngine(flappingPoolsScenario(t, 1), RunOptions{})
	require.NoError(t, err)
	d := e.ws[1]
	require.Equal(t, uint8(roleDecode), d.role)
	later := &worker{id: 7, slot: 2, state: StateActive, role: roleDecode, f: d.f}
	e.ws = append(e.ws, later)
	e.usedBlocks = append(e.usedBlocks, 0)
	assert.Same(t, d, e.routeDecode(), "worker 1 before worker 7")
	e.ws[1], e.ws[2] = later, d // worker 7 now in the lower slot
	later.slot, d.slot = 1, 2
	assert.Same(t, d, e.routeDecode(), "worker 1, in the higher slot, still wins the tie")
}
