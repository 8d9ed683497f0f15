package sim

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseAutoscalerDefaults(t *testing.T) {
	s := mustParse(t, `{"fleet": {"workers": 6}, "autoscaler": {}, "workload": {"type": "sessions"}}`)
	grace := 30000.0
	want := &Autoscaler{IntervalMS: 15000, Metric: MetricRequestsPerWorker, Target: 32, Tolerance: 0.1,
		MinWorkers: 1, MaxWorkers: 6, ScaleDownWindowMS: 300000, Select: SelectHighestID,
		GraceMS: &grace, StartupMS: 120000}
	assert.Equal(t, want, s.Autoscaler)

	// null grace and limits mean none; explicit limits are kept.
	s = mustParse(t, `{"autoscaler": {"grace_ms": null, "max_add_per_tick": 2, "max_remove_per_tick": null, "metric": "kv_usage", "target": 0.7}, "workload": {"type": "sessions"}}`)
	assert.Nil(t, s.Autoscaler.GraceMS)
	assert.Nil(t, s.Autoscaler.MaxRemovePerTick)
	require.NotNil(t, s.Autoscaler.MaxAddPerTick)
	assert.Equal(t, 2, *s.Autoscaler.MaxAddPerTick)
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
