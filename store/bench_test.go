package store_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
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
