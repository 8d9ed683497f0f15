package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/scalein-planner/scalein/sim/calibrate"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A run's exported passes calibrate back to the run's own timing.
func TestSimPassesThenCalibrate(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "s.json")
	require.NoError(t, os.WriteFile(cfg, []byte(`{"fleet": {"workers": 2, "gpu_blocks": 2048, "host_blocks": 0, "block_size": 16,
		"max_num_seqs": 16, "max_batched_tokens": 512,
		"timing": {"prefill_ms": 1.5, "prefill_ms_per_1k_tokens": 40, "decode_ms": 5, "decode_ms_per_seq": 0.2, "decode_ms_per_1k_kv_tokens": 0.8}},
		"kvcr": {"enabled": false},
		"workload": {"type": "sessions", "sessions": {"count": 40, "turns": 3, "rate_per_s": 40,
			"system_prompt_tokens": 700, "new_input_tokens": 300, "output_tokens": 40, "think_time_ms": 300}}}`), 0o600))
	passes := filepath.Join(dir, "passes.jsonl")
	code, _, stderr := runCLI(t, "", "sim", "-config", cfg, "-passes", passes, "-worker", "1", "-out", filepath.Join(dir, "r.json"))
	require.Equal(t, 0, code, stderr)

	code, stdout, stderr := runCLI(t, "", "calibrate", "-fpm", passes, "-worker", "1", "-skip", "3")
	require.Equal(t, 0, code, stderr)
	var res calibrate.Result
	require.NoError(t, json.Unmarshal([]byte(stdout), &res))
	assert.InDelta(t, 1.5, res.Timing.PrefillMS, 1e-6)
	assert.InDelta(t, 40, res.Timing.PrefillMSPer1kTokens, 1e-6)
	assert.InDelta(t, 5, res.Timing.DecodeMS, 1e-6)
	assert.InDelta(t, 0.2, res.Timing.DecodeMSPerSeq, 1e-6)
	assert.InDelta(t, 0.8, res.Timing.DecodeMSPer1kKVTokens, 1e-6)
	for _, key := range []string{`"timing"`, `"prefill_ms_per_1k_tokens"`, `"decode_ms_per_1k_kv_tokens"`, `"passes"`, `"classes"`, `"mixed"`, `"r2"`, `"mape"`, `"warnings"`} {
		assert.Contains(t, stdout, key)
	}
}

func TestSimPassesUsage(t *testing.T) {
	cfg := filepath.Join(examples, "decode_reads_kv.json")
	code, _, stderr := runCLI(t, "", "sim", "-config", cfg, "-passes", filepath.Join(t.TempDir(), "p"))
	assert.Equal(t, 2, code)
	assert.Contains(t, stderr, "-passes FILE and -worker N go together")
	code, _, stderr = runCLI(t, "", "sim", "-config", cfg, "-passes", filepath.Join(t.TempDir(), "p"), "-worker", "1")
	assert.Equal(t, 2, code)
	assert.Contains(t, stderr, "-worker 1: the fleet has workers 0 to 0")
}

func TestCalibrateBadLinesExitTwo(t *testing.T) {
	in := `{"wall_time": 0.01, "scheduled_requests": {"num_prefill_requests": 1, "sum_prefill_tokens": 10, "num_decode_requests": 0, "sum_decode_kv_tokens": 0}}
not json
{"wall_time": "fast"}
`
	code, stdout, stderr := runCLI(t, in, "calibrate", "-fpm", "-")
	assert.Equal(t, 2, code)
	assert.Empty(t, stdout)
	lines := strings.Split(strings.TrimSpace(stderr), "\n")
	require.Len(t, lines, 2, stderr)
	assert.True(t, strings.HasPrefix(lines[0], "stdin:2: "), stderr)
	assert.True(t, strings.HasPrefix(lines[1], "stdin:3: wall_time must be a number"), stderr)

	code, _, stderr = runCLI(t, "", "calibrate")
	assert.Equal(t, 2, code)
	assert.Contains(t, stderr, "-fpm is required")
	code, _, stderr = runCLI(t, "", "calibrate", "-fpm", "-")
	assert.Equal(t, 2, code)
	assert.Contains(t, stderr, "no pass to fit")
}
