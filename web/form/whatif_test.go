package form

import (
	"encoding/json"
	"net/url"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/scalein-planner/scalein/sim"
	"github.com/scalein-planner/scalein/sim/whatif"
	"github.com/scalein-planner/scalein/templates"
)

// A range expands to numbers, stop included when the steps land on it; one that would never
// advance is refused before the loop (issue 19 H1).
func TestValueRange(t *testing.T) {
	vals, msg := valueRange("1e300", "1e300", "1")
	require.Empty(t, msg)
	assert.Len(t, vals, 1)
	vals, msg = valueRange("0.1", "0.3", "0.1")
	require.Empty(t, msg)
	assert.Equal(t, []any{json.Number("0.1"), json.Number("0.2"), json.Number("0.3")}, vals)
	_, msg = valueRange("1", "1e300", "1e-300")
	assert.Contains(t, msg, "more than 1000 values")
}

// The sweep form skips empty rows; each problem is listed in the API's words and placed beside
// its row, the service's refusals by the row the axis came from.
func TestSweepFormPlacesProblemsByRow(t *testing.T) {
	f := SweepFromValues(url.Values{"scenario": {`{"name": "x"}`},
		"axis0.path": {"kvcr.latency_ms"}, "axis0.values": {"1, 2"},
		"axis1.path": {"router.hints"},
		"axis2.path": {"kvcr.bandwidth_gbps"}, "axis2.start": {"5"}, "axis2.stop": {"1"}, "axis2.step": {"1"}})
	_, errs := f.Request()
	assert.Equal(t, []string{
		"field 2 (router.hints): give a list of values, or a start, stop and step",
		"field 3 (kvcr.bandwidth_gbps): stop must not be below start",
	}, errs.List)
	assert.Equal(t, map[string]string{"axis1.values": "give a list of values, or a start, stop and step",
		"axis2.start": "stop must not be below start"}, errs.Beside())

	f = SweepFromValues(url.Values{"scenario": {`{}`}, "axis0.path": {"kvcr.latency_ms"}, "axis0.values": {"1"},
		"axis2.path": {"kvcr.bandwith_gbps"}, "axis2.values": {"3"}})
	req, errs := f.Request()
	require.Zero(t, errs.Count())
	assert.Equal(t, []whatif.Axis{{Path: "kvcr.latency_ms", Values: []any{json.Number("1")}},
		{Path: "kvcr.bandwith_gbps", Values: []any{json.Number("3")}}}, req.Axes)
	errs = f.Refused("the sweep is invalid", []sim.FieldError{
		{Path: "axes[1].path", Message: "kvcr has no field"},
		{Path: "axes[0].values[0]", Message: "must be ≤ 10"},
		{Path: "fleet.workers", Message: "must be at least 1"},
		{Path: "name", Message: "too long"},
	})
	assert.Equal(t, []string{"axes[1].path: kvcr has no field", "axes[0].values[0]: must be ≤ 10",
		"fleet.workers: must be at least 1", "name: too long"}, errs.List)
	assert.Equal(t, map[string]string{"axis2.path": "kvcr has no field", "axis0.values": "must be ≤ 10",
		"scenario": "must be at least 1"}, errs.Beside())

	errs = f.Refused("the scenario could not be read: invalid character", nil)
	assert.Equal(t, []string{"the scenario could not be read: invalid character"}, errs.List)
	assert.Nil(t, errs.Beside())
}

// The plan form converts its numbers (empty limits are no limits) and places each problem
// beside its field, its own and the service's.
func TestPlanFormPlacesProblemsByField(t *testing.T) {
	f := PlanFromValues(url.Values{"scenario": {`{}`}, "remove": {"2"}, "start_ms": {"100"}, "ttft_p99_ms": {"8000"}, "max_killed": {"0"}})
	req, errs := f.Request()
	require.Zero(t, errs.Count())
	assert.Equal(t, whatif.Goal{Remove: 2, StartMS: 100}, req.Goal)
	require.NotNil(t, req.Constraints.TTFTP99MS)
	assert.Equal(t, 8000.0, *req.Constraints.TTFTP99MS)
	assert.Nil(t, req.Constraints.E2EP99MS)
	assert.Zero(t, req.Search.MaxRuns, "empty: the server's bound")

	f = PlanFromValues(url.Values{"remove": {"two"}, "start_ms": {"soon"}, "max_killed": {"1.5"}, "e2e_p99_ms": {"x"}})
	_, errs = f.Request()
	assert.Equal(t, []string{"Remove how many workers must be a whole number", "Not before (ms) must be a number",
		"End-to-end p99 at most must be a number of ms, or empty for no limit", "Requests killed at most must be a whole number"}, errs.List)
	assert.Len(t, errs.Beside(), 4)
	assert.Contains(t, errs.Beside(), "e2e_p99_ms")

	f = PlanFromValues(url.Values{"goal": {"tune"}})
	req, errs = f.Request()
	require.Zero(t, errs.Count(), "a tune plan needs no drain fields")
	assert.Equal(t, whatif.TuneAutoscaler, req.Goal.Tune)
	errs = f.Refused("the plan is invalid", []sim.FieldError{{Path: "goal.tune", Message: "needs a scenario with an autoscaler"},
		{Path: "search.max_runs", Message: "must be at most 64"}, {Path: "scenario", Message: "required"}})
	assert.Equal(t, map[string]string{"goal": "needs a scenario with an autoscaler", "max_runs": "must be at most 64",
		"scenario": "required"}, errs.Beside())
}

// The plan form carries the imported object in its hidden field to the request and back into
// the page; a refused origin is listed, not placed beside the scenario box.
func TestPlanFormCarriesTheOriginField(t *testing.T) {
	f := PlanFromValues(url.Values{"scenario": {`{}`}, "goal": {"tune"}, "origin": {` {"kind": "ScaledObject"} `}})
	req, errs := f.Request()
	require.Zero(t, errs.Count())
	assert.JSONEq(t, `{"kind": "ScaledObject"}`, string(req.Origin))
	var p templates.PlanNewPage
	f.Fill(&p, errs)
	assert.Equal(t, ` {"kind": "ScaledObject"} `, p.Origin)

	req, _ = PlanFromValues(url.Values{"scenario": {`{}`}, "goal": {"tune"}}).Request()
	assert.Nil(t, req.Origin, "no origin without an import")

	errs = f.Refused("the plan is invalid", []sim.FieldError{{Path: "origin", Message: "import the manifest again"}})
	assert.Equal(t, []string{"origin: import the manifest again"}, errs.List)
	assert.Nil(t, errs.Beside())
}
