package web

import (
	"bytes"
	"context"
	"flag"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/scalein-planner/scalein/sim"
	"github.com/scalein-planner/scalein/templates"
	"github.com/scalein-planner/scalein/web/format"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// fixedReport is a hand-built report: two drained workers (one forced) and some pulls.
func fixedReport() *sim.Report {
	return &sim.Report{
		Schema: sim.ReportSchema, Name: "golden", ScenarioID: "aaaaaaaaaaaaaaaa",
		Summary: sim.Summary{
			Requests:      sim.RequestCounts{Total: 12, Completed: 11, Killed: 1},
			TTFTMS:        sim.Distribution{Mean: ptr(4.5), P50: ptr(3.000124), P90: ptr(9), P99: ptr(12.75), Max: ptr(12.75)},
			E2EMS:         sim.Distribution{Mean: ptr(40), P50: ptr(38), P90: ptr(60), P99: ptr(71.25), Max: ptr(71.25)},
			DurationMS:    151.335545,
			WorkerSeconds: 12345.5,
		},
		KVCR: sim.KVCRCounts{Hints: 5, Staged: 3, Success: 1, Partial: 2, RejectedDraining: 1, Blocks: 16, Bytes: 33554432},
		Workers: []sim.WorkerRow{
			{ID: 0, FinalState: "active"},
			{ID: 1, FinalState: "removed", MarkedAtMS: ptr(10), LastWorkMS: ptr(50), RemovedAtMS: ptr(151.335545), DrainMS: ptr(141.335545), PinWaitMS: ptr(101.335545)},
			{ID: 2, FinalState: "removed", MarkedAtMS: ptr(10), LastWorkMS: ptr(60), RemovedAtMS: ptr(110), DrainMS: ptr(100), PinWaitMS: ptr(0), GraceDeadlineMS: ptr(110), Forced: true, RequestsKilled: 1},
		},
	}
}

func TestHeadlineTableGolden(t *testing.T) {
	var buf bytes.Buffer
	require.NoError(t, templates.HeadlineTable(figureCells(sim.Headline(fixedReport()))).Render(context.Background(), &buf))
	golden := filepath.Join("testdata", "headline.golden.html")
	if *update {
		require.NoError(t, os.WriteFile(golden, buf.Bytes(), 0o644))
	}
	want, err := os.ReadFile(golden)
	require.NoError(t, err, "run go test ./web -run Golden -update to create it")
	assert.Equal(t, string(want), buf.String())
	// Spot checks that do not depend on the golden file being right.
	// Readable in the cell, exact in its title (no raw float where a person reads).
	assert.Contains(t, buf.String(), `title="151.335545 ms">151 ms<`)
	assert.Contains(t, buf.String(), `title="101.335545 ms">101 ms<`)
}

func TestWorkersTableFiltersDrained(t *testing.T) {
	rep := fixedReport()
	drainedOnly, n := workersTable(rep, false, format.Clock{})
	assert.Equal(t, 2, n)
	require.Len(t, drainedOnly.Rows, 2)
	assert.Equal(t, "1", drainedOnly.Rows[0][0])
	assert.Equal(t, "yes", drainedOnly.Rows[1][8], "worker 2 was forced")
	all, _ := workersTable(rep, true, format.Clock{})
	assert.Len(t, all.Rows, 3)
	assert.Equal(t, format.Dash, all.Rows[0][2], "worker 0 was never marked")
	// No raw floats: instants and durations with their unit, from the start or in clock time.
	for _, row := range drainedOnly.Rows {
		for _, cell := range row[2:8] {
			assert.NotRegexp(t, `\.\d{4,}`, cell, "a raw float in %v", row)
		}
	}
	assert.Regexp(t, ` (ms|s)$`, drainedOnly.Rows[0][3], "own work ended, from the start")
	clock, _ := workersTable(rep, false, format.ClockAt(time.Date(2026, 12, 3, 3, 7, 12, 0, time.UTC), true))
	assert.Regexp(t, `^03:07:1\d$`, clock.Rows[0][3], "own work ended, in clock time")
	assert.Contains(t, clock.Caption, "UTC clock time")
}

func TestFormatNumber(t *testing.T) {
	for in, want := range map[float64]string{
		0: "0", 3.000124: "3.000124", 12345.5: "12\u202f345.5", 1234: "1234", -0.0000001: "0", 33554432: "33\u202f554\u202f432",
	} {
		assert.Equal(t, want, format.Number(in), "%v", in)
	}
}
