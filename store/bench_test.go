package store_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/scalein-planner/scalein/store"
)

// fakeReport builds about size bytes of report-like JSON (per-request rows of numbers).
func fakeReport(size int) []byte {
	var b strings.Builder
	b.WriteString(`{"requests":[`)
	for i := 0; b.Len() < size; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"id":%d,"worker":"w%d","ttft_ms":%.6f,"pulled_blocks":%d}`, i, i%16, float64(i)*1.37, i%97)
	}
	b.WriteString(`]}`)
	return []byte(b.String())
}

// BenchmarkGetRun reads a done run with a ~2 MB report the way report.json does (GetReportJSON;
// pages read GetRun, which leaves the report out).
func BenchmarkGetRun(b *testing.B) {
	ctx := context.Background()
	s := mustOpen(b)
	report := fakeReport(2 << 20)
	_, _, err := s.CreateRun(ctx, "big", "", []byte(`{"s":1}`), t0)
	require.NoError(b, err)
	require.NoError(b, s.StartRun(ctx, "big", t0))
	require.NoError(b, s.FinishRun(ctx, "big", report, []byte(`{"h":1}`), t0))
	b.SetBytes(int64(len(report)))
	for b.Loop() {
		got, err := s.GetReportJSON(ctx, "big")
		if err != nil || len(got) != len(report) {
			b.Fatalf("GetReportJSON: %v, %d bytes", err, len(got))
		}
	}
}

// BenchmarkGetRunStatus is the polling path (progress bar, SSE).
func BenchmarkGetRunStatus(b *testing.B) {
	ctx := context.Background()
	s := mustOpen(b)
	_, _, err := s.CreateRun(ctx, "r", "", []byte(`{"s":1}`), t0)
	require.NoError(b, err)
	require.NoError(b, s.StartRun(ctx, "r", t0))
	for b.Loop() {
		if _, err := s.GetRunStatus(ctx, "r"); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSetProgress is the write a running simulation makes a few times a second.
func BenchmarkSetProgress(b *testing.B) {
	ctx := context.Background()
	s := mustOpen(b)
	_, _, err := s.CreateRun(ctx, "r", "", []byte(`{"s":1}`), t0)
	require.NoError(b, err)
	require.NoError(b, s.StartRun(ctx, "r", t0))
	i := 0
	for b.Loop() {
		i++
		if err := s.SetProgress(ctx, "r", float64(i%100)/100); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkUsageOf is the read of a user's quota usage that every run creation, sweep and upload
// makes (twice: early, and in its write transaction), on a store of 500 done runs with 50 KB
// summaries (stored in the run's row, before its owner), and 5 queued runs of the user. Counting the user's unfinished runs must use the
// partial index, not read every run (the soak test of issue 29).
func BenchmarkUsageOf(b *testing.B) {
	ctx := context.Background()
	s := storeWithDoneRuns(b)
	for b.Loop() {
		u, err := s.UsageOf(ctx, "alice")
		if err != nil || u.UnfinishedRuns != 5 {
			b.Fatalf("UsageOf: %v, %d unfinished", err, u.UnfinishedRuns)
		}
	}
}

// BenchmarkOwnersOf reads the owners of a page of 50 runs (the runs list's "by …") on the same
// store.
func BenchmarkOwnersOf(b *testing.B) {
	ctx := context.Background()
	s := storeWithDoneRuns(b)
	ids := make([]string, 50)
	for i := range ids {
		ids[i] = fmt.Sprintf("done-%d", i*7)
	}
	for b.Loop() {
		owners, err := s.OwnersOf(ctx, store.OwnedRun, ids)
		if err != nil || len(owners) != len(ids) {
			b.Fatalf("OwnersOf: %v, %d owners", err, len(owners))
		}
	}
}

// storeWithDoneRuns is a store of 500 done runs of 20 users with 50 KB summaries, 5 queued runs
// of alice, and 20 traces of 1 MB gzipped.
func storeWithDoneRuns(b *testing.B) *store.Store {
	ctx := context.Background()
	s := mustOpen(b)
	report := fakeReport(50 << 10)
	for i := range 500 {
		id := fmt.Sprintf("done-%d", i)
		_, _, err := s.CreateRun(store.WithOwner(ctx, fmt.Sprintf("user%d", i%20)), id, "", []byte(`{"s":1}`), t0)
		require.NoError(b, err)
		require.NoError(b, s.StartRun(ctx, id, t0))
		require.NoError(b, s.FinishRun(ctx, id, report, []byte(`{"h":1}`), t0))
		require.NoError(b, s.SetSummary(ctx, id, report))
	}
	for i := range 5 {
		_, _, err := s.CreateRun(store.WithOwner(ctx, "alice"), fmt.Sprintf("queued-%d", i), "", []byte(`{"s":1}`), t0)
		require.NoError(b, err)
	}
	// And 20 traces of other users, 1 MB each gzipped (stored in the trace's row, before its
	// owner).
	for i := range 20 {
		rng := rand.New(rand.NewPCG(uint64(i), 1))
		content := make([]byte, 2<<20)
		for j := range content {
			content[j] = "0123456789abcdef"[rng.IntN(16)]
		}
		sum := sha256.Sum256(content)
		_, err := s.PutTrace(store.WithOwner(ctx, fmt.Sprintf("user%d", i)), hex.EncodeToString(sum[:]), "t", content, 1, t0)
		require.NoError(b, err)
	}
	return s
}
