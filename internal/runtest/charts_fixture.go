package runtest

import "github.com/scalein-planner/scalein/sim"

// MS is a pointer to a millisecond figure, as reports hold them.
func MS(v float64) *float64 { return &v }

// ChartsReport is a small hand-built report for the chart tests: 4 workers, 10 ms buckets over
// 57 ms; w3 is drained at 10 ms, finishes its own work at 25 ms and is removed at 40 ms (15 ms
// of pin wait); w2 is drained at 20 ms and force-removed at its grace deadline, 50 ms.
func ChartsReport() *sim.Report {
	return &sim.Report{
		Schema: sim.ReportSchema,
		Summary: sim.Summary{
			DurationMS: 57,
			TTFTMS:     sim.Distribution{Mean: MS(12), P50: MS(10), P90: MS(20), P99: MS(31), Max: MS(31)},
		},
		Workers: []sim.WorkerRow{
			{ID: 0, FinalState: sim.StateActive},
			{ID: 1, FinalState: sim.StateActive},
			{ID: 2, FinalState: sim.StateRemoved, MarkedAtMS: MS(20), LastWorkMS: MS(50), RemovedAtMS: MS(50),
				DrainMS: MS(30), PinWaitMS: MS(0), GraceDeadlineMS: MS(50), Forced: true},
			{ID: 3, FinalState: sim.StateRemoved, MarkedAtMS: MS(10), LastWorkMS: MS(25), RemovedAtMS: MS(40),
				DrainMS: MS(30), PinWaitMS: MS(15)},
		},
		Timeseries: sim.Timeseries{BucketMS: 10, Buckets: []sim.Bucket{
			{TMS: 0, Active: 4, PullsStaged: 2, PullsLanded: 0, TTFTP50MS: MS(8)},
			{TMS: 10, Active: 3, Draining: 1, PullsStaged: 1, PullsLanded: 2, PullsRejected: 1, TTFTP50MS: MS(12)},
			{TMS: 20, Active: 2, Draining: 2, PullsLanded: 1, PullsRejected: 3},
			{TMS: 30, Active: 2, Draining: 2, TTFTP50MS: MS(31)},
			{TMS: 40, Active: 2, Draining: 1},
			{TMS: 50, Active: 2},
		}},
	}
}
