package sim

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseAutoscalerDefaults(t *testing.T) {
	s := mustParse(t, `{"fleet": {"workers": 6}, "autoscaler": {}, "workload": {"type": "sessions"}}`)
	grace := 30000.0
	want := &Autoscaler{IntervalMS: 15000, Metric: MetricRequestsPerWorker, Source: SourcePods, Target: 32, Tolerance: 0.1,
		MinWorkers: 1, MaxWorkers: 6, DownscaleWindowMS: 300000, Select: SelectHighestID,
		GraceMS: &grace, StartupMS: 120000}
	assert.Equal(t, want, s.Autoscaler)
	assert.False(t, s.Autoscaler.UsesShorthand(), "no model-3 field: the legacy path")
	assert.Nil(t, s.Autoscaler.ControllerSettings().Behavior)
	assert.JSONEq(t, `{"interval_ms":15000,"metric":"requests_per_worker","source":"pods","target":32,"tolerance":0.1,
		"metric_delay_ms":0,"min_workers":1,"max_workers":6,"downscale_window_ms":300000,"select":"highest_id",
		"grace_ms":30000,"startup_ms":120000,"pending_ms":0,"reuse_draining":false}`, string(mustJSON(t, s.Autoscaler)))

	// null grace and limits mean none; explicit limits are kept.
	s = mustParse(t, `{"autoscaler": {"grace_ms": null, "max_add_per_tick": 2, "max_remove_per_tick": null, "metric": "kv_usage", "target": 0.7}, "workload": {"type": "sessions"}}`)
	assert.Nil(t, s.Autoscaler.GraceMS)
	assert.True(t, s.Autoscaler.MaxRemovePerTick.Present())
	assert.Nil(t, s.Autoscaler.MaxRemovePerTick.Ptr())
	require.NotNil(t, s.Autoscaler.MaxAddPerTick.Ptr())
	assert.Equal(t, 2, *s.Autoscaler.MaxAddPerTick.Ptr())
	assert.Nil(t, s.Autoscaler.ScaleDownWindowMS, "an absent shorthand stays absent")
	b := s.Autoscaler.ControllerSettings().Behavior
	require.NotNil(t, b, "a shorthand field takes the behavior path")
	assert.Equal(t, 2, b.Up.Policies[0].Value)
	assert.Equal(t, int64(300000e6), b.Down.WindowNS)
	assert.Contains(t, string(mustJSON(t, s.Autoscaler)), `"max_remove_per_tick":null,"max_add_per_tick":2`)
	assert.Equal(t, MetricKVUsage, s.Autoscaler.Metric)

	// No autoscaler object: none, and the model-3 fields of fleet and router take defaults.
	s = mustParse(t, `{"workload": {"type": "sessions"}}`)
	assert.Nil(t, s.Autoscaler)
	assert.Equal(t, 1, s.Fleet.GPUsPerWorker)
	assert.Equal(t, 0, s.Router.MigrationLimit)
}

func TestParseModel3ErrorsAllAtOnce(t *testing.T) {
	errs := parseErrors(t, `{"fleet": {"gpus_per_worker": 0}, "router": {"migration_limit": 1.5},
		"autoscaler": {"interval_ms": 10, "metric_delay_ms": 20, "min_workers": 5, "max_workers": 2, "selec": "x"},
		"workload": {"type": "sessions", "sessions": {"rate_stages": [{"duration_ms": 10}, {"rate_per_s": 1, "duration_ms": -1}]}}}`, ParseEnv{})
	requireFieldError(t, errs, "fleet.gpus_per_worker", "must be ≥ 1")
	requireFieldError(t, errs, "router.migration_limit", "whole number")
	requireFieldError(t, errs, "autoscaler.selec", `did you mean "select"`)
	requireFieldError(t, errs, "autoscaler.metric_delay_ms", "interval_ms")
	requireFieldError(t, errs, "autoscaler.min_workers", "max_workers")
	requireFieldError(t, errs, "workload.sessions.rate_stages[0].rate_per_s", "required")
	requireFieldError(t, errs, "workload.sessions.rate_stages[1].duration_ms", "must be > 0")
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return b
}

// TestPolicyValueAboveItsBound: a policy's value above an int32's range is refused with the
// bound it broke, where the message used to name only the lower one ("must be an integer >= 1
// (got 3000000000)"); a value below 1 keeps the message of the conformance example.
func TestPolicyValueAboveItsBound(t *testing.T) {
	for _, c := range []struct{ value, want string }{
		{"3000000000", "must be an integer in [1, 2147483647] (got 3000000000)"},
		{"1e400", "must be an integer in [1, 2147483647]"},
		{"0", "must be an integer >= 1 (got 0)"},
		{`"5"`, "must be an integer >= 1"},
	} {
		sc := `{"workload": {"type": "sessions", "sessions": {}}, "autoscaler": {"max_workers": 4, "behavior": {"scale_down": {"policies": [{"type": "pods", "value": ` + c.value + `, "period_ms": 60000}]}}}}`
		_, err := Parse([]byte(sc), ParseEnv{})
		if err == nil || !strings.Contains(err.Error(), "autoscaler.behavior.scale_down.policies[0].value: "+c.want) {
			t.Errorf("value %s: got %v, want %q", c.value, err, c.want)
		}
	}
}
