package store_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/klauspost/compress/gzip"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/scalein-planner/scalein/store"
)

// bigReport is a report-like JSON document of about n KiB, with per-request rows that vary so
// it does not compress to nothing.
func bigReport(kib int) []byte {
	var b strings.Builder
	b.WriteString(`{"digest":"x","requests":[`)
	for i := 0; b.Len() < kib<<10; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"id":"r%d","arrival_ms":%d.%03d,"first_token_ms":%d.%d}`, i, i*7, (i*7919)%1000, i*7+i%97, i%13)
	}
	b.WriteString(`]}`)
	return []byte(b.String())
}

// finishedRun stores a done run whose report is report.
func finishedRun(t *testing.T, s *store.Store, id string, report []byte) {
	t.Helper()
	ctx := context.Background()
	_, err := s.SubmitRuns(ctx, []store.NewRun{newRun(id)}, 0, t0, nil)
	require.NoError(t, err)
	run, err := s.ClaimRun(ctx, id, "host:1", 3, t0)
	require.NoError(t, err)
	require.NoError(t, s.FinishClaimed(ctx, id, run.Attempts, report, []byte(`{}`), nil, t0))
}

// TestReportChunks: a report of several chunks reads back byte for byte, as JSON and as the
// gzip stream, whose length is GzipBytes; nothing reads a whole report but GetReportJSON.
func TestReportChunks(t *testing.T) {
	ctx := context.Background()
	s := mustOpen(t)
	report := bigReport(3 << 10) // 3 MiB: several 64 KiB chunks
	finishedRun(t, s, "big", report)

	var chunks, stored int64
	require.NoError(t, s.DB().QueryRowContext(ctx, `SELECT count(*), sum(length(data)) FROM run_report_chunks WHERE run_id = ?`, "big").
		Scan(&chunks, &stored))
	assert.Greater(t, chunks, int64(1))
	var inRuns []byte
	require.NoError(t, s.DB().QueryRowContext(ctx, `SELECT report_json FROM runs WHERE id = ?`, "big").Scan(&inRuns))
	assert.Nil(t, inRuns, "runs.report_json stays empty")

	before := s.ReportReads()
	rep, err := s.OpenReport(ctx, "big")
	require.NoError(t, err)
	assert.Equal(t, before+1, s.ReportReads())
	assert.EqualValues(t, len(report), rep.JSONBytes)
	assert.Equal(t, stored, rep.GzipBytes)
	assert.Less(t, rep.GzipBytes, int64(len(report))/3, "the rows compress")

	rc, err := rep.JSON(ctx)
	require.NoError(t, err)
	got, err := io.ReadAll(rc)
	require.NoError(t, err)
	require.NoError(t, rc.Close())
	assert.True(t, bytes.Equal(report, got), "the JSON reads back byte for byte")

	var gz bytes.Buffer
	n, err := rep.WriteGzipTo(ctx, &gz)
	require.NoError(t, err)
	assert.Equal(t, rep.GzipBytes, n)
	zr, err := gzip.NewReader(&gz)
	require.NoError(t, err)
	got, err = io.ReadAll(zr)
	require.NoError(t, err)
	assert.True(t, bytes.Equal(report, got), "the gzip stream is one gzip member of the report")

	whole, err := s.GetReportJSON(ctx, "big")
	require.NoError(t, err)
	assert.True(t, bytes.Equal(report, whole))

	t.Run("NoReport", func(t *testing.T) {
		_, err := s.SubmitRuns(ctx, []store.NewRun{newRun("queued")}, 0, t0, nil)
		require.NoError(t, err)
		_, err = s.OpenReport(ctx, "queued")
		assert.ErrorIs(t, err, store.ErrNotFound)
		_, err = s.OpenReport(ctx, "nope")
		assert.ErrorIs(t, err, store.ErrNotFound)
		b, err := s.GetReportJSON(ctx, "queued")
		require.NoError(t, err)
		assert.Nil(t, b)
	})

	t.Run("Damaged", func(t *testing.T) {
		finishedRun(t, s, "damaged", report)
		_, err := s.DB().ExecContext(ctx, `DELETE FROM run_report_chunks WHERE run_id = ? AND seq = 1`, "damaged")
		require.NoError(t, err)
		rep, err := s.OpenReport(ctx, "damaged")
		require.NoError(t, err)
		rc, err := rep.JSON(ctx)
		require.NoError(t, err)
		_, err = io.ReadAll(rc)
		assert.ErrorContains(t, err, "chunk 1 of")
		_, err = rep.WriteGzipTo(ctx, io.Discard)
		assert.ErrorContains(t, err, "is missing")

		// A chunk whose bytes changed fails gzip's check instead of reading wrong JSON.
		finishedRun(t, s, "flipped", report)
		_, err = s.DB().ExecContext(ctx, `UPDATE run_report_chunks SET data = ? WHERE run_id = ? AND seq = 2`,
			bytes.Repeat([]byte{0x55}, 64<<10), "flipped")
		require.NoError(t, err)
		_, err = s.GetReportJSON(ctx, "flipped")
		assert.Error(t, err)
	})
}

// TestReportStoredBeforeChunks: a report stored whole in runs.report_json (before migration
// 00007) reads the same; its first read moves it into chunks and clears the column.
func TestReportStoredBeforeChunks(t *testing.T) {
	ctx := context.Background()
	s := mustOpen(t)
	report := bigReport(600)
	finishedRun(t, s, "old", report)
	// Put it back the way an earlier version stored it.
	_, err := s.DB().ExecContext(ctx, `DELETE FROM run_report_chunks WHERE run_id = ?`, "old")
	require.NoError(t, err)
	_, err = s.DB().ExecContext(ctx, `UPDATE runs SET report_json = ?, report_bytes = NULL, report_gzip_bytes = NULL, report_chunks = NULL WHERE id = ?`,
		report, "old")
	require.NoError(t, err)

	got, err := s.GetReportJSON(ctx, "old")
	require.NoError(t, err)
	assert.True(t, bytes.Equal(report, got))

	var chunks int64
	var inRuns []byte
	require.NoError(t, s.DB().QueryRowContext(ctx, `SELECT report_json, report_chunks FROM runs WHERE id = ?`, "old").Scan(&inRuns, &chunks))
	assert.Nil(t, inRuns, "moved out of runs.report_json")
	assert.Greater(t, chunks, int64(0))

	rep, err := s.OpenReport(ctx, "old")
	require.NoError(t, err)
	assert.EqualValues(t, len(report), rep.JSONBytes)
	rc, err := rep.JSON(ctx)
	require.NoError(t, err)
	got, err = io.ReadAll(rc)
	require.NoError(t, err)
	assert.True(t, bytes.Equal(report, got), "the chunks hold the same report")
}

// TestRequeueDropsReportChunks: a done run's report is never dropped, but a run put back in the
// queue loses whatever report rows an earlier attempt left, so a new report never mixes with
// them.
func TestRequeueDropsReportChunks(t *testing.T) {
	ctx := context.Background()
	s := mustOpen(t)
	report := bigReport(300)
	finishedRun(t, s, "r", report)
	// Force it back to running and requeue it (as a shutdown would).
	_, err := s.DB().ExecContext(ctx, `UPDATE runs SET status = 'running' WHERE id = ?`, "r")
	require.NoError(t, err)
	require.NoError(t, s.Requeue(ctx, "r"))
	var chunks int64
	require.NoError(t, s.DB().QueryRowContext(ctx, `SELECT count(*) FROM run_report_chunks WHERE run_id = ?`, "r").Scan(&chunks))
	assert.Zero(t, chunks)
	_, err = s.OpenReport(ctx, "r")
	assert.ErrorIs(t, err, store.ErrNotFound)
}

// TestFinishClaimedReport: a report written into a ReportWriter in pieces is stored as the same
// report; an empty or missing one is refused.
func TestFinishClaimedReport(t *testing.T) {
	ctx := context.Background()
	s := mustOpen(t)
	report := bigReport(700)
	_, err := s.SubmitRuns(ctx, []store.NewRun{newRun("w")}, 0, t0, nil)
	require.NoError(t, err)
	run, err := s.ClaimRun(ctx, "w", "host:1", 3, t0)
	require.NoError(t, err)

	assert.ErrorIs(t, s.FinishClaimedReport(ctx, "w", run.Attempts, nil, []byte(`{}`), nil, t0), store.ErrInvalid)
	assert.ErrorIs(t, s.FinishClaimedReport(ctx, "w", run.Attempts, store.NewReportWriter(), []byte(`{}`), nil, t0), store.ErrInvalid)

	w := store.NewReportWriter()
	for rest := report; len(rest) > 0; {
		n := min(len(rest), 1000)
		_, err := w.Write(rest[:n])
		require.NoError(t, err)
		rest = rest[n:]
	}
	assert.EqualValues(t, len(report), w.JSONBytes())
	require.NoError(t, s.FinishClaimedReport(ctx, "w", run.Attempts, w, []byte(`{}`), nil, t0))
	_, err = w.Write([]byte("x"))
	assert.Error(t, err, "a stored report takes no more writes")
	got, err := s.GetReportJSON(ctx, "w")
	require.NoError(t, err)
	assert.True(t, bytes.Equal(report, got))
}

// TestReplaceSummary: a summary is replaced only while it is still the one it was derived from.
func TestReplaceSummary(t *testing.T) {
	ctx := context.Background()
	s := mustOpen(t)
	finishedRun(t, s, "sum", []byte(`{"r":1}`)) // its summary is {}
	assert.ErrorIs(t, s.ReplaceSummary(ctx, "sum", []byte(`{}`), nil), store.ErrInvalid)
	require.NoError(t, s.ReplaceSummary(ctx, "sum", []byte(`{"other":1}`), []byte(`{"v":2}`)))
	run, err := s.GetRun(ctx, "sum")
	require.NoError(t, err)
	assert.Equal(t, `{}`, string(run.SummaryJSON), "not the summary it was derived from: left alone")
	require.NoError(t, s.ReplaceSummary(ctx, "sum", []byte(`{}`), []byte(`{"v":2}`)))
	run, err = s.GetRun(ctx, "sum")
	require.NoError(t, err)
	assert.Equal(t, `{"v":2}`, string(run.SummaryJSON))
}
