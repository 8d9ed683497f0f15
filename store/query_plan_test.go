package store

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
)

// The counts that every submission and quota check makes use their indexes on SQLite. With the
// statuses bound as parameters SQLite cannot tell that the query's WHERE implies the partial
// index's, and without an index on owner it reads every row to its last column, owner, through
// the overflow pages of what precedes it (BenchmarkUsageOf: 23 ms against 0.1 ms on 500 runs
// with 50 KB summaries; 25 ms against 0.1 ms with 20 MB of traces stored).
func TestCountsUseTheirIndexes(t *testing.T) {
	ctx := context.Background()
	s, err := Open(ctx, filepath.Join(t.TempDir(), "plan.db")) // SQLite, whatever the suite runs on
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, c := range []struct{ query, index string }{
		{ownerUnfinishedRunsSQL, "runs_owner_unfinished"},
		{ownerTraceBytesSQL, "traces_owner"},
		{ownerCalibrationBytesSQL, "calibrations_owner"},
		{ownerSweepsSQL, "sweeps_owner_active"},
	} {
		rows, err := s.reader.QueryContext(ctx, "EXPLAIN QUERY PLAN "+c.query, "alice")
		if err != nil {
			t.Fatal(err)
		}
		var plan []string
		for rows.Next() {
			var id, parent, unused int
			var detail string
			if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
				t.Fatal(err)
			}
			plan = append(plan, detail)
		}
		rows.Close()
		if got := strings.Join(plan, "; "); !strings.Contains(got, "INDEX "+c.index) {
			t.Errorf("%s: plan %q does not use %s", c.query, got, c.index)
		}
	}
}
