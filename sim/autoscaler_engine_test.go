package sim

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// m3 builds a scenario on E1's fleet and timing (docs/model.md#model-3 worked examples): workers, a
// round_robin router with extra router fields, an autoscaler object (or "") and the requests.
func m3(t *testing.T, workers int, router, autoscaler, scaleIn, requests string) *Scenario {
	t.Helper()
	js := `{` + fmt.Sprintf(e1Fleet, workers, 64, 0.0) + `,
		"router": {"policy": "round_robin", "hints": false` + router + `},`
	if autoscaler != "" {
		js += `"autoscaler": ` + autoscaler + `,`
	}
	if scaleIn != "" {
		js += `"scale_in": ` + scaleIn + `,`
	}
	js += `"workload": {"type": "requests", "requests": [` + requests + `]}}`
	return mustParse(t, js)
}

// bucketAt is the time-series bucket that contains instant tMS.
func bucketAt(t *testing.T, rep *Report, tMS float64) Bucket {
	t.Helper()
	ts := rep.Timeseries
	for _, b := range ts.Buckets {
		if b.TMS <= tMS && tMS < b.TMS+ts.BucketMS {
			return b
		}
	}
	t.Fatalf("no bucket holds %v ms", tMS)
	return Bucket{}
}

func reasons(rep *Report) []string {
	var out []string
	for _, d := range rep.Autoscaler.Decisions {
		out = append(out, d.Reason)
	}
	return out
}

// E5 of docs/model.md#model-3: the scale-down window, seeded with the initial fleet, holds a scale-down.
func TestE5WindowHoldsScaleDown(t *testing.T) {
	as := `{"interval_ms": 10, "metric": "requests_per_worker", "target": 1, "tolerance": 0,
		"min_workers": 1, "scale_down_window_ms": %d, "grace_ms": null}`
	req := `{"id": "r0", "at_ms": 0, "blocks": ["A"], "output_tokens": 100, "route_to": 0}`
	rep := mustRun(t, m3(t, 3, "", fmt.Sprintf(as, 20), "", req))
	require.Len(t, rep.Autoscaler.Decisions, 10)
	assert.Equal(t, []string{"stabilized", "stabilized", "scale_down", "within_tolerance", "within_tolerance",
		"within_tolerance", "within_tolerance", "within_tolerance", "within_tolerance", "within_tolerance"}, reasons(rep))
	d := rep.Autoscaler.Decisions[2]
	assert.Equal(t, []int{2, 1}, d.Drained)
	assert.Equal(t, 3, *d.Ready)
	assert.Equal(t, 0.333, *d.Usage)
	assert.Equal(t, 30.0, ms(rep.Workers[1].RemovedAtMS))
	assert.Equal(t, 30.0, ms(rep.Workers[2].RemovedAtMS))
	assert.Equal(t, 102.0, ms(reqRow(t, rep, "r0").DoneMS))
	assert.Equal(t, 0.162, rep.Summary.WorkerSeconds)
	assert.Equal(t, WorkerCounts{Initial: 3, Peak: 3, Final: 1}, rep.Summary.Workers)

	rep = mustRun(t, m3(t, 3, "", fmt.Sprintf(as, 0), "", req))
	assert.Equal(t, ReasonScaleDown, rep.Autoscaler.Decisions[0].Reason)
	assert.Equal(t, 10.0, rep.Autoscaler.Decisions[0].TMS)
	assert.Equal(t, 10.0, ms(rep.Workers[2].RemovedAtMS))
	assert.Equal(t, 0.122, rep.Summary.WorkerSeconds)
}

// four requests that fill one E1 worker from 0 to 42 ms
const fourAt = `{"id": "r0", "at_ms": %[1]g, "blocks": ["A"], "output_tokens": 40},
	{"id": "r1", "at_ms": %[1]g, "blocks": ["B"], "output_tokens": 40},
	{"id": "r2", "at_ms": %[1]g, "blocks": ["C"], "output_tokens": 40},
	{"id": "r3", "at_ms": %[1]g, "blocks": ["D"], "output_tokens": 40}`

// E6 of docs/model.md#model-3: a cold start.
func TestE6ColdStart(t *testing.T) {
	as := `{"interval_ms": 10, "target": 2, "tolerance": 0, "max_workers": 2, "startup_ms": 5, "scale_up_window_ms": 0}`
	rep := mustRun(t, m3(t, 1, "", as, "", fmt.Sprintf(fourAt, 0.0)))
	require.Len(t, rep.Autoscaler.Decisions, 4)
	d := rep.Autoscaler.Decisions[0]
	one, two, three, four, zero := 1, 2, 3, 4.0, 0
	ratio := 2.0
	assert.Equal(t, Decision{TMS: 10, Ready: &one, Unready: &zero, Missing: &zero, Usage: &four, Ratio: &ratio,
		Rec: &two, Stab: &two, Up: &two, Down: &two, Limit: &three, Desired: 2, Current: 1, Reason: ReasonScaleUp,
		Drained: []int{}, Cancelled: []int{}, Reactivated: []int{}, Started: []int{1}}, d)
	assert.Equal(t, []string{"scale_up", "within_tolerance", "within_tolerance", "within_tolerance"}, reasons(rep))
	w1 := rep.Workers[1]
	assert.Equal(t, 10.0, ms(w1.StartedAtMS))
	assert.Equal(t, 15.0, ms(w1.ActiveAtMS))
	assert.Equal(t, int64(0), w1.RequestsCompleted)
	assert.Equal(t, StateActive, w1.FinalState)
	assert.Nil(t, rep.Workers[0].StartedAtMS)
	assert.Nil(t, rep.Workers[0].ActiveAtMS)
	assert.Equal(t, 42.0, rep.Summary.DurationMS)
	assert.Equal(t, 0.074, rep.Summary.WorkerSeconds)
	assert.Equal(t, WorkerCounts{Initial: 1, Peak: 2, Final: 2}, rep.Summary.Workers)
	// Starting and active workers per bucket: w1 starting in [10, 15).
	assert.Equal(t, int64(1), bucketAt(t, rep, 12).Starting)
	assert.Equal(t, int64(1), bucketAt(t, rep, 12).Active)
	assert.Equal(t, int64(0), bucketAt(t, rep, 16).Starting)
	assert.Equal(t, int64(2), bucketAt(t, rep, 16).Active)
}

// The end-of-run rule: a worker still starting when the autoscaler stops stays starting.
func TestAutoscalerStopsWithWorkersStarting(t *testing.T) {
	as := `{"interval_ms": 10, "target": 2, "tolerance": 0, "max_workers": 2, "startup_ms": 1000}`
	rep := mustRun(t, m3(t, 1, "", as, "", fmt.Sprintf(fourAt, 0.0)))
	assert.Len(t, rep.Autoscaler.Decisions, 4) // 10 … 40; none after the last request at 42
	w1 := rep.Workers[1]
	assert.Equal(t, StateStarting, w1.FinalState)
	assert.Nil(t, w1.ActiveAtMS)
	assert.Equal(t, 42.0, rep.Summary.DurationMS)
	assert.Equal(t, 0.074, rep.Summary.WorkerSeconds) // its GPUs are held from 10 ms
	assert.Equal(t, WorkerCounts{Initial: 1, Peak: 2, Final: 2}, rep.Summary.Workers)
}

// E7 of docs/model.md#model-3: migration instead of a kill.
func TestE7MigrationInsteadOfKill(t *testing.T) {
	req := `{"id": "r0", "at_ms": 0, "blocks": ["A"], "output_tokens": 20, "route_to": 1}`
	sched := `[{"at_ms": 5, "workers": [1], "grace_ms": 5}]`
	rep := mustRun(t, m3(t, 2, `, "migration_limit": 1`, "", sched, req))
	r := reqRow(t, rep, "r0")
	assert.Equal(t, StatusCompleted, r.Status)
	assert.Equal(t, 0, *r.Worker)
	assert.Equal(t, 3.0, ms(r.FirstTokenMS))
	assert.Equal(t, 24.0, ms(r.DoneMS))
	assert.Equal(t, int64(1), r.Migrations)
	assert.Equal(t, int64(20), rep.Summary.Tokens.Output)
	assert.Equal(t, RequestCounts{Total: 1, Completed: 1, Killed: 0, Migrated: 1}, rep.Summary.Requests)
	assert.True(t, rep.Workers[1].Forced)
	assert.Equal(t, 10.0, ms(rep.Workers[1].RemovedAtMS))
	assert.Equal(t, 24.0, ms(rep.Summary.E2EMS.Max))
	assert.Equal(t, 3.0, ms(rep.Summary.TTFTMS.Max))
	assert.Nil(t, rep.Autoscaler)
	assert.Equal(t, int64(1), bucketAt(t, rep, 10).Migrated)
	var moved int64
	for _, b := range rep.Timeseries.Buckets {
		moved += b.Migrated
	}
	assert.Equal(t, int64(1), moved)

	rep = mustRun(t, m3(t, 2, "", "", sched, req))
	r = reqRow(t, rep, "r0")
	assert.Equal(t, StatusKilled, r.Status)
	assert.Equal(t, 10.0, ms(r.DoneMS))
	assert.Equal(t, int64(0), r.Migrations)
	assert.Equal(t, RequestCounts{Total: 1, Completed: 0, Killed: 1, Migrated: 0}, rep.Summary.Requests)
}

// A request migrated as often as the limit allows is killed at the next forced removal.
func TestMigrationLimitCountsMoves(t *testing.T) {
	req := `{"id": "r0", "at_ms": 0, "blocks": ["A"], "output_tokens": 40, "route_to": 2}`
	// w2 forced at 10: r0 moves to w0 (round robin from the cursor at 0); w0 forced at 20: killed.
	sched := `[{"at_ms": 5, "workers": [2], "grace_ms": 5}, {"at_ms": 15, "workers": [0], "grace_ms": 5}]`
	rep := mustRun(t, m3(t, 3, `, "migration_limit": 1`, "", sched, req))
	r := reqRow(t, rep, "r0")
	assert.Equal(t, StatusKilled, r.Status)
	assert.Equal(t, int64(1), r.Migrations)
	assert.Equal(t, 0, *r.Worker)
	assert.Equal(t, 20.0, ms(r.DoneMS))
	assert.Equal(t, int64(1), rep.Summary.Requests.Migrated)
	assert.Equal(t, int64(1), rep.Summary.Requests.Killed)
}

// Scale-down cancels starting workers first, the most recently started first; they are removed
// at once, never active.
func TestAutoscalerCancelsStartingFirst(t *testing.T) {
	as := `{"interval_ms": 10, "target": 1, "tolerance": 0, "max_workers": 3, "startup_ms": 100,
		"scale_down_window_ms": 0}`
	reqs := `{"id": "a", "at_ms": 0, "blocks": ["A"], "output_tokens": 15},
		{"id": "b", "at_ms": 0, "blocks": ["B"], "output_tokens": 15},
		{"id": "c", "at_ms": 0, "blocks": ["C"], "output_tokens": 15},
		{"id": "late", "at_ms": 35, "blocks": ["D"], "output_tokens": 1}`
	rep := mustRun(t, m3(t, 1, "", as, "", reqs))
	ds := rep.Autoscaler.Decisions
	require.GreaterOrEqual(t, len(ds), 3)
	assert.Equal(t, []int{1, 2}, ds[0].Started)
	assert.Equal(t, 3, ds[0].Desired)
	// Model 4: at 20 ms the ready pod is idle (ratio 0) and the two starting pods are missing,
	// counted at the target on a scale-down: floor(2000 / 3) = 666, new_ratio 0.666, rec
	// ceil(1.998) = 2: w2 (the newest) is cancelled. At 30 ms, still idle: floor(1000 / 2): rec 1,
	// w1. (The late request comes at 35 ms: busy at 30 ms, w0 would be at a ratio of exactly 1,
	// where the missing w1 gets no sample and the controller holds.)
	assert.Equal(t, ReasonScaleDown, ds[1].Reason)
	assert.Equal(t, 3, ds[1].Current)
	assert.Equal(t, 2, *ds[1].Missing)
	assert.Equal(t, 0.666, *ds[1].NewRatio)
	assert.Equal(t, []int{2}, ds[1].Cancelled)
	assert.Equal(t, []int{1}, ds[2].Cancelled)
	assert.Empty(t, ds[1].Drained)
	for _, id := range []int{1, 2} {
		w := rep.Workers[id]
		assert.Equal(t, StateRemoved, w.FinalState)
		assert.Equal(t, float64(40-10*id), ms(w.RemovedAtMS))
		assert.Nil(t, w.MarkedAtMS)
		assert.Nil(t, w.ActiveAtMS)
		assert.Nil(t, w.DrainMS)
		assert.Nil(t, w.PinWaitMS)
	}
	// w0 over the run (to 38 ms), w1 from 10 to 30, w2 from 10 to 20.
	assert.Equal(t, 38.0, rep.Summary.DurationMS)
	assert.Equal(t, 0.068, rep.Summary.WorkerSeconds)
	assert.Equal(t, WorkerCounts{Initial: 1, Peak: 3, Final: 1}, rep.Summary.Workers)
}

// reuse_draining: a scale-up makes a draining worker active again before starting a cold one.
func TestAutoscalerReusesDrainingWorker(t *testing.T) {
	as := `{"interval_ms": 10, "target": 1, "tolerance": 0, "max_workers": 2, "scale_down_window_ms": 0,
		"grace_ms": null, "reuse_draining": true}`
	reqs := `{"id": "long", "at_ms": 0, "blocks": ["A"], "output_tokens": 60, "route_to": 1},
		{"id": "b1", "at_ms": 15, "blocks": ["B"], "output_tokens": 20},
		{"id": "b2", "at_ms": 15, "blocks": ["C"], "output_tokens": 20},
		{"id": "b3", "at_ms": 15, "blocks": ["D"], "output_tokens": 20},
		{"id": "after", "at_ms": 25, "blocks": ["E"], "output_tokens": 1}`
	rep := mustRun(t, m3(t, 2, "", as, "", reqs))
	ds := rep.Autoscaler.Decisions
	// 10 ms: 2 active, 1 request: ratio 0.5, recommendation 1: w1 drained (it keeps "long").
	assert.Equal(t, ReasonScaleDown, ds[0].Reason)
	assert.Equal(t, []int{1}, ds[0].Drained)
	// 20 ms: only w0 counts (w1 is draining: ignored): 3 requests ask for 3, bounded by
	// max_workers 2: w1 is made active again.
	assert.Equal(t, 1, *ds[1].Ready)
	assert.Equal(t, 3.0, *ds[1].Usage)
	assert.Equal(t, 3, *ds[1].Rec)
	assert.Equal(t, 2, ds[1].Desired)
	assert.Equal(t, ReasonScaleUp, ds[1].Reason)
	assert.Equal(t, []int{1}, ds[1].Reactivated)
	assert.Empty(t, ds[1].Started)
	// 30 ms: 4 requests ask for 4, clamped to 2 = current.
	assert.Equal(t, ReasonAtBound, ds[2].Reason)
	// 40 ms: w1 drained again; it reports its last drain, which waits for "long" until 64 ms.
	assert.Equal(t, []int{1}, ds[3].Drained)
	w1 := rep.Workers[1]
	assert.Equal(t, StateRemoved, w1.FinalState)
	assert.Equal(t, int64(1), w1.Reactivations)
	assert.Equal(t, 40.0, ms(w1.MarkedAtMS))
	assert.Equal(t, 64.0, ms(w1.RemovedAtMS))
	assert.Equal(t, 24.0, ms(w1.DrainMS))
	// Round robin from the cursor after w0 sends "after" to w1, active again.
	assert.Equal(t, 1, *reqRow(t, rep, "after").Worker)
	assert.Equal(t, StatusCompleted, reqRow(t, rep, "long").Status)
	assert.Len(t, rep.Workers, 2)
}

// max_remove_per_tick drains one worker a decision.
func TestAutoscalerRemoveLimit(t *testing.T) {
	as := `{"interval_ms": 10, "target": 1, "tolerance": 0, "scale_down_window_ms": 0, "max_remove_per_tick": 1}`
	req := `{"id": "r0", "at_ms": 0, "blocks": ["A"], "output_tokens": 50, "route_to": 0}`
	rep := mustRun(t, m3(t, 4, "", as, "", req))
	ds := rep.Autoscaler.Decisions
	require.GreaterOrEqual(t, len(ds), 4)
	// Model 4: the limit is a policy [pods 1 per interval_ms], so desired is what it allows.
	for i, want := range [][]int{{3}, {2}, {1}, {}} {
		assert.Equal(t, want, ds[i].Drained, "decision %d", i)
		assert.Equal(t, max(3-i, 1), ds[i].Desired, "decision %d", i)
	}
	assert.Equal(t, ReasonWithinTolerance, ds[3].Reason)
}

// metric_delay_ms: the decision at 10 ms sees the sample taken at 5 ms.
func TestAutoscalerMetricDelay(t *testing.T) {
	as := `{"interval_ms": 10, "target": 2, "tolerance": 0, "max_workers": 2, "startup_ms": 5, "metric_delay_ms": %g}`
	rep := mustRun(t, m3(t, 1, "", fmt.Sprintf(as, 0.0), "", fmt.Sprintf(fourAt, 6.0)))
	assert.Equal(t, ReasonScaleUp, rep.Autoscaler.Decisions[0].Reason)
	rep = mustRun(t, m3(t, 1, "", fmt.Sprintf(as, 5.0), "", fmt.Sprintf(fourAt, 6.0)))
	d := rep.Autoscaler.Decisions[0]
	assert.Equal(t, 0.0, *d.Usage)
	assert.Equal(t, 0, *d.Rec)
	// The legacy window (300000 ms) holds the seed (10 ms, 1): stab 1 = current.
	assert.Equal(t, ReasonStabilized, d.Reason)
	assert.Equal(t, ReasonScaleUp, rep.Autoscaler.Decisions[1].Reason)
}

// kv_usage: the sum of the active workers' used blocks over gpu_blocks.
func TestAutoscalerKVUsage(t *testing.T) {
	as := `{"interval_ms": 10, "metric": "kv_usage", "target": 0.065, "tolerance": 0, "max_workers": 4, "startup_ms": 5}`
	rep := mustRun(t, m3(t, 1, "", as, "", fmt.Sprintf(fourAt, 0.0)))
	d := rep.Autoscaler.Decisions[0]
	// At 10 ms each request has 16 + 8 tokens: 2 blocks, 8 of 64 in all.
	// One pod samples ceil(1000 × 8 / 64) = 125 milli; 125 / 65 = 1.92: rec 2.
	assert.Equal(t, 0.125, *d.Usage)
	assert.Equal(t, 2, *d.Rec)
	assert.Equal(t, []int{1}, d.Started)
}

// rate_stages: first turns arrive only in stages of positive rate, none after the last stage.
func TestRateStagesShapeArrivals(t *testing.T) {
	s := mustParse(t, `{"fleet": {"workers": 4}, "report": {"per_request": true},
		"workload": {"type": "sessions", "sessions": {"count": 1000, "turns": 1, "output_tokens": 4,
		"rate_stages": [{"duration_ms": 1000, "rate_per_s": 0}, {"duration_ms": 1000, "rate_per_s": 50},
			{"duration_ms": 2000, "rate_per_s": 0}, {"duration_ms": 1000, "rate_per_s": 200}]}}}`)
	rep := mustRun(t, s)
	var mid, late int
	for _, r := range rep.Requests {
		require.True(t, strings.HasSuffix(r.ID, "-t1"))
		switch {
		case r.ArrivalMS >= 1000 && r.ArrivalMS < 2000:
			mid++
		case r.ArrivalMS >= 4000 && r.ArrivalMS < 5000:
			late++
		default:
			t.Fatalf("%s arrived at %v ms, outside the stages of positive rate", r.ID, r.ArrivalMS)
		}
	}
	// Poisson counts: 50 and 200 expected; far outside these bounds means a wrong rate.
	assert.InDelta(t, 50, mid, 25)
	assert.InDelta(t, 200, late, 60)
	assert.Less(t, int64(mid+late), int64(1000), "the stages end before count sessions")
}

// A scenario with an autoscaler and a migration limit gives the same report twice.
func TestModel3Deterministic(t *testing.T) {
	as := `{"interval_ms": 10, "target": 1, "tolerance": 0, "max_workers": 3, "startup_ms": 3,
		"scale_down_window_ms": 0, "grace_ms": 4, "reuse_draining": true}`
	reqs := fmt.Sprintf(fourAt, 0.0) + `, {"id": "x", "at_ms": 12, "blocks": ["X"], "output_tokens": 30}`
	a := mustRun(t, m3(t, 2, `, "migration_limit": 2`, as, "", reqs))
	b := mustRun(t, m3(t, 2, `, "migration_limit": 2`, as, "", reqs))
	assert.Equal(t, a.Digest, b.Digest)
	assert.Equal(t, a.Summary.Requests.Total, a.Summary.Requests.Completed+a.Summary.Requests.Killed)
}

// A worker made active again and not drained again keeps marked_at_ms, with null drain figures.
func TestReactivatedWorkerKeepsItsMark(t *testing.T) {
	as := `{"interval_ms": 10, "target": 1, "tolerance": 0, "max_workers": 2, "scale_down_window_ms": 0,
		"scale_up_window_ms": 0, "grace_ms": null, "reuse_draining": true, "min_workers": 1}`
	// "long" keeps w1 busy; the burst keeps the load at 2 per worker after the reactivation at
	// 20 until the run ends, so w1 is not drained again.
	reqs := `{"id": "long", "at_ms": 0, "blocks": ["A"], "output_tokens": 30, "route_to": 1},
		{"id": "b1", "at_ms": 15, "blocks": ["B"], "output_tokens": 20},
		{"id": "b2", "at_ms": 15, "blocks": ["C"], "output_tokens": 20}`
	rep := mustRun(t, m3(t, 2, "", as, "", reqs))
	ds := rep.Autoscaler.Decisions
	require.GreaterOrEqual(t, len(ds), 3)
	assert.Equal(t, []int{1}, ds[0].Drained)
	assert.Equal(t, []int{1}, ds[1].Reactivated)
	w1 := rep.Workers[1]
	assert.Equal(t, StateActive, w1.FinalState, "%+v", ds)
	assert.Equal(t, int64(1), w1.Reactivations)
	assert.Equal(t, 10.0, ms(w1.MarkedAtMS))
	assert.Nil(t, w1.DrainMS)
	assert.Nil(t, w1.PinWaitMS)
	assert.Nil(t, w1.RemovedAtMS)
}
