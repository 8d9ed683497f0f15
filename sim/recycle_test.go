package sim

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
)

// A kept pull's events are stale, and stay stale once the record is reused for another pull,
// whose own events are not: a land event of the old life has the version the new life reaches
// at its first reshare.
func TestReusedPullIgnoresEventsOfItsEarlierLife(t *testing.T) {
	e := &engine{}
	p := e.newPull()
	*p = pull{seq: 7}
	start := event{kind: evPullStart, seq: p.seq, p: p}
	require.False(t, start.stale())
	p.moving, p.ver = true, 1
	land := event{kind: evPullLand, seq: p.seq, ver: p.ver, p: p}
	require.False(t, land.stale())

	p.ended, p.moving = true, false
	e.keepPull(p)
	require.True(t, start.stale(), "start event of a kept pull")
	require.True(t, land.stale(), "land event of a kept pull")

	q := e.newPull()
	require.Same(t, p, q, "the kept record is reused")
	*q = pull{seq: 9}
	require.True(t, start.stale(), "start event of the earlier life")
	newStart := event{kind: evPullStart, seq: q.seq, p: q}
	require.False(t, newStart.stale())
	q.moving, q.ver = true, 1
	require.True(t, land.stale(), "land event of the earlier life, same version")
	require.False(t, (&event{kind: evPullLand, seq: q.seq, ver: q.ver, p: q}).stale())
}

// The case the seq check is for: a pull aborted during its latency leaves its start event on
// the heap (an earlier transfer keeps it from the top, where it would be dropped), and its
// record is reused by the next pull before that event's instant. a1's pull from worker 2 is
// staged at 10 ms (start at 15), aborted at 12 ms when worker 2 is force-removed, and c1's pull
// from worker 3, staged at 13 ms on worker 1, takes the record; d0's write-through keeps an
// event at 13.19 ms ahead of the old start. c1's pull must start at 18 ms, not 15: it lands
// 4 MiB later at 22.194304 ms, and c1's prefill pass (2 + 1 ms) emits its token at 25.194304.
func TestReusedPullAfterAbortStartsOnItsOwnEvent(t *testing.T) {
	s := mustParse(t, `{"name": "reused pull record", "seed": 1,
		"fleet": {"workers": 4, "gpu_blocks": 256, "host_blocks": 64, "block_size": 16,
			"bytes_per_token": 65536, "max_num_seqs": 4, "max_batched_tokens": 8192, "h2d_gbps": 0,
			"d2h_gbps": 1, "timing": {"prefill_ms": 2, "prefill_ms_per_1k_tokens": 0, "decode_ms": 1,
				"decode_ms_per_seq": 0, "decode_ms_per_1k_kv_tokens": 0}},
		"kvcr": {"enabled": true, "latency_ms": 5, "bandwidth_gbps": 1, "reject_draining_sources": false},
		"router": {"policy": "kv_aware", "hints": true},
		"scale_in": [{"at_ms": 11, "workers": [2], "grace_ms": 1}],
		"workload": {"type": "requests", "requests": [
			{"id": "a0", "at_ms": 0, "blocks": ["A*4"], "output_tokens": 1, "route_to": 2},
			{"id": "c0", "at_ms": 0, "blocks": ["C*4"], "output_tokens": 1, "route_to": 3},
			{"id": "d0", "at_ms": 6, "blocks": ["D*4"], "output_tokens": 1, "route_to": 3},
			{"id": "a1", "at_ms": 10, "blocks": ["A*4", "X"], "output_tokens": 1, "route_to": 0},
			{"id": "c1", "at_ms": 13, "blocks": ["C*4", "Y"], "output_tokens": 1, "route_to": 1}]},
		"report": {"per_request": true}}`)
	e, err := newEngine(s, RunOptions{MaxEvents: DefaultMaxEvents, MaxVirtualMS: DefaultMaxVirtualMS})
	require.NoError(t, err)
	reusedWithOldEvent := false
	e.afterInstant = func() {
		for _, ev := range e.transfers {
			reusedWithOldEvent = reusedWithOldEvent || ev.kind == evPullStart && ev.p.seq != ev.seq && !ev.p.ended
		}
	}
	require.NoError(t, e.loop(context.Background()))
	require.True(t, reusedWithOldEvent, "the scenario no longer reuses the record under a pending start event")
	rep := e.report()
	require.Equal(t, int64(1), rep.KVCR.Aborted)
	byID := map[string]RequestRow{}
	for _, row := range rep.Requests {
		byID[row.ID] = row
	}
	require.Equal(t, "aborted", *byID["a1"].PullOutcome)
	require.Equal(t, "success", *byID["c1"].PullOutcome)
	require.Equal(t, 25.194304, *byID["c1"].FirstTokenMS)
}

// Recycling records changes no report: the random scenarios of the invariant test (small fleets
// under pressure, pulls, forced removals that abort them; no per-request rows, so requests are
// reused too) and the pinned ones, with and without their rows, give the same
// report with recycling and with every record allocated afresh. The runs with recycling must
// reuse records while events of their earlier lives are still on the heap, or this test would
// not test that case.
func TestRecyclingKeepsReports(t *testing.T) {
	run := func(s *Scenario, recycle bool) (*Report, int) {
		e, err := newEngine(s, RunOptions{MaxEvents: DefaultMaxEvents, MaxVirtualMS: DefaultMaxVirtualMS})
		require.NoError(t, err)
		e.noRecycle = !recycle
		oldLives := 0
		e.afterInstant = func() {
			for _, ev := range e.transfers {
				if ev.p != nil && ev.p.seq != ev.seq && !ev.p.ended {
					oldLives++
				}
			}
		}
		require.NoError(t, e.loop(context.Background()))
		return e.report(), oldLives
	}
	scenarios := pinnedScenarios(t, nil) // per-request rows: requests are not reused
	for name, s := range pinnedScenarios(t, nil) {
		s.Report.PerRequest = false
		scenarios[name+", no rows"] = s
	}
	for seed := uint64(1); seed <= uint64(invariantSeeds()); seed++ {
		js, err := json.Marshal(randomScenario(seed))
		require.NoError(t, err)
		s, err := Parse(js, ParseEnv{})
		require.NoError(t, err)
		scenarios[fmt.Sprintf("seed %d", seed)] = s
	}
	oldLives := 0
	for name, s := range scenarios {
		fresh, n := run(s, false)
		require.Zero(t, n, "%s: a record was reused with recycling off", name)
		reused, n := run(s, true)
		oldLives += n
		requireSameReport(t, fresh, reused, name)
	}
	require.Positive(t, oldLives, "no record was reused while an event of its earlier life was pending")
}
