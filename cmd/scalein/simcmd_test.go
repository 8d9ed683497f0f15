package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const examples = "../../sim/testdata/examples"

// runCLI runs the command in-process and returns its exit code, stdout and stderr.
func runCLI(t *testing.T, stdin string, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), args, strings.NewReader(stdin), &stdout, &stderr)
	return code, stdout.String(), stderr.String()
}

func TestSimInvalidExamplesExitTwo(t *testing.T) {
	wantPath := map[string]string{
		"batched-tokens-below-max-num-seqs.json":  "fleet.max_batched_tokens",
		"duplicate-request-id.json":               "workload.requests[1].id",
		"empty-prompt.json":                       "workload.requests[0]",
		"kvcr-bandwidth-zero.json":                "kvcr.bandwidth_gbps",
		"kvcr-enabled-without-host-cache.json":    "kvcr.enabled",
		"kvcr-latency-negative.json":              "kvcr.latency_ms",
		"lane-bandwidth-negative.json":            "fleet.h2d_gbps",
		"request-too-large.json":                  "workload.requests[0]",
		"scale-in-id-twice-in-one-action.json":    "scale_in[0].workers[1]",
		"scale-in-leaves-no-active-worker.json":   "scale_in",
		"scale-in-neither-workers-nor-count.json": "scale_in[0]",
		"scale-in-worker-named-twice.json":        "scale_in[1].workers[0]",
		"scale-in-worker-outside-fleet.json":      "scale_in[0].workers[0]",
		"scale-in-workers-and-count.json":         "scale_in[0]",
		"tail-tokens-not-below-block-size.json":   "workload.requests[0].tail_tokens",
		"timing-negative.json":                    "fleet.timing.decode_ms",
		// model 3 (docs/model.md#model-3)
		"autoscaler-and-scale-in.json":                    "autoscaler",
		"autoscaler-interval-zero.json":                   "autoscaler.interval_ms",
		"autoscaler-max-remove-zero.json":                 "autoscaler.max_remove_per_tick",
		"autoscaler-metric-delay-not-below-interval.json": "autoscaler.metric_delay_ms",
		"autoscaler-min-above-max.json":                   "autoscaler.min_workers",
		"autoscaler-min-workers-zero.json":                "autoscaler.min_workers",
		"autoscaler-startup-negative.json":                "autoscaler.startup_ms",
		"autoscaler-target-zero.json":                     "autoscaler.target",
		"autoscaler-tolerance-negative.json":              "autoscaler.tolerance",
		"autoscaler-unknown-metric.json":                  "autoscaler.metric",
		"autoscaler-window-negative.json":                 "autoscaler.scale_down_window_ms",
		"gpus-per-worker-zero.json":                       "fleet.gpus_per_worker",
		"migration-limit-negative.json":                   "router.migration_limit",
		"rate-stage-duration-zero.json":                   "workload.sessions.rate_stages[0].duration_ms",
		"rate-stage-rate-negative.json":                   "workload.sessions.rate_stages[0].rate_per_s",
		"rate-stages-empty.json":                          "workload.sessions.rate_stages",
		// model 4 (docs/model.md#autoscaler)
		"autoscaler-aggregate-without-external.json": "autoscaler.aggregate",
		"autoscaler-behavior-select-unknown.json":    "autoscaler.behavior.scale_down.select",
		"autoscaler-behavior-with-shorthand.json":    "autoscaler.behavior",
		"autoscaler-eleven-policies.json":            "autoscaler.behavior.scale_up.policies",
		"autoscaler-kv-usage-target-percent.json":    "autoscaler.target",
		"autoscaler-pending-above-startup.json":      "autoscaler.pending_ms",
		"autoscaler-policy-percent-zero.json":        "autoscaler.behavior.scale_up.policies[0].value",
		"autoscaler-policy-period-zero.json":         "autoscaler.behavior.scale_down.policies[0].period_ms",
		"autoscaler-target-not-milli.json":           "autoscaler.target",
		"autoscaler-unknown-source.json":             "autoscaler.source",
		"autoscaler-window-above-hour.json":          "autoscaler.behavior.scale_down.window_ms",
		"autoscaler-offered-rate-pods.json":          "autoscaler.source",
	}
	files, err := filepath.Glob(filepath.Join(examples, "invalid", "*.json"))
	require.NoError(t, err)
	require.Len(t, files, len(wantPath))
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			code, stdout, stderr := runCLI(t, "", "sim", "-config", f)
			assert.Equal(t, 2, code)
			assert.Empty(t, stdout, "no report for an invalid scenario")
			assert.True(t, strings.HasPrefix(stderr, f+": "+wantPath[filepath.Base(f)]+": "), "stderr: %s", stderr)
		})
	}
}

func TestSimListsEveryProblemOnItsOwnLine(t *testing.T) {
	code, _, stderr := runCLI(t, `{"fleet": {"workers": 0, "gpu_blocks": -1}, "router": {"policy": "x"}, "workload": {"type": "sessions"}}`, "sim", "-config", "-")
	assert.Equal(t, 2, code)
	lines := strings.Split(strings.TrimSpace(stderr), "\n")
	require.Len(t, lines, 3, stderr)
	assert.Equal(t, "stdin: fleet.workers: must be ≥ 1 (got 0)", lines[0])
	assert.True(t, strings.HasPrefix(lines[1], "stdin: fleet.gpu_blocks: "))
	assert.True(t, strings.HasPrefix(lines[2], "stdin: router.policy: "))
}

func TestSimUsageErrors(t *testing.T) {
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"unknown flag", []string{"sim", "-bogus"}, "flag provided but not defined"},
		{"missing config", []string{"sim"}, "-config is required"},
		{"bad pair", []string{"sim", "-config", "x.json", "-pair", "bandwidth"}, `-pair must be "hints", "guard" or "autoscaler"`},
		{"extra argument", []string{"sim", "-config", "x.json", "extra"}, `unexpected argument "extra"`},
		{"unknown command", []string{"simulate"}, `unknown command "simulate"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, stdout, stderr := runCLI(t, "", c.args...)
			assert.Equal(t, 2, code)
			assert.Empty(t, stdout)
			assert.Contains(t, stderr, c.want)
			assert.Contains(t, stderr, "usage")
		})
	}
	code, stdout, _ := runCLI(t, "", "help")
	assert.Equal(t, 0, code)
	assert.Contains(t, stdout, "scalein sim -config")
}

func TestSimUnreadableConfigExitsOne(t *testing.T) {
	code, _, stderr := runCLI(t, "", "sim", "-config", filepath.Join(t.TempDir(), "missing.json"))
	assert.Equal(t, 1, code)
	assert.Contains(t, stderr, "read the scenario")
}

func TestSimTracePathIsRelativeToTheConfig(t *testing.T) {
	dir := t.TempDir()
	// The second row cannot fit a 16-block worker, so validation names its line: proof that
	// the file next to the config was read, whatever the working directory is.
	trace := "{\"timestamp\": 0, \"input_length\": 100, \"output_length\": 1, \"hash_ids\": []}\n" +
		"{\"timestamp\": 1, \"input_length\": 5000, \"output_length\": 1, \"hash_ids\": [1, 2, 3, 4, 5, 6, 7, 8, 9]}\n"
	require.NoError(t, os.WriteFile(filepath.Join(dir, "t.jsonl"), []byte(trace), 0o644))
	config := filepath.Join(dir, "scenario.json")
	require.NoError(t, os.WriteFile(config, []byte(`{"fleet": {"gpu_blocks": 16}, "workload": {"type": "trace", "trace": {"path": "t.jsonl"}}}`), 0o644))
	code, _, stderr := runCLI(t, "", "sim", "-config", config)
	assert.Equal(t, 2, code)
	assert.Contains(t, stderr, config+": workload.trace: line 2:")

	require.NoError(t, os.WriteFile(config, []byte(`{"workload": {"type": "trace", "trace": {"path": "nope.jsonl"}}}`), 0o644))
	code, _, stderr = runCLI(t, "", "sim", "-config", config)
	assert.Equal(t, 2, code)
	assert.Contains(t, stderr, "workload.trace.path: cannot read")
}

func TestWriteFileAtomic(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "report.json")
	require.NoError(t, os.WriteFile(path, []byte("old"), 0o644))
	require.NoError(t, writeFileAtomic(path, []byte("new")))
	got, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, "new", string(got))
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	assert.Len(t, entries, 1, "no temporary file is left behind")

	err = writeFileAtomic(filepath.Join(dir, "missing-dir", "r.json"), []byte("x"))
	require.Error(t, err)
}

func TestProgressLine(t *testing.T) {
	var buf bytes.Buffer
	p := newProgressLine(&buf, true)
	report := p.reporter(0, 2)
	p.reporter(1, 2)(1)
	p.lastPrint = p.lastPrint.Add(-2e9) // pretend a second has passed
	report(0.5)
	p.finish()
	assert.Equal(t, "progress 75%\nprogress 100%\n", buf.String())

	quiet := newProgressLine(&buf, false)
	assert.Nil(t, quiet.reporter(0, 1), "no callback when stderr is not a terminal")
}

// The tests below need the simulation engine (sim.Run); they pass once it is in place.

func TestSimRunsAnExample(t *testing.T) {
	config := filepath.Join(examples, "eviction_deepest_first.json")
	code, stdout, stderr := runCLI(t, "", "sim", "-config", config)
	require.Equal(t, 0, code, stderr)
	var report map[string]any
	require.NoError(t, json.Unmarshal([]byte(stdout), &report))
	assert.Equal(t, "scalein.report.v1", report["schema"])
	assert.Contains(t, report, "requests", "the example asks for per-request rows")

	// -out writes the same report to a file and nothing to stdout.
	out := filepath.Join(t.TempDir(), "r.json")
	code, stdout, stderr = runCLI(t, "", "sim", "-config", config, "-out", out)
	require.Equal(t, 0, code, stderr)
	assert.Empty(t, stdout)
	data, err := os.ReadFile(out)
	require.NoError(t, err)
	var fromFile map[string]any
	require.NoError(t, json.Unmarshal(data, &fromFile))
	assert.Equal(t, report["digest"], fromFile["digest"], "the same scenario gives the same report")
}

func TestSimReadsStdinAndForcesRequests(t *testing.T) {
	scenario := `{"fleet": {"workers": 2, "gpu_blocks": 64, "host_blocks": 64, "block_size": 16},
		"workload": {"type": "requests", "requests": [{"id": "a", "at_ms": 0, "blocks": ["A*2"], "output_tokens": 2}]}}`
	code, stdout, stderr := runCLI(t, scenario, "sim", "-config", "-")
	require.Equal(t, 0, code, stderr)
	assert.NotContains(t, stdout, `"requests": [`)

	code, stdout, stderr = runCLI(t, scenario, "sim", "-config", "-", "-requests")
	require.Equal(t, 0, code, stderr)
	var report struct {
		Requests []struct{ ID string } `json:"requests"`
	}
	require.NoError(t, json.Unmarshal([]byte(stdout), &report))
	require.Len(t, report.Requests, 1)
	assert.Equal(t, "a", report.Requests[0].ID)
}

func TestSimPair(t *testing.T) {
	config := filepath.Join(examples, "budget_zero_stops_scan.json")
	code, stdout, stderr := runCLI(t, "", "sim", "-config", config, "-pair", "hints")
	require.Equal(t, 0, code, stderr)
	var out struct {
		A, B       map[string]any
		Comparison struct {
			Kind       string `json:"kind"`
			OnlyToggle bool   `json:"only_toggle"`
			Diffs      []struct{ Path string }
		}
	}
	require.NoError(t, json.Unmarshal([]byte(stdout), &out))
	assert.Equal(t, "scalein.report.v1", out.A["schema"])
	assert.Equal(t, "scalein.report.v1", out.B["schema"])
	assert.NotEqual(t, out.A["scenario_id"], out.B["scenario_id"])
	assert.Equal(t, "hints", out.Comparison.Kind)
	assert.True(t, out.Comparison.OnlyToggle)
	require.Len(t, out.Comparison.Diffs, 1)
	assert.Equal(t, "router.hints", out.Comparison.Diffs[0].Path)
}

func TestSimMemoryEstimateAndLimit(t *testing.T) {
	preset := filepath.Join("..", "..", "sim", "presets", "large-fleet.json")
	code, _, stderr := runCLI(t, "", "sim", "-config", preset, "-max-memory", "100MB")
	if code != 2 {
		t.Fatalf("exit %d with -max-memory 100MB; want 2 (refused). stderr:\n%s", code, stderr)
	}
	if !strings.Contains(stderr, "fleet.gpu_blocks: needs up to") || !strings.Contains(stderr, "-max-memory allows 100 MB per run") {
		t.Errorf("stderr does not name the driving field and the limit:\n%s", stderr)
	}
	e2 := filepath.Join("..", "..", "sim", "presets", "e2.json")
	code, stdout, stderr := runCLI(t, "", "sim", "-config", e2, "-v")
	if code != 0 || !strings.Contains(stderr, "memory estimate: up to") || !strings.Contains(stdout, `"schema"`) {
		t.Errorf("-v: exit %d, stderr:\n%s", code, stderr)
	}
	// Without -max-memory nothing is enforced (and nothing printed without -v).
	code, _, stderr = runCLI(t, "", "sim", "-config", e2)
	if code != 0 || strings.Contains(stderr, "memory estimate") {
		t.Errorf("plain run: exit %d, stderr:\n%s", code, stderr)
	}
}

// -pair autoscaler runs the scenario and the same on a fixed fleet, and compares GPU-hours.
func TestSimPairAutoscaler(t *testing.T) {
	config := filepath.Join(examples, "autoscaler_window_holds_scale_down.json")
	code, stdout, stderr := runCLI(t, "", "sim", "-config", config, "-pair", "autoscaler")
	require.Equal(t, 0, code, stderr)
	var out struct {
		A, B struct {
			Autoscaler *struct{ Decisions []any } `json:"autoscaler"`
			Summary    struct {
				WorkerSeconds float64 `json:"worker_seconds"`
				GPUHours      float64 `json:"gpu_hours"`
			} `json:"summary"`
		}
		Comparison struct {
			Kind       string `json:"kind"`
			OnlyToggle bool   `json:"only_toggle"`
			Diffs      []struct{ Path string }
			Figures    []struct {
				Key   string   `json:"key"`
				Delta *float64 `json:"delta"`
			}
		}
	}
	require.NoError(t, json.Unmarshal([]byte(stdout), &out))
	require.NotNil(t, out.A.Autoscaler)
	assert.Len(t, out.A.Autoscaler.Decisions, 10)
	assert.Nil(t, out.B.Autoscaler)
	assert.Equal(t, 0.162, out.A.Summary.WorkerSeconds)
	assert.Equal(t, 0.306, out.B.Summary.WorkerSeconds) // 3 workers × 102 ms
	assert.Equal(t, "autoscaler", out.Comparison.Kind)
	assert.True(t, out.Comparison.OnlyToggle)
	require.Len(t, out.Comparison.Diffs, 1)
	assert.Equal(t, "autoscaler", out.Comparison.Diffs[0].Path)
	found := false
	for _, f := range out.Comparison.Figures {
		if f.Key == "gpu_hours" {
			found = true
			require.NotNil(t, f.Delta)
			assert.InDelta(t, (0.306-0.162)/3600, *f.Delta, 1e-12)
		}
	}
	assert.True(t, found, "the comparison has GPU-hours")

	// The fixed fleet is the baseline: max_workers by default (3 here, the fleet's size), or the
	// size -baseline-workers names.
	code, stdout, stderr = runCLI(t, "", "sim", "-config", config, "-pair", "autoscaler", "-baseline-workers", "5")
	require.Equal(t, 0, code, stderr)
	require.NoError(t, json.Unmarshal([]byte(stdout), &out))
	assert.InDelta(t, 0.510, out.B.Summary.WorkerSeconds, 1e-9, "5 workers × 102 ms")
	assert.True(t, out.Comparison.OnlyToggle, "the fleet's size is part of the autoscaler pair: %v", out.Comparison.Diffs)
	code, _, stderr = runCLI(t, "", "sim", "-config", config, "-pair", "hints", "-baseline-workers", "5")
	assert.Equal(t, 2, code)
	assert.Contains(t, stderr, "-baseline-workers is the fixed fleet of -pair autoscaler")

	// A scenario without an autoscaler has nothing to pair: exit 2 with the fix.
	code, _, stderr = runCLI(t, "", "sim", "-config", filepath.Join(examples, "budget_zero_stops_scan.json"), "-pair", "autoscaler")
	assert.Equal(t, 2, code)
	assert.Contains(t, stderr, "has no autoscaler")
}
