package sim

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// examplesPath points into the conformance examples, copied unmodified from the shared
// specification folder into testdata so the tests run on a fresh clone.
func examplesPath(t testing.TB, parts ...string) string {
	t.Helper()
	return filepath.Join(append([]string{"testdata", "examples"}, parts...)...)
}

func sha256Hex(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

// parseErrors parses data and returns its field errors; it fails the test if data parses.
func parseErrors(t *testing.T, data string, env ParseEnv) []FieldError {
	t.Helper()
	s, err := Parse([]byte(data), env)
	require.Error(t, err, "expected a validation error")
	require.Nil(t, s)
	var ve *ValidationError
	require.True(t, errors.As(err, &ve), "want *ValidationError, got %T: %v", err, err)
	require.NotEmpty(t, ve.Errors)
	return ve.Errors
}

// requireFieldError asserts that some error has this path and a message containing every
// fragment.
func requireFieldError(t *testing.T, errs []FieldError, path string, fragments ...string) {
	t.Helper()
	for _, e := range errs {
		if e.Path != path {
			continue
		}
		ok := true
		for _, f := range fragments {
			ok = ok && strings.Contains(e.Message, f)
		}
		if ok {
			return
		}
	}
	t.Fatalf("no error at %q containing %q; got:\n%s", path, fragments, (&ValidationError{Errors: errs}).Error())
}

func mustParse(t testing.TB, data string) *Scenario {
	t.Helper()
	s, err := Parse([]byte(data), ParseEnv{})
	require.NoError(t, err)
	return s
}

func TestParseConformanceExamplesAreValid(t *testing.T) {
	files, err := filepath.Glob(examplesPath(t, "*.json"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	for _, f := range files {
		if filepath.Base(f) == "expected.json" {
			continue
		}
		t.Run(filepath.Base(f), func(t *testing.T) {
			data, err := os.ReadFile(f)
			require.NoError(t, err)
			s, err := Parse(data, ParseEnv{})
			require.NoError(t, err)
			assert.Equal(t, strings.TrimSuffix(filepath.Base(f), ".json"), s.Name)
			assert.True(t, s.Report.PerRequest)
			assert.Equal(t, WorkloadRequests, s.Workload.Type)
		})
	}
}

func TestParseInvalidExamples(t *testing.T) {
	cases := map[string][]string{ // file → path, message fragments
		"batched-tokens-below-max-num-seqs.json":  {"fleet.max_batched_tokens", "max_num_seqs"},
		"duplicate-request-id.json":               {"workload.requests[1].id", `"r" is used twice`, "workload.requests[0]"},
		"empty-prompt.json":                       {"workload.requests[0]", "prompt is empty"},
		"kvcr-bandwidth-zero.json":                {"kvcr.bandwidth_gbps", "must be > 0", "got 0"},
		"kvcr-enabled-without-host-cache.json":    {"kvcr.enabled", "host_blocks"},
		"kvcr-latency-negative.json":              {"kvcr.latency_ms", "must be ≥ 0"},
		"lane-bandwidth-negative.json":            {"fleet.h2d_gbps", "must be ≥ 0", "got -1"},
		"timing-negative.json":                    {"fleet.timing.decode_ms", "must be ≥ 0"},
		"tail-tokens-not-below-block-size.json":   {"workload.requests[0].tail_tokens", "block_size"},
		"request-too-large.json":                  {"workload.requests[0]", "gpu_blocks"},
		"scale-in-worker-named-twice.json":        {"scale_in[1].workers[0]", "worker 1", "scale_in[0].workers[0]"},
		"scale-in-id-twice-in-one-action.json":    {"scale_in[0].workers[1]", "worker 1"},
		"scale-in-worker-outside-fleet.json":      {"scale_in[0].workers[0]", "outside the fleet"},
		"scale-in-leaves-no-active-worker.json":   {"scale_in", "at least one worker must stay active"},
		"scale-in-workers-and-count.json":         {"scale_in[0]", "not both"},
		"scale-in-neither-workers-nor-count.json": {"scale_in[0]", `"workers"`, `"count"`},
		// model 3 (docs/model.md#model-3)
		"autoscaler-and-scale-in.json":                    {"autoscaler", "not both"},
		"autoscaler-min-above-max.json":                   {"autoscaler.min_workers", "max_workers"},
		"autoscaler-min-workers-zero.json":                {"autoscaler.min_workers", "must be ≥ 1"},
		"autoscaler-interval-zero.json":                   {"autoscaler.interval_ms", "must be > 0"},
		"autoscaler-target-zero.json":                     {"autoscaler.target", "must be > 0"},
		"autoscaler-tolerance-negative.json":              {"autoscaler.tolerance", "must be ≥ 0"},
		"autoscaler-metric-delay-not-below-interval.json": {"autoscaler.metric_delay_ms", "interval_ms"},
		"autoscaler-unknown-metric.json":                  {"autoscaler.metric", "kv_usage", `did you mean "requests_per_worker"?`},
		"autoscaler-window-negative.json":                 {"autoscaler.scale_down_window_ms", "must be ≥ 0"},
		"autoscaler-max-remove-zero.json":                 {"autoscaler.max_remove_per_tick", "must be ≥ 1"},
		"autoscaler-startup-negative.json":                {"autoscaler.startup_ms", "must be ≥ 0"},
		"migration-limit-negative.json":                   {"router.migration_limit", "must be ≥ 0"},
		"gpus-per-worker-zero.json":                       {"fleet.gpus_per_worker", "must be ≥ 1"},
		"rate-stages-empty.json":                          {"workload.sessions.rate_stages", "at least one stage"},
		"rate-stage-duration-zero.json":                   {"workload.sessions.rate_stages[0].duration_ms", "must be > 0"},
		"rate-stage-rate-negative.json":                   {"workload.sessions.rate_stages[0].rate_per_s", "must be ≥ 0"},
		// model 4 (docs/model.md#autoscaler)
		"autoscaler-aggregate-without-external.json": {"autoscaler.aggregate", "only with source external"},
		"autoscaler-behavior-select-unknown.json":    {"autoscaler.behavior.scale_down.select", "must be max, min or disabled"},
		"autoscaler-behavior-with-shorthand.json":    {"autoscaler.behavior", "not together with the shorthand field scale_down_window_ms"},
		"autoscaler-eleven-policies.json":            {"autoscaler.behavior.scale_up.policies", "must be a list of 1 to 10 policies"},
		"autoscaler-kv-usage-target-percent.json":    {"autoscaler.target", "a kv_usage target is a fraction: 70 % is 0.7"},
		"autoscaler-pending-above-startup.json":      {"autoscaler.pending_ms", "must be <= autoscaler.startup_ms"},
		"autoscaler-policy-percent-zero.json":        {"autoscaler.behavior.scale_up.policies[0].value", "must be an integer >= 1"},
		"autoscaler-policy-period-zero.json":         {"autoscaler.behavior.scale_down.policies[0].period_ms", "must be an integer in [1, 1800000]"},
		"autoscaler-target-not-milli.json":           {"autoscaler.target", "must be a multiple of 0.001"},
		"autoscaler-unknown-source.json":             {"autoscaler.source", "must be one of pods, external"},
		"autoscaler-window-above-hour.json":          {"autoscaler.behavior.scale_down.window_ms", "must be an integer in [0, 3600000]"},
		// model 5 (docs/model.md#model-5)
		"autoscaler-handoffs-held-without-disaggregation.json": {"autoscaler.metric", "handoffs_held", "needs disaggregation"},
		"scale-in-role-without-disaggregation.json":            {"scale_in[0].role", "only with disaggregation"},
		"pd-autoscaler-handoffs-held-on-decode.json":           {"autoscaler.decode.metric", "only the prefill pool"},
		"pd-autoscaler-not-per-role.json":                      {"autoscaler.interval_ms", "one per pool"},
		"pd-autoscaler-role-min-zero.json":                     {"autoscaler.decode.min_workers", "must be ≥ 1"},
		"pd-block-size-per-role.json":                          {"disaggregation.prefill.block_size", "not per role"},
		"pd-count-without-role.json":                           {"scale_in[0].role", `required with "count"`},
		"pd-decode-workers-zero.json":                          {"disaggregation.decode.workers", "must be ≥ 1"},
		"pd-drain-fixed-negative.json":                         {"disaggregation.prefill_drain.fixed_ms", "must be ≥ 0"},
		"pd-drain-mode-unknown.json":                           {"disaggregation.prefill_drain.mode", "wait, fixed, skip"},
		"pd-fleet-workers.json":                                {"fleet.workers", "not with disaggregation"},
		"pd-kvcr-enabled.json":                                 {"kvcr.enabled", "must be false with disaggregation"},
		"pd-lease-ttl-with-heartbeat.json":                     {"disaggregation.lease.ttl_ms", `only with "mode": "fixed"`},
		"pd-lease-ttl-zero.json":                               {"disaggregation.lease.ttl_ms", "must be > 0"},
		"pd-lease-unknown-mode.json":                           {"disaggregation.lease.mode", "heartbeat, fixed"},
		"pd-load-failure-policy-unknown.json":                  {"disaggregation.load_failure_policy", "fail, recompute"},
		"pd-prefill-missing.json":                              {"disaggregation.prefill", "required"},
		"pd-request-too-large-for-decode.json":                 {"workload.requests[0]", "disaggregation.decode.gpu_blocks"},
		"pd-role-batched-below-seqs.json":                      {"disaggregation.decode.max_batched_tokens", "max_num_seqs"},
		"pd-role-timing-negative.json":                         {"disaggregation.prefill.timing.prefill_ms", "must be ≥ 0"},
		"pd-role-unknown-field.json":                           {"disaggregation.decode.max_seqs", "unknown field"},
		"pd-route-to-decode-worker.json":                       {"workload.requests[0].route_to", "must name a prefill worker"},
		"pd-scale-in-leaves-no-decode.json":                    {"scale_in", "each pool must stay active"},
		"pd-transfer-bandwidth-zero.json":                      {"disaggregation.transfer.bandwidth_gbps", "must be > 0"},
		"pd-transfer-latency-negative.json":                    {"disaggregation.transfer.latency_ms", "must be ≥ 0"},
		"pd-unknown-field.json":                                {"disaggregation.handoff", "unknown field"},
		"autoscaler-offered-rate-pods.json":                    {"autoscaler.source", "offered_rate", `set source to "external"`},
	}
	files, err := filepath.Glob(examplesPath(t, "invalid", "*.json"))
	require.NoError(t, err)
	require.Len(t, files, len(cases), "every invalid example needs its expectation here")
	for _, f := range files {
		name := filepath.Base(f)
		t.Run(name, func(t *testing.T) {
			want, ok := cases[name]
			require.True(t, ok, "no expectation for %s", name)
			data, err := os.ReadFile(f)
			require.NoError(t, err)
			errs := parseErrors(t, string(data), ParseEnv{})
			requireFieldError(t, errs, want[0], want[1:]...)
			assert.Len(t, errs, 1, "each file breaks exactly one rule: %v", errs)
		})
	}
}

func TestParseFillsEveryDefault(t *testing.T) {
	s := mustParse(t, `{"workload": {"type": "sessions"}}`)
	want := &Scenario{
		Name: DefaultScenarioName,
		Seed: 42,
		Fleet: Fleet{
			Workers: 16, GPUBlocks: 4096, HostBlocks: 16384, BlockSize: 64, BytesPerToken: 131072,
			MaxNumSeqs: 128, MaxBatchedTokens: 8192, GPUsPerWorker: 1, H2DGBps: 32, D2HGBps: 32,
			Timing: Timing{PrefillMS: 2, PrefillMSPer1kTokens: 65, DecodeMS: 8, DecodeMSPerSeq: 0.05, DecodeMSPer1kKVTokens: 0.03},
		},
		KVCR:    KVCR{Enabled: true, LatencyMS: 1, BandwidthGBps: 50, RejectDrainingSources: true},
		Router:  Router{Policy: PolicyKVAware, Hints: true, PrefillLoadScale: 1, HostHitWeight: 0.75},
		ScaleIn: []ScaleInAction{},
		Workload: Workload{Type: WorkloadSessions, Sessions: &Sessions{
			Count: 100, RatePerS: 10, Turns: 3, SystemPromptTokens: 1024, PrefixGroups: 4,
			NewInputTokens: 256, OutputTokens: 128, ThinkTimeMS: 5000,
		}},
	}
	assert.Equal(t, want, s)

	// Nested defaults fill in around the members that are given.
	s = mustParse(t, `{"fleet": {"timing": {"decode_ms": 3}}, "workload": {"type": "sessions", "sessions": {"turns": 5}}}`)
	assert.Equal(t, 3.0, s.Fleet.Timing.DecodeMS)
	assert.Equal(t, 2.0, s.Fleet.Timing.PrefillMS)
	assert.Equal(t, 5, s.Workload.Sessions.Turns)
	assert.Equal(t, 100, s.Workload.Sessions.Count)

	// Scripted requests: tail_tokens 0 and no route_to by default; count actions select highest_id.
	s = mustParse(t, `{"fleet": {"workers": 4}, "scale_in": [{"at_ms": 5, "count": 1}],
		"workload": {"type": "requests", "requests": [{"id": "a", "at_ms": 0, "blocks": ["P*2"], "output_tokens": 1}]}}`)
	assert.Equal(t, 0, s.Workload.Requests[0].TailTokens)
	assert.Nil(t, s.Workload.Requests[0].RouteTo)
	assert.Equal(t, SelectHighestID, s.ScaleIn[0].Select)
	assert.Nil(t, s.ScaleIn[0].GraceMS)

	// Trace defaults.
	s = mustParse(t, `{"workload": {"type": "trace", "trace": {"name": "mooncake-conversation"}}}`)
	assert.Equal(t, &TraceSpec{Name: BuiltinMooncakeConversation, TraceBlockTokens: 512, Speedup: 1}, s.Workload.Trace)
}

func TestParseTrueBoolDefaultsCanBeTurnedOff(t *testing.T) {
	on := mustParse(t, `{"workload": {"type": "sessions"}}`)
	assert.True(t, on.KVCR.Enabled)
	assert.True(t, on.Router.Hints)
	assert.True(t, on.KVCR.RejectDrainingSources)

	off := mustParse(t, `{"kvcr": {"enabled": false, "reject_draining_sources": false}, "router": {"hints": false}, "workload": {"type": "sessions"}}`)
	assert.False(t, off.KVCR.Enabled)
	assert.False(t, off.Router.Hints)
	assert.False(t, off.KVCR.RejectDrainingSources)
}

func TestParseReportsEveryErrorAtOnce(t *testing.T) {
	errs := parseErrors(t, `{
		"nme": "x",
		"seed": 1, "seed": 2,
		"fleet": {"workers": "16", "gpu_blocks": 16.5, "block_size": null, "gpu_blocks_x": 1},
		"router": {"policy": "foo"},
		"workload": {"type": "requests", "requests": [
			{"id": "r1", "at_ms": 0, "blocks": ["P*0"], "output_tokens": 1},
			{"id": "r1", "at_ms": 1, "blocks": ["Q"], "output_tokens": 0}
		]}
	}`, ParseEnv{})
	requireFieldError(t, errs, "nme", `did you mean "name"`)
	requireFieldError(t, errs, "seed", "twice")
	requireFieldError(t, errs, "fleet.workers", "must be an integer", `"16"`)
	requireFieldError(t, errs, "fleet.gpu_blocks", "whole number", "16.5")
	requireFieldError(t, errs, "fleet.block_size", "not null")
	requireFieldError(t, errs, "fleet.gpu_blocks_x", "unknown field")
	requireFieldError(t, errs, "router.policy", "must be one of kv_aware, round_robin, least_loaded", `"foo"`)
	requireFieldError(t, errs, "workload.requests[0].blocks[0]", "1 to 100000")
	requireFieldError(t, errs, "workload.requests[1].output_tokens", "must be ≥ 1 (got 0)")
	requireFieldError(t, errs, "workload.requests[1].id", `"r1" is used twice (also workload.requests[0])`)
	assert.Len(t, errs, 10)

	// Error() puts one problem per line.
	_, err := Parse([]byte(`{"fleet": {"workers": 0, "gpu_blocks": 0}, "workload": {"type": "sessions"}}`), ParseEnv{})
	require.Error(t, err)
	assert.Equal(t, "fleet.workers: must be ≥ 1 (got 0)\nfleet.gpu_blocks: must be ≥ 1 (got 0)", err.Error())
}

func TestParseDocumentErrors(t *testing.T) {
	cases := []struct {
		name, data string
		fragments  []string
	}{
		{"trailing data", `{"workload": {"type": "sessions"}} {}`, []string{"after the end", "line 1"}},
		{"truncated", "{\"workload\":\n {\"type\": ", []string{"ends too early", "line 2"}},
		{"syntax", "{\n\"seed\": 1,,\n}", []string{"line 2", "invalid JSON"}},
		{"not an object", `[1, 2]`, []string{"must be a JSON object", "a list"}},
		{"empty", ``, []string{"ends too early"}},
		{"too deep", strings.Repeat("[", 100) + strings.Repeat("]", 100), []string{"nested more than"}},
		{"not utf-8", "{\"name\": \"\xff\"}", []string{"UTF-8"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			errs := parseErrors(t, c.data, ParseEnv{})
			requireFieldError(t, errs, "", c.fragments...)
		})
	}
	many := "[" + strings.Repeat("1,", maxJSONValues) + "1]"
	errs := parseErrors(t, many, ParseEnv{})
	requireFieldError(t, errs, "", "more than 4000000 JSON values")

	big := make([]byte, MaxScenarioBytes+1)
	_, err := Parse(big, ParseEnv{})
	require.ErrorContains(t, err, "limit is 32 MiB")
}

func TestParseFieldRules(t *testing.T) {
	cases := []struct {
		name, data, path string
		fragments        []string
	}{
		{"workers 0", `{"fleet": {"workers": 0}}`, "fleet.workers", []string{"≥ 1 (got 0)"}},
		{"workers too many", `{"fleet": {"workers": 16385}}`, "fleet.workers", []string{"≤ 16384"}},
		{"gpu_blocks limit", `{"fleet": {"gpu_blocks": 10000001}}`, "fleet.gpu_blocks", []string{"≤ 10000000"}},
		{"host_blocks negative", `{"fleet": {"host_blocks": -1}}`, "fleet.host_blocks", []string{"≥ 0"}},
		{"host_blocks limit", `{"fleet": {"host_blocks": 10000001}}`, "fleet.host_blocks", []string{"≤ 10000000"}},
		{"block_size 0", `{"fleet": {"block_size": 0}}`, "fleet.block_size", []string{"≥ 1"}},
		{"bytes_per_token 0", `{"fleet": {"bytes_per_token": 0}}`, "fleet.bytes_per_token", []string{"≥ 1"}},
		{"max_num_seqs 0", `{"fleet": {"max_num_seqs": 0}}`, "fleet.max_num_seqs", []string{"≥ 1"}},
		{"d2h negative", `{"fleet": {"d2h_gbps": -0.5}}`, "fleet.d2h_gbps", []string{"≥ 0", "-0.5"}},
		{"timing string", `{"fleet": {"timing": {"prefill_ms": "2"}}}`, "fleet.timing.prefill_ms", []string{"must be a number", "string"}},
		{"timing not object", `{"fleet": {"timing": 3}}`, "fleet.timing", []string{"must be an object"}},
		{"huge number", `{"fleet": {"timing": {"decode_ms": 1e400}}}`, "fleet.timing.decode_ms", []string{"finite"}},
		{"prefill_load_scale", `{"router": {"prefill_load_scale": -1}}`, "router.prefill_load_scale", []string{"≥ 0"}},
		{"host_hit_weight", `{"router": {"host_hit_weight": -0.1}}`, "router.host_hit_weight", []string{"≥ 0"}},
		{"hints not bool", `{"router": {"hints": "yes"}}`, "router.hints", []string{"true or false"}},
		{"bandwidth negative", `{"kvcr": {"bandwidth_gbps": -3}}`, "kvcr.bandwidth_gbps", []string{"> 0"}},
		{"seed fraction", `{"seed": 1.5}`, "seed", []string{"whole number"}},
		{"name too long", `{"name": "` + strings.Repeat("é", 201) + `"}`, "name", []string{"at most 200"}},
		{"report per_request", `{"report": {"per_request": 1}}`, "report.per_request", []string{"true or false"}},
		{"block bytes", `{"fleet": {"block_size": 1048576, "bytes_per_token": 17179869184}}`, "fleet.bytes_per_token", []string{"bytes per block"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			data := c.data[:len(c.data)-1] + `, "workload": {"type": "sessions"}}`
			errs := parseErrors(t, data, ParseEnv{})
			requireFieldError(t, errs, c.path, c.fragments...)
		})
	}
}

// requestsScenario wraps scripted requests and scale-in actions in a small valid fleet.
func requestsScenario(requests, scaleIn string) string {
	return `{"fleet": {"workers": 4, "gpu_blocks": 64, "host_blocks": 64, "block_size": 16},
		"scale_in": ` + scaleIn + `,
		"workload": {"type": "requests", "requests": ` + requests + `}}`
}

func TestParseScriptedRequestRules(t *testing.T) {
	cases := []struct {
		name, requests, path string
		fragments            []string
	}{
		{"output_tokens missing", `[{"id": "a", "at_ms": 0, "blocks": ["A"]}]`, "workload.requests[0].output_tokens", []string{"required"}},
		{"output_tokens zero", `[{"id": "a", "at_ms": 0, "blocks": ["A"], "output_tokens": 0}]`, "workload.requests[0].output_tokens", []string{"≥ 1"}},
		{"id missing", `[{"at_ms": 0, "blocks": ["A"], "output_tokens": 1}]`, "workload.requests[0].id", []string{"required"}},
		{"id empty", `[{"id": "", "at_ms": 0, "blocks": ["A"], "output_tokens": 1}]`, "workload.requests[0].id", []string{"empty"}},
		{"id too long", `[{"id": "` + strings.Repeat("x", 201) + `", "at_ms": 0, "blocks": ["A"], "output_tokens": 1}]`, "workload.requests[0].id", []string{"at most 200"}},
		{"at_ms missing", `[{"id": "a", "blocks": ["A"], "output_tokens": 1}]`, "workload.requests[0].at_ms", []string{"required"}},
		{"at_ms negative", `[{"id": "a", "at_ms": -1, "blocks": ["A"], "output_tokens": 1}]`, "workload.requests[0].at_ms", []string{"≥ 0"}},
		{"route_to outside", `[{"id": "a", "at_ms": 0, "blocks": ["A"], "output_tokens": 1, "route_to": 4}]`, "workload.requests[0].route_to", []string{"outside the fleet", "0 to 3"}},
		{"route_to negative", `[{"id": "a", "at_ms": 0, "blocks": ["A"], "output_tokens": 1, "route_to": -1}]`, "workload.requests[0].route_to", []string{"≥ 0"}},
		{"label empty", `[{"id": "a", "at_ms": 0, "blocks": [""], "output_tokens": 1}]`, "workload.requests[0].blocks[0]", []string{"non-empty"}},
		{"label not string", `[{"id": "a", "at_ms": 0, "blocks": [7], "output_tokens": 1}]`, "workload.requests[0].blocks[0]", []string{"must be a string"}},
		{"label count too big", `[{"id": "a", "at_ms": 0, "blocks": ["A*100001"], "output_tokens": 1}]`, "workload.requests[0].blocks[0]", []string{"1 to 100000"}},
		{"label count not a number", `[{"id": "a", "at_ms": 0, "blocks": ["A*x"], "output_tokens": 1}]`, "workload.requests[0].blocks[0]", []string{"1 to 100000"}},
		{"label without base", `[{"id": "a", "at_ms": 0, "blocks": ["*3"], "output_tokens": 1}]`, "workload.requests[0].blocks[0]", []string{"name before"}},
		{"blocks not a list", `[{"id": "a", "at_ms": 0, "blocks": "A*3", "output_tokens": 1}]`, "workload.requests[0].blocks", []string{"must be a list"}},
		{"too large with output", `[{"id": "a", "at_ms": 0, "blocks": ["A*60"], "output_tokens": 100}]`, "workload.requests[0]", []string{"needs 67 GPU blocks", "gpu_blocks 64"}},
		{"too many tokens", `[{"id": "a", "at_ms": 0, "blocks": ["A"], "output_tokens": 2000001}]`, "workload.requests[0].output_tokens", []string{"≤ 2000000"}},
		{"request not object", `[5]`, "workload.requests[0]", []string{"must be an object"}},
		{"not a list", `{}`, "workload.requests", []string{"must be a list"}},
		{"empty list", `[]`, "workload.requests", []string{"at least one request"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			errs := parseErrors(t, requestsScenario(c.requests, `[]`), ParseEnv{})
			requireFieldError(t, errs, c.path, c.fragments...)
		})
	}

	// Blocks may be empty when the tail gives the prompt its tokens, and one token is enough.
	s := mustParse(t, requestsScenario(`[{"id": "a", "at_ms": 0, "blocks": [], "tail_tokens": 1, "output_tokens": 1}]`, `[]`))
	assert.Equal(t, []string{}, s.Workload.Requests[0].Blocks)
	s = mustParse(t, requestsScenario(`[{"id": "a", "at_ms": 0, "tail_tokens": 3, "output_tokens": 1}]`, `[]`))
	assert.Equal(t, []string{}, s.Workload.Requests[0].Blocks)
	// Exactly gpu_blocks is fine: the limit is "more than a worker holds".
	mustParse(t, requestsScenario(`[{"id": "a", "at_ms": 0, "blocks": ["A*63"], "output_tokens": 16}]`, `[]`))
	// null route_to means none.
	s = mustParse(t, requestsScenario(`[{"id": "a", "at_ms": 0, "blocks": ["A"], "output_tokens": 1, "route_to": null}]`, `[]`))
	assert.Nil(t, s.Workload.Requests[0].RouteTo)
}

func TestParseScriptedRequestLimit(t *testing.T) {
	var b strings.Builder
	b.WriteString("[")
	for i := range MaxScriptedRequests + 1 {
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString(`{"id":"r","at_ms":0,"blocks":["A"],"output_tokens":1}`)
	}
	b.WriteString("]")
	errs := parseErrors(t, requestsScenario(b.String(), `[]`), ParseEnv{})
	requireFieldError(t, errs, "workload.requests", "200000")
}

func TestParseScaleInRules(t *testing.T) {
	const req = `[{"id": "a", "at_ms": 0, "blocks": ["A"], "output_tokens": 1}]`
	cases := []struct {
		name, scaleIn, path string
		fragments           []string
	}{
		{"select without count", `[{"at_ms": 1, "workers": [1], "select": "highest_id"}]`, "scale_in[0].select", []string{`only applies with "count"`}},
		{"unknown select", `[{"at_ms": 1, "count": 1, "select": "random"}]`, "scale_in[0].select", []string{"highest_id, least_loaded, least_cached", `"random"`}},
		{"empty workers", `[{"at_ms": 1, "workers": []}]`, "scale_in[0].workers", []string{"at least one"}},
		{"count zero", `[{"at_ms": 1, "count": 0}]`, "scale_in[0].count", []string{"≥ 1"}},
		{"at_ms missing", `[{"count": 1}]`, "scale_in[0].at_ms", []string{"required"}},
		{"at_ms negative", `[{"at_ms": -5, "count": 1}]`, "scale_in[0].at_ms", []string{"≥ 0"}},
		{"grace negative", `[{"at_ms": 1, "count": 1, "grace_ms": -1}]`, "scale_in[0].grace_ms", []string{"≥ 0"}},
		{"negative id", `[{"at_ms": 1, "workers": [-1]}]`, "scale_in[0].workers[0]", []string{"worker id"}},
		{"id not integer", `[{"at_ms": 1, "workers": ["1"]}]`, "scale_in[0].workers[0]", []string{"integer"}},
		{"counts leave none", `[{"at_ms": 1, "count": 2}, {"at_ms": 2, "count": 2}]`, "scale_in", []string{"drains 4 workers of 4"}},
		{"not a list", `{"at_ms": 1}`, "scale_in", []string{"must be a list"}},
		{"action not object", `[3]`, "scale_in[0]", []string{"must be an object"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			errs := parseErrors(t, requestsScenario(req, c.scaleIn), ParseEnv{})
			requireFieldError(t, errs, c.path, c.fragments...)
		})
	}
	// Named ids plus counts up to workers − 1 are fine; a count may coincide with a named id's
	// worker at run time (then it is skipped, not a validation error).
	s := mustParse(t, requestsScenario(req, `[{"at_ms": 1, "count": 1, "grace_ms": null}, {"at_ms": 10, "workers": [3, 2], "grace_ms": 500}]`))
	require.Len(t, s.ScaleIn, 2)
	assert.Equal(t, []int{3, 2}, s.ScaleIn[1].Workers, "ids keep their order; the engine handles them ascending")
	require.NotNil(t, s.ScaleIn[1].GraceMS)
	assert.Equal(t, 500.0, *s.ScaleIn[1].GraceMS)

	var b strings.Builder
	b.WriteString("[")
	for i := range MaxScaleInActions + 1 {
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString(`{"at_ms": 1, "count": 1}`)
	}
	b.WriteString("]")
	errs := parseErrors(t, requestsScenario(req, b.String()), ParseEnv{})
	requireFieldError(t, errs, "scale_in", "at most 1000")
}

func TestParseWorkloadShape(t *testing.T) {
	cases := []struct {
		name, workload, path string
		fragments            []string
	}{
		{"missing", ``, "workload", []string{"required"}},
		{"type missing", `"workload": {"sessions": {}}`, "workload.type", []string{"required"}},
		{"unknown type", `"workload": {"type": "replay"}`, "workload.type", []string{"requests, sessions, trace", `"replay"`}},
		{"other member", `"workload": {"type": "sessions", "requests": []}`, "workload.requests", []string{`only allowed with type "requests"`}},
		{"requests member missing", `"workload": {"type": "requests"}`, "workload.requests", []string{"required"}},
		{"trace member missing", `"workload": {"type": "trace"}`, "workload.trace", []string{"required"}},
		{"trace two sources", `"workload": {"type": "trace", "trace": {"name": "mooncake-conversation", "path": "x.jsonl"}}`, "workload.trace", []string{"exactly one"}},
		{"trace no source", `"workload": {"type": "trace", "trace": {"speedup": 2}}`, "workload.trace", []string{"exactly one"}},
		{"unknown built-in", `"workload": {"type": "trace", "trace": {"name": "burstgpt"}}`, "workload.trace.name", []string{"mooncake-conversation", `"burstgpt"`}},
		{"bad sha256", `"workload": {"type": "trace", "trace": {"sha256": "abc"}}`, "workload.trace.sha256", []string{"64 hexadecimal"}},
		{"speedup zero", `"workload": {"type": "trace", "trace": {"name": "mooncake-conversation", "speedup": 0}}`, "workload.trace.speedup", []string{"> 0"}},
		{"offset negative", `"workload": {"type": "trace", "trace": {"name": "mooncake-conversation", "offset_ms": -1}}`, "workload.trace.offset_ms", []string{"≥ 0"}},
		{"limit zero", `"workload": {"type": "trace", "trace": {"name": "mooncake-conversation", "limit": 0}}`, "workload.trace.limit", []string{"≥ 1"}},
		{"block tokens not divisible", `"fleet": {"block_size": 48}, "workload": {"type": "trace", "trace": {"name": "mooncake-conversation"}}`, "workload.trace.trace_block_tokens", []string{"multiple of fleet.block_size (48)"}},
		{"sessions count", `"workload": {"type": "sessions", "sessions": {"count": 0}}`, "workload.sessions.count", []string{"≥ 1"}},
		{"sessions rate", `"workload": {"type": "sessions", "sessions": {"rate_per_s": 0}}`, "workload.sessions.rate_per_s", []string{"> 0"}},
		{"sessions output", `"workload": {"type": "sessions", "sessions": {"output_tokens": 0}}`, "workload.sessions.output_tokens", []string{"≥ 1"}},
		{"sessions think", `"workload": {"type": "sessions", "sessions": {"think_time_ms": -1}}`, "workload.sessions.think_time_ms", []string{"≥ 0"}},
		{"sessions empty prompt", `"workload": {"type": "sessions", "sessions": {"system_prompt_tokens": 0, "new_input_tokens": 0}}`, "workload.sessions", []string{"prompt is empty"}},
		{"sessions too many", `"workload": {"type": "sessions", "sessions": {"count": 2000000, "turns": 3}}`, "workload.sessions", []string{"6000000", "5000000"}},
		{"sessions last turn too large", `"fleet": {"gpu_blocks": 50}, "workload": {"type": "sessions", "sessions": {"turns": 10}}`, "workload.sessions", []string{"last turn", "needs 76 GPU blocks", "gpu_blocks 50"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			data := "{" + c.workload + "}"
			errs := parseErrors(t, data, ParseEnv{})
			requireFieldError(t, errs, c.path, c.fragments...)
		})
	}
}

// memTraces is a TraceSource over a map.
type memTraces map[string][]byte

func (m memTraces) Trace(sha string) ([]byte, error) {
	if d, ok := m[sha]; ok {
		return d, nil
	}
	return nil, errors.New("not found")
}

const smallTrace = `{"timestamp": 0, "input_length": 700, "output_length": 5, "hash_ids": [1, 2]}
{"timestamp": 10, "input_length": 1100, "output_length": 7, "hash_ids": [1, 3, 4], "extra": "ok"}

{"timestamp": 10, "input_length": 100, "output_length": 1, "hash_ids": [9]}
`

func TestParseTraceWorkloadSources(t *testing.T) {
	sha := sha256Hex([]byte(smallTrace))
	traces := memTraces{sha: []byte(smallTrace)}
	bySHA := `{"workload": {"type": "trace", "trace": {"sha256": "` + strings.ToUpper(sha) + `", "limit": 2}}}`

	t.Run("sha256 resolves through the source", func(t *testing.T) {
		s, err := Parse([]byte(bySHA), ParseEnv{Traces: traces})
		require.NoError(t, err)
		assert.Equal(t, sha, s.Workload.Trace.SHA256, "the hash is stored in lower case")
		rows, err := s.loadTrace(nil)
		require.NoError(t, err)
		require.Len(t, rows, 2, "limit keeps the first rows")
		assert.Equal(t, 2, rows[1].Line)
	})
	t.Run("unknown sha256", func(t *testing.T) {
		errs := parseErrors(t, bySHA, ParseEnv{Traces: memTraces{}})
		requireFieldError(t, errs, "workload.trace.sha256", "upload it first")
		errs = parseErrors(t, bySHA, ParseEnv{})
		requireFieldError(t, errs, "workload.trace.sha256", "upload it first")
	})
	t.Run("path refused without ReadFile", func(t *testing.T) {
		errs := parseErrors(t, `{"workload": {"type": "trace", "trace": {"path": "t.jsonl"}}}`, ParseEnv{Traces: traces})
		requireFieldError(t, errs, "workload.trace.path", "only accepted on the command line", "sha256")
	})
	t.Run("path becomes sha256", func(t *testing.T) {
		read := func(p string) ([]byte, error) {
			if p != "t.jsonl" {
				return nil, os.ErrNotExist
			}
			return []byte(smallTrace), nil
		}
		s, err := Parse([]byte(`{"workload": {"type": "trace", "trace": {"path": "t.jsonl", "limit": 2}}}`), ParseEnv{ReadFile: read})
		require.NoError(t, err)
		assert.Equal(t, sha, s.Workload.Trace.SHA256)
		assert.Empty(t, s.Workload.Trace.Path)
		assert.NotContains(t, string(s.CanonicalJSON()), "t.jsonl")
		rows, err := s.loadTrace(nil)
		require.NoError(t, err)
		assert.Len(t, rows, 2)
		// The same content named by its sha256 is the same scenario.
		viaSHA, err := Parse([]byte(bySHA), ParseEnv{Traces: traces})
		require.NoError(t, err)
		assert.Equal(t, viaSHA.ID(), s.ID())

		errs := parseErrors(t, `{"workload": {"type": "trace", "trace": {"path": "missing.jsonl"}}}`, ParseEnv{ReadFile: read})
		requireFieldError(t, errs, "workload.trace.path", "cannot read")
	})
	t.Run("bad rows name their line", func(t *testing.T) {
		bad := "{\"timestamp\": 0, \"input_length\": 10, \"output_length\": 1, \"hash_ids\": []}\n\n{\"timestamp\": 1, \"input_length\": 0, \"output_length\": 1, \"hash_ids\": []}\n"
		errs := parseErrors(t, `{"workload": {"type": "trace", "trace": {"path": "bad.jsonl"}}}`,
			ParseEnv{ReadFile: func(string) ([]byte, error) { return []byte(bad), nil }})
		requireFieldError(t, errs, "workload.trace.path", "line 3: input_length")
	})
	t.Run("rows too large for a worker", func(t *testing.T) {
		errs := parseErrors(t, `{"fleet": {"gpu_blocks": 16}, "workload": {"type": "trace", "trace": {"sha256": "`+sha+`"}}}`, ParseEnv{Traces: traces})
		requireFieldError(t, errs, "workload.trace", "line 2:", "gpu_blocks 16")
		for _, e := range errs {
			assert.NotContains(t, e.Message, "line 4:", "a 100-token row fits")
		}
		// With limit 1 only the first row is used, and it fits.
		_, err := Parse([]byte(`{"fleet": {"gpu_blocks": 16}, "workload": {"type": "trace", "trace": {"sha256": "`+sha+`", "limit": 1}}}`), ParseEnv{Traces: traces})
		require.NoError(t, err)
	})
	t.Run("hash ids per trace block size", func(t *testing.T) {
		// trace_block_tokens 256 needs floor(1100/256) = 4 ids on line 2, which has 3.
		errs := parseErrors(t, `{"workload": {"type": "trace", "trace": {"sha256": "`+sha+`", "trace_block_tokens": 256}}}`, ParseEnv{Traces: traces})
		requireFieldError(t, errs, "workload.trace.sha256", "line 2: hash_ids")
	})
}

func TestParseBuiltinTraceKeepsRows(t *testing.T) {
	s := mustParse(t, `{"workload": {"type": "trace", "trace": {"name": "mooncake-conversation", "limit": 100}}}`)
	rows, err := s.loadTrace(nil)
	require.NoError(t, err)
	assert.Len(t, rows, 100)

	// A fleet whose workers hold fewer blocks than the largest conversation needs is refused
	// with the rows' line numbers.
	errs := parseErrors(t, `{"fleet": {"gpu_blocks": 1000}, "workload": {"type": "trace", "trace": {"name": "mooncake-conversation"}}}`, ParseEnv{})
	requireFieldError(t, errs, "workload.trace", "line ", "gpu_blocks 1000")
	assert.LessOrEqual(t, len(errs), maxTraceRowErrors+1)
}

func TestExpandBlockLabels(t *testing.T) {
	assert.Equal(t, []string{"P#0", "P#1", "P#2", "Q", "R#0"}, ExpandBlockLabels([]string{"P*3", "Q", "R*1"}))
	assert.Equal(t, []string{}, ExpandBlockLabels(nil))
	// A label's last '*' separates the count, so a base may itself contain '*'.
	assert.Equal(t, []string{"a*b#0", "a*b#1"}, ExpandBlockLabels([]string{"a*b*2"}))
	assert.Equal(t, int64(5), labelBlockCount([]string{"P*3", "Q", "R"}))
}

func TestParseAcceptsIntegralNumbersForIntegers(t *testing.T) {
	s := mustParse(t, `{"fleet": {"workers": 8.0, "gpu_blocks": 1e3}, "workload": {"type": "sessions"}}`)
	assert.Equal(t, 8, s.Fleet.Workers)
	assert.Equal(t, 1000, s.Fleet.GPUBlocks)
}

func TestParseEmptyNameGetsDefault(t *testing.T) {
	s := mustParse(t, `{"name": "  ", "workload": {"type": "sessions"}}`)
	assert.Equal(t, DefaultScenarioName, s.Name)
	s = mustParse(t, `{"name": " Friday drain ", "workload": {"type": "sessions"}}`)
	assert.Equal(t, "Friday drain", s.Name)
}

func TestValidationErrorJSON(t *testing.T) {
	errs := parseErrors(t, `{"fleet": {"workers": 0}, "workload": {"type": "sessions"}}`, ParseEnv{})
	data, err := json.Marshal(errs)
	require.NoError(t, err)
	assert.Contains(t, string(data), `"path":"fleet.workers"`)
}

func TestJSONShapeIsCheckedBeforeTheTree(t *testing.T) {
	for doc, want := range map[string]int{`{}`: 1, `[]`: 1, `[1,2,3]`: 4, `{"a":[1,{"b":"x,y:[z"}],"c":[]}`: 6, ` [ 1 ] `: 2} {
		if err := checkJSONShape([]byte(doc)); err != nil {
			t.Errorf("%s: %v", doc, err)
		}
		var n int
		r := &treeReader{data: []byte(doc), dup: func(string, string) {}}
		r.skipSpace()
		if _, err := r.value(0); err != nil {
			t.Fatalf("%s: %v", doc, err)
		}
		n = r.values
		if n != want {
			t.Errorf("%s: the reader counts %d values, want %d", doc, n, want)
		}
	}
	// Four million and one values are refused before any tree is built: the allocations stay
	// far below one node per value.
	big := append([]byte{'['}, bytes.Repeat([]byte("0,"), maxJSONValues)...)
	big = append(big, '0', ']')
	allocs := testing.AllocsPerRun(1, func() {
		if _, err := decodeTree(big, func(string, string) {}); err == nil || !strings.Contains(err.Error(), "more than 4000000 JSON values") {
			t.Fatalf("decodeTree: %v", err)
		}
	})
	if allocs > 100 {
		t.Errorf("refusing %d values took %.0f allocations; want the count before the tree", maxJSONValues+1, allocs)
	}
	deep := strings.Repeat("[", maxJSONDepth+1) + strings.Repeat("]", maxJSONDepth+1)
	if err := checkJSONShape([]byte(deep)); err == nil || !strings.Contains(err.Error(), "nested more than") {
		t.Errorf("deep: %v", err)
	}
}

// workload.sessions.starts_at is informative: an RFC 3339 instant (kept in UTC's or its own
// offset as given), nothing else accepted, and no simulated figure changes.
func TestSessionsStartsAt(t *testing.T) {
	s := mustParse(t, `{"workload": {"type": "sessions", "sessions": {"count": 5, "starts_at": "2026-12-03T00:15:00Z"}}}`)
	at, ok := s.StartTime()
	require.True(t, ok)
	assert.Equal(t, "2026-12-03T00:15:00Z", at.Format(time.RFC3339))
	plain := mustParse(t, `{"workload": {"type": "sessions", "sessions": {"count": 5}}}`)
	_, ok = plain.StartTime()
	assert.False(t, ok)
	assert.NotContains(t, string(plain.CanonicalJSON()), "starts_at", "absent stays absent: ids unchanged")
	_, err := Parse([]byte(`{"workload": {"type": "sessions", "sessions": {"starts_at": "last night"}}}`), ParseEnv{})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "workload.sessions.starts_at: must be an instant in RFC 3339")
	ra, err := Run(context.Background(), s, RunOptions{})
	require.NoError(t, err)
	rb, err := Run(context.Background(), plain, RunOptions{})
	require.NoError(t, err)
	assert.Equal(t, rb.Summary, ra.Summary, "the start time changes no simulated figure")
}

// scriptedKeys makes the keys of ExpandBlockLabels' labels, labelHash'd and chained, without
// the labels.
func TestScriptedKeysAreExpandedLabels(t *testing.T) {
	for _, labels := range [][]string{nil, {"P*3", "Q", "R*1"}, {"a*b*2"}, {"sys*16", "u1", "u2", "tail*12"}, {"x*1000"}} {
		var want []uint64
		prev := uint64(keyRoot)
		for _, l := range ExpandBlockLabels(labels) {
			prev = chainKey(prev, labelHash(l))
			want = append(want, prev)
		}
		got := scriptedKeys(labels)
		assert.Equal(t, len(want), len(got), "%v", labels)
		assert.Equal(t, want, append([]uint64(nil), got...), "%v", labels)
	}
}
