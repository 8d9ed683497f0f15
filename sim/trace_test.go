package sim

import (
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseTraceRows(t *testing.T) {
	rows, err := ParseTrace([]byte(smallTrace))
	require.NoError(t, err)
	require.Len(t, rows, 3)
	assert.Equal(t, TraceRow{Line: 1, TimestampMS: 0, InputLength: 700, OutputLength: 5, HashIDs: []int64{1, 2}}, rows[0])
	assert.Equal(t, 2, rows[1].Line)
	assert.Equal(t, 4, rows[2].Line, "blank lines count in line numbers")
	assert.Equal(t, 10.0, rows[2].TimestampMS, "equal timestamps are allowed")

	// CRLF line ends, fractional timestamps and integral floats are accepted.
	rows, err = ParseTrace([]byte("{\"timestamp\": 1.5, \"input_length\": 10.0, \"output_length\": 1, \"hash_ids\": [ ]}\r\n"))
	require.NoError(t, err)
	assert.Equal(t, 1.5, rows[0].TimestampMS)
	assert.Equal(t, 10, rows[0].InputLength)
	assert.Empty(t, rows[0].HashIDs)
}

func TestParseTraceErrors(t *testing.T) {
	ok := `{"timestamp": 5, "input_length": 600, "output_length": 1, "hash_ids": [0, 1]}`
	cases := []struct {
		name, line, want string
	}{
		{"not an object", `[1]`, "line 2: must be a JSON object"},
		{"bad json", `{"timestamp": 5,}`, "line 2: invalid JSON"},
		{"timestamp missing", `{"input_length": 1, "output_length": 1, "hash_ids": []}`, "line 2: timestamp: required"},
		{"timestamp negative", `{"timestamp": -1, "input_length": 1, "output_length": 1, "hash_ids": []}`, "line 2: timestamp: must be a number ≥ 0"},
		{"timestamp string", `{"timestamp": "5", "input_length": 1, "output_length": 1, "hash_ids": []}`, "line 2: timestamp: must be a number"},
		{"timestamp decreasing", `{"timestamp": 4, "input_length": 1, "output_length": 1, "hash_ids": []}`, "line 2: timestamp: 4 is earlier than the previous row's 5"},
		{"input zero", `{"timestamp": 5, "input_length": 0, "output_length": 1, "hash_ids": []}`, "line 2: input_length: must be an integer ≥ 1"},
		{"input fraction", `{"timestamp": 5, "input_length": 1.5, "output_length": 1, "hash_ids": []}`, "line 2: input_length: must be an integer ≥ 1"},
		{"input null", `{"timestamp": 5, "input_length": null, "output_length": 1, "hash_ids": []}`, "line 2: input_length: must be an integer ≥ 1"},
		{"output missing", `{"timestamp": 5, "input_length": 1, "hash_ids": []}`, "line 2: output_length: must be an integer ≥ 1"},
		{"hash ids missing", `{"timestamp": 5, "input_length": 1, "output_length": 1}`, "line 2: hash_ids: must be a list of integers ≥ 0"},
		{"hash id negative", `{"timestamp": 5, "input_length": 1, "output_length": 1, "hash_ids": [1, -2]}`, "line 2: hash_ids: must be a list"},
		{"hash id string", `{"timestamp": 5, "input_length": 1, "output_length": 1, "hash_ids": ["1,2"]}`, "line 2: hash_ids: must be a list"},
		{"hash id nested", `{"timestamp": 5, "input_length": 1, "output_length": 1, "hash_ids": [[1]]}`, "line 2: hash_ids: must be a list"},
		{"too few hash ids", `{"timestamp": 5, "input_length": 1536, "output_length": 1, "hash_ids": [1, 2]}`, "line 2: hash_ids: has 2 ids but input_length 1536 needs at least 3"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := ParseTrace([]byte(ok + "\n" + c.line + "\n"))
			require.Error(t, err)
			var te *TraceError
			require.True(t, errors.As(err, &te))
			assert.Contains(t, err.Error(), c.want)
		})
	}
}

func TestParseTraceStopsAfterTwentyProblems(t *testing.T) {
	var b strings.Builder
	for range 50 {
		b.WriteString(`{"timestamp": 0, "input_length": 0, "output_length": 1, "hash_ids": []}` + "\n")
	}
	_, err := ParseTrace([]byte(b.String()))
	var te *TraceError
	require.True(t, errors.As(err, &te))
	require.Len(t, te.Problems, maxTraceRowErrors+1)
	assert.Equal(t, "line 20: input_length: must be an integer ≥ 1", te.Problems[19])
	assert.Contains(t, te.Problems[20], "stopped after 20 problems")
}

func TestParseTraceEmptyAndOversized(t *testing.T) {
	_, err := ParseTrace([]byte("\n  \n"))
	require.ErrorContains(t, err, "no rows")
	_, err = ParseTrace(make([]byte, MaxTraceBytes+1))
	require.ErrorContains(t, err, "limit is 64 MiB")
}

func TestBuiltinMooncakeConversation(t *testing.T) {
	assert.Equal(t, []string{BuiltinMooncakeConversation}, BuiltinTraces())
	rows, err := builtinTraceRows(BuiltinMooncakeConversation)
	require.NoError(t, err)
	require.Len(t, rows, 12031)
	assert.Equal(t, 1, rows[0].Line)
	assert.Equal(t, 6758, rows[0].InputLength)
	assert.Equal(t, 500, rows[0].OutputLength)
	assert.Len(t, rows[0].HashIDs, 14)
	assert.Equal(t, 987000.0, rows[2999].TimestampMS)
	// The embedded file is the published one, unmodified.
	assert.Equal(t, "b8cbb061a85206d729d91cdc2981f43c9e0d99209dce588d3af5f7934408b9df", sha256Hex(mooncakeConversationJSONL))
	again, err := builtinTraceRows(BuiltinMooncakeConversation)
	require.NoError(t, err)
	assert.Same(t, &rows[0], &again[0], "parsed once and shared")

	_, err = builtinTraceRows("nope")
	require.ErrorContains(t, err, "mooncake-conversation")
}

// failingTraces answers every lookup with an error.
type failingTraces struct{}

func (failingTraces) Trace(string) ([]byte, error) { return nil, fmt.Errorf("database is closed") }

func TestLoadTrace(t *testing.T) {
	sha := sha256Hex([]byte(smallTrace))
	t.Run("built-in with limit", func(t *testing.T) {
		s := &Scenario{Workload: Workload{Type: WorkloadTrace, Trace: &TraceSpec{Name: BuiltinMooncakeConversation, TraceBlockTokens: 512, Speedup: 1, Limit: 7}}}
		rows, err := s.loadTrace(nil)
		require.NoError(t, err)
		assert.Len(t, rows, 7)
	})
	t.Run("sha256 through the source", func(t *testing.T) {
		s := &Scenario{Workload: Workload{Type: WorkloadTrace, Trace: &TraceSpec{SHA256: sha, TraceBlockTokens: 512, Speedup: 1}}}
		rows, err := s.loadTrace(memTraces{sha: []byte(smallTrace)})
		require.NoError(t, err)
		assert.Len(t, rows, 3)
		_, err = s.loadTrace(nil)
		require.ErrorContains(t, err, "upload the trace first")
		_, err = s.loadTrace(failingTraces{})
		require.ErrorContains(t, err, "database is closed")
	})
	t.Run("rows kept by Parse win", func(t *testing.T) {
		s := &Scenario{trace: []TraceRow{{Line: 9, InputLength: 1, OutputLength: 1}}}
		rows, err := s.loadTrace(nil)
		require.NoError(t, err)
		assert.Equal(t, 9, rows[0].Line)
	})
	t.Run("not a trace workload", func(t *testing.T) {
		s := &Scenario{Workload: Workload{Type: WorkloadSessions, Sessions: &Sessions{}}}
		_, err := s.loadTrace(nil)
		require.Error(t, err)
	})
}

func BenchmarkParseBuiltinTrace(b *testing.B) {
	for b.Loop() {
		if _, err := parseTraceRows(mooncakeConversationJSONL, 512); err != nil {
			b.Fatal(err)
		}
	}
}

func TestParseTraceBlankFileStaysSmall(t *testing.T) {
	blank := []byte(strings.Repeat("\n", 8<<20))
	allocs := testing.AllocsPerRun(1, func() { _, _ = ParseTrace(blank) })
	assert.Less(t, allocs, 100.0)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err := ParseTrace(blank)
	runtime.ReadMemStats(&after)
	require.ErrorContains(t, err, "no rows")
	assert.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(64<<20), "8 Mi blank lines must not pre-allocate a row each")
}

func TestTraceTimestampBeyondARunIsRefused(t *testing.T) {
	_, err := ParseTrace([]byte(`{"timestamp": 1e308, "input_length": 10, "output_length": 2, "hash_ids": []}` + "\n"))
	var te *TraceError
	if !errors.As(err, &te) || !strings.Contains(err.Error(), "line 1: timestamp: ") || !strings.Contains(err.Error(), "115 days") {
		t.Fatalf("ParseTrace(timestamp 1e308) = %v; want a line-1 timestamp problem", err)
	}
}
