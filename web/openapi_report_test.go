package web

import (
	"context"
	"encoding/json"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/scalein-planner/scalein/sim"
	"github.com/scalein-planner/scalein/sim/podautoscaler"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The document's Report schema (components.schemas.Report, the report of GET /api/v1/runs/{id})
// cannot drift from sim.Report: its properties are sim.Report's JSON fields one for one (walked
// by reflection, with the schema walk of openapi_scenario_test.go), required exactly where the
// encoder always writes a member, nullable exactly where it can write null; real reports of
// presets and conformance examples validate against it; and it refuses a report changed in a
// member's type or without a required member. Unlike a scenario's, a report's objects are
// open: a member added later must not break a client.

// reportCustomJSON are the types with their own MarshalJSON under sim.Report and the JSON type
// they write: an OptNumber is a number or null, ReasonCounts an object with every reason
// (TestReportSchemaCustomJSON checks both).
var reportCustomJSON = map[reflect.Type]string{
	reflect.TypeFor[sim.OptNumber]():    "number",
	reflect.TypeFor[sim.ReasonCounts](): "object",
}

// writesNull reports whether encoding/json can write null for a struct field of type t that is
// written (not left out): a pointer, or a custom type that writes null.
func writesNull(t reflect.Type, optional bool) bool {
	if t.Kind() != reflect.Pointer {
		return false
	}
	// A nil pointer with omitempty is left out, not null; an OptNumber writes null itself.
	return !optional || t.Elem() == reflect.TypeFor[sim.OptNumber]()
}

// newReportWalk walks sim.Report's types: every object open (no additionalProperties: false),
// its required members those without omitempty, its nullable members those that can be null,
// each with a description.
func newReportWalk() *schemaWalk {
	return &schemaWalk{root: "the report", custom: reportCustomJSON,
		objects: func(w *schemaWalk, path string, t reflect.Type, s *openapi3.Schema, fields []jsonField) {
			if s.AdditionalProperties.Has != nil && !*s.AdditionalProperties.Has {
				w.addf("%s: a report is an answer, open to new members; openapi.yaml should not say additionalProperties: false", w.where(path))
			}
			for _, f := range fields {
				p := strings.TrimPrefix(path+"."+f.name, ".")
				if required := slices.Contains(s.Required, f.name); required == f.optional {
					w.addf("%s: Go's %s.%s is always written: %v; openapi.yaml has it required: %v", p, t, f.name, !f.optional, required)
				}
				prop, ok := s.Properties[f.name]
				if !ok || prop.Value == nil {
					continue // compareStruct reports it
				}
				if null := writesNull(f.typ, f.optional); prop.Value.Nullable != null {
					w.addf("%s: Go's %s can be written as null: %v; openapi.yaml says nullable: %v", p, f.typ, null, prop.Value.Nullable)
				}
				if prop.Value.Description == "" && unwrap(prop.Value).Description == "" {
					w.addf("%s: openapi.yaml gives it no description", p)
				}
			}
			for _, name := range s.Required {
				if !slices.ContainsFunc(fields, func(f jsonField) bool { return f.name == name }) {
					w.addf("%s is required in openapi.yaml but not a JSON field of Go's %s", strings.TrimPrefix(path+"."+name, "."), t)
				}
			}
		}}
}

// TestReportSchemaMatchesGoType walks sim.Report and the Report schema side by side, both ways.
func TestReportSchemaMatchesGoType(t *testing.T) {
	newReportWalk().check(t, reflect.TypeFor[sim.Report](), componentSchema(t, "Report"), 150)

	// Teeth, by path: a field missing or extra, a wrong type, required where Go may leave the
	// member out or not where Go always writes it, and a pointer the schema makes not nullable.
	type row struct {
		AtMS     string `json:"at_ms"`
		Drained  []int  `json:"drained,omitempty"`
		Unknown  int    `json:"unknown"`
		Optional *int   `json:"optional"`
	}
	assert.ElementsMatch(t, []string{
		"scale_in[].at_ms: Go's string is written as JSON string; openapi.yaml says type number",
		"scale_in[].drained: Go's web.row.drained is always written: false; openapi.yaml has it required: true",
		"scale_in[].unknown: Go's web.row.unknown is always written: true; openapi.yaml has it required: false",
		"scale_in[].unknown missing from openapi.yaml (Go: web.row.unknown)",
		"scale_in[].optional: Go's web.row.optional is always written: true; openapi.yaml has it required: false",
		"scale_in[].optional missing from openapi.yaml (Go: web.row.optional)",
		"scale_in[].skipped is in openapi.yaml but not a JSON field of Go's web.row",
		"scale_in[].skipped is required in openapi.yaml but not a JSON field of Go's web.row",
	}, newReportWalk().problemsOf(t, "scale_in[]", reflect.TypeFor[row](), "ScaleInRow"))
	type bucket struct {
		TTFT float64 `json:"ttft_p50_ms"`
	}
	assert.Contains(t, newReportWalk().problemsOf(t, "timeseries.buckets[]", reflect.TypeFor[bucket](), "Bucket"),
		"timeseries.buckets[].ttft_p50_ms: Go's float64 can be written as null: false; openapi.yaml says nullable: true")
}

// schemaAt is the schema at a path of the walk's form ("workers[].role") under s.
func schemaAt(t *testing.T, s *openapi3.Schema, path string) *openapi3.Schema {
	t.Helper()
	for _, part := range strings.Split(path, ".") {
		name, list := strings.CutSuffix(part, "[]")
		prop := unwrap(s).Properties[name]
		require.NotNil(t, prop, "%s: no property %s", path, name)
		s = unwrap(prop.Value)
		if list {
			require.NotNil(t, s.Items, "%s: %s is no list", path, name)
			s = unwrap(s.Items.Value)
		}
	}
	return s
}

// TestReportSchemaEnums: each string member the Go code writes from a fixed set has that set
// as its enum (a member's null aside).
func TestReportSchemaEnums(t *testing.T) {
	report := componentSchema(t, "Report")
	roles := []string{sim.RolePrefill, sim.RoleDecode}
	for path, want := range map[string][]string{
		"schema":                        {sim.ReportSchema},
		"model_version":                 {sim.ModelVersion},
		"workers[].final_state":         {sim.StateStarting, sim.StateActive, sim.StateDraining, sim.StateRemoved},
		"workers[].role":                roles,
		"autoscaler.decisions[].reason": podautoscaler.Reasons,
		"autoscaler.decisions[].role":   roles,
		"requests[].status":             {sim.StatusCompleted, sim.StatusKilled, sim.StatusFailed},
		"requests[].pull_outcome": {sim.OutcomeSuccess, sim.OutcomePartial, sim.OutcomeMiss, sim.OutcomeNotNeeded,
			sim.OutcomeRejectedDraining, sim.OutcomeRejectedRemoved, sim.OutcomeAborted},
	} {
		var got []string
		for _, v := range schemaAt(t, report, path).Enum {
			if v != nil {
				got = append(got, v.(string))
			}
		}
		assert.ElementsMatch(t, want, got, path)
	}
	// An earlier model's report is told apart by its model_version: anything but the current.
	earlier := schemaAt(t, componentSchema(t, "EarlierReport"), "model_version")
	require.NotNil(t, earlier.Not)
	assert.Equal(t, []any{sim.ModelVersion}, earlier.Not.Value.Enum, "EarlierReport excludes the current model version")
}

// TestReportSchemaCustomJSON: the members of the types with their own MarshalJSON.
func TestReportSchemaCustomJSON(t *testing.T) {
	report := componentSchema(t, "Report")
	reasons := schemaAt(t, report, "summary.autoscaler.reasons")
	assert.ElementsMatch(t, podautoscaler.Reasons, slices.Collect(maps.Keys(reasons.Properties)), "ReasonCounts writes every reason")
	assert.ElementsMatch(t, podautoscaler.Reasons, reasons.Required, "ReasonCounts writes every reason, 0 included")
	for name, p := range reasons.Properties {
		assert.True(t, p.Value.Type.Is("integer"), name)
	}
	data, err := json.Marshal(sim.ReasonCounts{podautoscaler.ReasonLimited: 2})
	require.NoError(t, err)
	assert.NoError(t, reasons.VisitJSON(decodeJSON(t, data)))

	for _, path := range []string{"workers[].held_block_seconds", "workers[].held_block_seconds_draining",
		"requests[].prefill_worker", "requests[].handoff_wait_ms", "requests[].transfer_ms"} {
		s := schemaAt(t, report, path)
		for _, v := range []*sim.OptNumber{sim.NumberOf(2.5), sim.NullNumber()} {
			data, err := json.Marshal(v)
			require.NoError(t, err)
			assert.NoError(t, s.VisitJSON(decodeJSON(t, data)), "%s: %s", path, data)
		}
	}
}

// realReports runs presets (one with an autoscaler, one with pools and pool autoscalers, one
// with a trace) and the conformance examples, every one with per-request rows and the presets
// with an slo, and returns their reports as JSON by name.
func realReports(t *testing.T) map[string][]byte {
	t.Helper()
	ttft, tpot := 2000.0, 100.0
	perRequest := func(sc *sim.Scenario) { sc.Report.PerRequest = true }
	withSLO := func(sc *sim.Scenario) { perRequest(sc); sc.SLO = &sim.SLO{TTFTMS: &ttft, TPOTMS: &tpot} }
	out := map[string][]byte{}
	add := func(name string, rep *sim.Report) {
		data, err := json.Marshal(rep)
		require.NoError(t, err)
		out[name] = data
	}
	for _, key := range []string{"e2", "incident", "autoscaler-hour", "pd-llmd-keda", "mooncake-16to12"} {
		_, rep := runPreset(t, key, withSLO)
		add("preset "+key, rep)
	}
	// Pool autoscalers over a run that ends before their first decision: no decision at all.
	_, rep := runPreset(t, "pd-llmd-keda", func(sc *sim.Scenario) {
		sc.Workload.Sessions.Count, sc.Workload.Sessions.Turns, sc.Workload.Sessions.RateStages = 1, 1, nil
	})
	require.NotNil(t, rep.Autoscaler)
	require.Empty(t, rep.Autoscaler.Decisions, "the run ended before the first decision")
	add("preset pd-llmd-keda, one request", rep)
	files := shippedScenarios(t)
	for _, name := range slices.Sorted(maps.Keys(files)) {
		if !strings.HasPrefix(name, "sim/testdata/examples/") {
			continue
		}
		sc, err := sim.Parse(files[name], sim.ParseEnv{})
		if err != nil {
			continue // an invalid example, or expected.json
		}
		perRequest(sc)
		rep, err := sim.Run(context.Background(), sc, sim.RunOptions{})
		require.NoError(t, err, name)
		add(name, rep)
	}
	return out
}

// TestReportSchemaAcceptsRealReports: the reports of real runs validate against the Report
// schema, and between them they have every optional part (per-request rows, the autoscaler's
// decisions and pools' roles, the SLO, disaggregation).
func TestReportSchemaAcceptsRealReports(t *testing.T) {
	schema := componentSchema(t, "Report")
	reports := realReports(t)
	seen := map[string]bool{}
	for _, name := range slices.Sorted(maps.Keys(reports)) {
		doc := decodeJSON(t, reports[name])
		if err := schema.VisitJSON(doc, openapi3.MultiErrors()); err != nil {
			t.Errorf("%s: the report does not match the Report schema:\n%v", name, clipBody(err.Error()))
		}
		m := doc.(map[string]any)
		seen["requests"] = seen["requests"] || m["requests"] != nil
		seen["autoscaler"] = seen["autoscaler"] || m["autoscaler"] != nil
		seen["slo"] = seen["slo"] || jsonAt(m, "summary", "slo") != nil
		seen["disaggregation"] = seen["disaggregation"] || jsonAt(m, "summary", "disaggregation") != nil
		if d, ok := m["autoscaler"].(map[string]any); ok && len(d["decisions"].([]any)) > 0 {
			seen["decision role"] = seen["decision role"] || jsonAt(d, "decisions", 0).(map[string]any)["role"] != nil
		}
		if rows, ok := m["requests"].([]any); ok {
			for _, r := range rows {
				seen["pull outcome"] = seen["pull outcome"] || r.(map[string]any)["pull_outcome"] != nil
				seen["prefill worker"] = seen["prefill worker"] || r.(map[string]any)["prefill_worker"] != nil
			}
		}
	}
	assert.Greater(t, len(reports), 40, "the presets and the conformance examples ran")
	for _, part := range []string{"requests", "autoscaler", "slo", "disaggregation", "decision role", "pull outcome", "prefill worker"} {
		assert.True(t, seen[part], "some report has %s", part)
	}
}

// TestReportSchemaRefusesChangedReports: the schema has teeth. A report of a run with pools
// and pool autoscalers, changed in one member's type or without one required member, is
// refused; a member the schema does not know is accepted (answers are open).
func TestReportSchemaRefusesChangedReports(t *testing.T) {
	schema := componentSchema(t, "Report")
	_, rep := runPreset(t, "pd-llmd-keda", func(sc *sim.Scenario) {
		sc.Report.PerRequest = true
		sc.Workload.Sessions.Count = 20
	})
	base := asJSONMap(t, rep)
	require.NoError(t, schema.VisitJSON(base))
	for what, path := range map[string][]any{
		"summary.requests.total":          {"summary", "requests", "total"},
		"summary.ttft_ms.p99":             {"summary", "ttft_ms", "p99"},
		"a worker's drain_ms":             {"workers", 0, "drain_ms"},
		"a request's arrival_ms":          {"requests", 0, "arrival_ms"},
		"summary.disaggregation.handoffs": {"summary", "disaggregation", "handoffs"},
		"kvcr.bytes":                      {"kvcr", "bytes"},
		"summary.autoscaler":              {"summary", "autoscaler"},
	} {
		assert.Error(t, schema.VisitJSON(withMember(base, path, "12", false)), "%s as a string", what)
		assert.Error(t, schema.VisitJSON(withMember(base, path, nil, true)), "%s left out", what)
	}
	// The members only a run with pools has are optional, but typed.
	for what, path := range map[string][]any{
		"a worker's held_block_seconds": {"workers", 0, "held_block_seconds"},
		"a bucket's prefill_active":     {"timeseries", "buckets", 0, "prefill_active"},
		"a request's prefill_worker":    {"requests", 0, "prefill_worker"},
		"a decision's role":             {"autoscaler", "decisions", 0, "role"},
	} {
		assert.Error(t, schema.VisitJSON(withMember(base, path, "12", false)), "%s as a string", what)
		assert.NoError(t, schema.VisitJSON(withMember(base, path, nil, true)), "%s left out", what)
	}
	for what, c := range map[string]struct {
		path  []any
		value any
	}{
		"an unknown worker state":      {[]any{"workers", 0, "final_state"}, "gone"},
		"a role of none":               {[]any{"workers", 0, "role"}, "mixed"},
		"a request's status null":      {[]any{"requests", 0, "status"}, nil},
		"a count not whole":            {[]any{"summary", "preemptions"}, 1.5},
		"the list of workers null":     {[]any{"workers"}, nil},
		"an attainment above 1":        {[]any{"timeseries", "buckets", 0, "attainment"}, 1.5},
		"an unknown model version":     {[]any{"model_version"}, "scalein-model/0"},
		"a digest not a SHA-256":       {[]any{"digest"}, "abc"},
		"an slo summary of one member": {[]any{"summary", "slo"}, map[string]any{"requests": 1}},
	} {
		assert.Error(t, schema.VisitJSON(withMember(base, c.path, c.value, false)), what)
	}
	assert.NoError(t, schema.VisitJSON(withMember(base, []any{"summary", "new_member"}, 1, false)), "a member the schema does not know yet")
	assert.NoError(t, schema.VisitJSON(withMember(base, []any{"workers", 0, "new_member"}, "x", false)), "a member the schema does not know yet")
}

// TestReportSchemaEarlierModels: a run stored by an earlier model answers its report as that
// model wrote it (a model-2 report lacks members added since), which the Report schema refuses
// and the run answer accepts as an EarlierReport; relabelled as the current model's, it is
// refused, so a current report cannot pass as an earlier one.
func TestReportSchemaEarlierModels(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "model2", "incident-report.json"))
	require.NoError(t, err)
	old := decodeJSON(t, data).(map[string]any)
	require.Equal(t, "scalein-model/2", old["model_version"])
	assert.Error(t, componentSchema(t, "Report").VisitJSON(old), "a model-2 report lacks members of the current model")
	assert.NoError(t, componentSchema(t, "EarlierReport").VisitJSON(old))

	const runPath = "/api/v1/runs/aaaaaaaaaaaaaaaa"
	run := map[string]any{"id": "aaaaaaaaaaaaaaaa", "name": "n", "status": "done", "progress": 1, "url": "/runs/aaaaaaaaaaaaaaaa", "attempts": 1}
	run["report"] = old
	assert.NoError(t, validateAnswer(t, http.MethodGet, runPath, run), "a run stored by model 2")
	run["report"] = withMember(old, []any{"model_version"}, sim.ModelVersion, false)
	assert.Error(t, validateAnswer(t, http.MethodGet, runPath, run), "a model-2 report labelled with the current model version")
	_, rep := runPreset(t, "e2", nil)
	run["report"] = asJSONMap(t, rep)
	assert.NoError(t, validateAnswer(t, http.MethodGet, runPath, run), "a run of the current model")
}
