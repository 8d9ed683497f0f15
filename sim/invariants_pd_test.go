package sim

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// Invariants of model 5 (docs/model.md#model-5) on the random scenarios with pools.

// checkHolds counts a prefill worker's open holds in its block references and checks its
// hold records: every open hold's source is this worker and not removed, its blocks are held
// (H is the number of distinct slots they reference), and its count matches.
func checkHolds(t *testing.T, e *engine, w *worker, refs map[int32]int32) {
	t.Helper()
	ph := w.ph
	distinct := map[int32]bool{}
	open := 0
	for _, h := range ph.open {
		if h.ended {
			continue
		}
		open++
		require.Same(t, w, h.src)
		require.NotEqual(t, StateRemoved, w.state, "a hold on removed worker %d", w.id)
		require.True(t, h.r.holding(), "hold of %s not its request's outstanding handoff", h.r.id)
		require.NotEqual(t, StateRemoved, h.dst.state, "handoff of %s sits on removed decode worker %d", h.r.id, h.dst.id)
		for _, s := range h.blocks {
			refs[s]++
			distinct[s] = true
		}
	}
	require.Equal(t, ph.n, open, "worker %d: open holds", w.id)
	require.Equal(t, ph.h, int64(len(distinct)), "worker %d: held blocks H", w.id)
	for s, n := range ph.refs {
		if n > 0 {
			require.True(t, distinct[int32(s)], "worker %d: slot %d counted as held by no hold", w.id, s)
		}
	}
}

// checkPDEnd checks a finished run with pools: every handoff ended exactly once (landed or
// failed by one cause), no hold or held block is left, the report's counts agree with the
// engine's, and no request's status contradicts its handoff.
func checkPDEnd(t *testing.T, e *engine, rep *Report) {
	t.Helper()
	pd := e.pd
	var failed int64
	for _, n := range pd.failed {
		failed += n
	}
	require.Equal(t, pd.handoffs, pd.landed+failed, "every handoff lands or fails, once")
	require.Empty(t, pd.leased, "a handoff under a fixed lease never ended")
	for _, r := range e.rows {
		if h := r.ho; h != nil {
			require.True(t, h.ended, "handoff of %s never ended", h.r.id)
			require.Nil(t, h.blocks, "handoff of %s keeps blocks", h.r.id)
		}
	}
	for _, w := range e.ws {
		if w.ph == nil {
			continue
		}
		require.Zero(t, w.ph.n)
		require.Zero(t, w.ph.h)
		for _, n := range w.ph.refs {
			require.Zero(t, n, "worker %d: a held block left referenced", w.id)
		}
	}
	ds := rep.Summary.Disaggregation
	require.NotNil(t, ds)
	require.Equal(t, pd.landed, ds.Landed)
	f := ds.Failed
	require.Equal(t, failed, f.LeaseExpired+f.SourceRemoved+f.SourceSkipped+f.Forced+f.DecodeRemoved)
	require.LessOrEqual(t, ds.Recomputed, failed-f.DecodeRemoved)
	require.LessOrEqual(t, ds.HeldBlockSecondsDraining, ds.HeldBlockSeconds)
	var landedTS, failedTS int64
	for _, b := range rep.Timeseries.Buckets {
		require.NotNil(t, b.PoolColumns)
		landedTS += b.HandoffsLanded
		failedTS += b.HandoffsFailed
		require.Equal(t, b.Active, b.PrefillActive+b.DecodeActive, "t %v: active over both pools", b.TMS)
		require.Equal(t, b.Draining, b.PrefillDraining+b.DecodeDraining)
		require.Equal(t, b.Starting, b.PrefillStarting+b.DecodeStarting)
		require.Zero(t, b.PullsStaged+b.PullsLanded+b.PullsRejected)
	}
	require.Equal(t, ds.Landed, landedTS)
	require.Equal(t, failed, failedTS)
	for _, w := range rep.Workers {
		require.Zero(t, w.PullsServed+w.PullsReceived)
		if w.Role == RolePrefill {
			require.Zero(t, w.RequestsCompleted, "prefill worker %d completed requests", w.ID)
		}
	}
	for _, r := range rep.Requests {
		if r.Status == StatusFailed {
			require.NotNil(t, r.DoneMS)
			_, ok := r.PrefillWorker.Value()
			require.True(t, ok, "%s failed without a handoff", r.ID)
		}
		if r.Status == StatusCompleted {
			_, ok := r.TransferMS.Value()
			_, rec := r.HandoffWaitMS.Value()
			require.True(t, ok || rec, "%s completed without a handoff", r.ID)
		}
	}
}

// checkPoolAutoscalers holds each pool's decisions against the rules of one autoscaler.
func checkPoolAutoscalers(t *testing.T, s *Scenario, rep *Report) {
	t.Helper()
	pa := s.PoolAutoscalers
	if pa == nil {
		require.Nil(t, rep.Autoscaler)
		require.Len(t, rep.Workers, s.InitialWorkers())
		return
	}
	require.NotNil(t, rep.Autoscaler)
	d := s.Disaggregation
	for _, p := range []struct {
		role string
		a    *Autoscaler
		n    int
	}{{RolePrefill, pa.Prefill, d.Prefill.Workers}, {RoleDecode, pa.Decode, d.Decode.Workers}} {
		var ds []Decision
		for _, x := range rep.Autoscaler.Decisions {
			if x.Role == p.role {
				ds = append(ds, x)
			}
		}
		if p.a == nil {
			require.Empty(t, ds, "decisions for the %s pool without its autoscaler", p.role)
			continue
		}
		one := *s
		one.Autoscaler, one.Fleet.Workers = p.a, p.n
		checkDecisions(t, &one, ds)
	}
	for i := 1; i < len(rep.Autoscaler.Decisions); i++ {
		a, b := rep.Autoscaler.Decisions[i-1], rep.Autoscaler.Decisions[i]
		require.True(t, a.TMS < b.TMS || a.TMS == b.TMS && a.Role == RolePrefill, "decisions in time order, prefill first")
	}
}
