package web

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/scalein-planner/scalein/sim"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The document's Scenario schema (components.schemas.Scenario) cannot drift from sim.Scenario:
// every scenario the repository ships validates against it, its properties are sim.Scenario's
// JSON fields one for one (walked by reflection), and what the parser refuses for a field's own
// type or value the schema refuses too.

// scenarioSchema is components.schemas.Scenario of the loaded document.
func scenarioSchema(t *testing.T) *openapi3.Schema { return componentSchema(t, "Scenario") }

// componentSchema is components.schemas[name] of the loaded document.
func componentSchema(t *testing.T, name string) *openapi3.Schema {
	t.Helper()
	doc, err := openAPIDoc()
	require.NoError(t, err, "the OpenAPI document is valid OpenAPI 3")
	ref := doc.Components.Schemas[name]
	require.NotNil(t, ref, "components.schemas.%s is in openapi.yaml", name)
	require.NotNil(t, ref.Value)
	return ref.Value
}

// decodeJSON decodes a document into maps, slices and float64s, as a request body is validated.
func decodeJSON(t *testing.T, data []byte) any {
	t.Helper()
	var v any
	require.NoError(t, json.Unmarshal(data, &v))
	return v
}

// shippedScenarios are the JSON files of sim/presets and sim/testdata (module-relative path →
// bytes); the invalid examples and expected.json among them are for Parse to sort out.
func shippedScenarios(t *testing.T) map[string][]byte {
	t.Helper()
	files := map[string][]byte{}
	for _, root := range []string{"../sim/presets", "../sim/testdata"} {
		require.NoError(t, filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(path, ".json") {
				return err
			}
			data, err := os.ReadFile(path)
			files[strings.TrimPrefix(path, "../")] = data
			return err
		}))
	}
	return files
}

// TestScenarioSchemaAcceptsShippedScenarios: every preset and every scenario of sim/testdata
// that sim.Parse accepts validates against the Scenario schema, as written and as the server
// stores it (the parsed scenario with its defaults filled, the form answers carry).
func TestScenarioSchemaAcceptsShippedScenarios(t *testing.T) {
	schema := scenarioSchema(t)
	files := shippedScenarios(t)
	accepted, presets := 0, 0
	for _, name := range slices.Sorted(maps.Keys(files)) {
		data := files[name]
		s, err := sim.Parse(data, sim.ParseEnv{})
		if strings.HasPrefix(name, "sim/presets/") {
			presets++
			require.NoError(t, err, "%s: a preset parses", name)
		}
		if err != nil {
			continue
		}
		accepted++
		if err := schema.VisitJSON(decodeJSON(t, data), openapi3.MultiErrors()); err != nil {
			t.Errorf("%s: sim.Parse accepts it but the Scenario schema refuses it:\n%v", name, err)
		}
		stored, err := json.Marshal(s)
		require.NoError(t, err)
		if err := schema.VisitJSON(decodeJSON(t, stored), openapi3.MultiErrors()); err != nil {
			t.Errorf("%s: the scenario as stored (defaults filled) does not match the Scenario schema:\n%v", name, err)
		}
	}
	assert.GreaterOrEqual(t, presets, 10, "the presets were read")
	assert.GreaterOrEqual(t, accepted, presets+40, "the presets and the conformance examples were read")
}

// scenarioJSONAlternatives names the places where a Go field's JSON is one of several Go
// types, with the schema's anyOf branches in the same order. sim.Scenario's MarshalJSON writes
// "autoscaler" as the one *Autoscaler or, with disaggregation, as the *PoolAutoscalers of its
// field tagged json:"-" (docs/model.md#model-5).
var scenarioJSONAlternatives = map[string][]reflect.Type{
	"autoscaler": {reflect.TypeFor[sim.Autoscaler](), reflect.TypeFor[sim.PoolAutoscalers]()},
}

// scenarioCustomJSON are the types with their own MarshalJSON under sim.Scenario and the JSON
// they write, which reflection cannot see. Scenario itself is walked as a struct (its
// MarshalJSON writes its fields, with scenarioJSONAlternatives); a PerTick is null or a count.
var scenarioCustomJSON = map[reflect.Type]string{
	reflect.TypeFor[sim.Scenario](): "object",
	reflect.TypeFor[sim.PerTick]():  "integer",
}

// goJSONType is the JSON Schema type of a Go type's encoding/json form (custom: the types with
// their own MarshalJSON and the JSON type they write).
func goJSONType(t reflect.Type, custom map[reflect.Type]string) string {
	if c, ok := custom[t]; ok {
		return c
	}
	switch t.Kind() {
	case reflect.Struct, reflect.Map:
		return "object"
	case reflect.Slice, reflect.Array:
		return "array"
	case reflect.String:
		return "string"
	case reflect.Bool:
		return "boolean"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "integer"
	case reflect.Float32, reflect.Float64:
		return "number"
	}
	return t.Kind().String()
}

// jsonField is one member a struct writes; optional when encoding/json may leave it out
// (omitempty, or a field of an embedded struct pointer).
type jsonField struct {
	name     string
	typ      reflect.Type
	optional bool
}

// jsonFields are the members encoding/json writes for a struct: exported fields by their
// json tag's name (or Go name), json:"-" skipped, embedded structs without a name flattened.
func jsonFields(t reflect.Type) []jsonField {
	var out []jsonField
	for f := range t.Fields() {
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		ft := f.Type
		for ft.Kind() == reflect.Pointer {
			ft = ft.Elem()
		}
		if f.Anonymous && name == "" && ft.Kind() == reflect.Struct {
			for _, inner := range jsonFields(ft) {
				inner.optional = inner.optional || f.Type.Kind() == reflect.Pointer
				out = append(out, inner)
			}
			continue
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		out = append(out, jsonField{name, f.Type, slices.Contains(strings.Split(opts, ","), "omitempty")})
	}
	return out
}

// schemaWalk compares a Go type with a schema, collecting every difference by its JSON path.
type schemaWalk struct {
	problems []string
	visited  int // properties compared, so a walk that compared nothing fails
	root     string
	// custom are the types with their own MarshalJSON and the JSON type they write;
	// alternatives the paths whose JSON is one of several Go types (anyOf branches in order).
	custom       map[reflect.Type]string
	alternatives map[string][]reflect.Type
	// objects checks each object's additionalProperties, required and nullable members against
	// its Go struct (path, Go type, struct's schema, its JSON fields).
	objects func(w *schemaWalk, path string, t reflect.Type, s *openapi3.Schema, fields []jsonField)
}

// newScenarioWalk walks sim.Scenario's types, whose objects are all closed: sim.Parse refuses
// an unknown member of every object of a scenario (objectView.finish).
func newScenarioWalk() *schemaWalk {
	return &schemaWalk{root: "the scenario", custom: scenarioCustomJSON, alternatives: scenarioJSONAlternatives,
		objects: func(w *schemaWalk, path string, _ reflect.Type, s *openapi3.Schema, _ []jsonField) {
			if s.AdditionalProperties.Has == nil || *s.AdditionalProperties.Has {
				w.addf("%s: sim.Parse refuses unknown fields here; openapi.yaml should say additionalProperties: false", w.where(path))
			}
		}}
}

func (w *schemaWalk) addf(format string, args ...any) {
	w.problems = append(w.problems, fmt.Sprintf(format, args...))
}

// unwrap follows the {nullable: true, allOf: [{$ref}, …]} wrapper the document uses for a
// nullable reference, or one with further constraints (without properties of their own), to the
// schema it wraps.
func unwrap(s *openapi3.Schema) *openapi3.Schema {
	for s.Type.IsEmpty() && len(s.AllOf) > 0 && len(s.Properties) == 0 && s.AllOf[0].Value != nil {
		s = s.AllOf[0].Value
	}
	return s
}

// where names a path in messages (w.root for the root).
func (w *schemaWalk) where(path string) string {
	if path == "" {
		return w.root
	}
	return path
}

func (w *schemaWalk) compare(path string, t reflect.Type, s *openapi3.Schema) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	s = unwrap(s)
	if alts, ok := w.alternatives[path]; ok {
		branches := s.AnyOf
		if len(branches) != len(alts) {
			w.addf("%s: Go writes it as one of %v; openapi.yaml should have an anyOf of %d schemas (has %d)", w.where(path), alts, len(alts), len(branches))
			return
		}
		for i, alt := range alts {
			w.compareType(path, alt, unwrap(branches[i].Value))
		}
		return
	}
	w.compareType(path, t, s)
}

// compareType compares a Go type and a schema of one JSON type.
func (w *schemaWalk) compareType(path string, t reflect.Type, s *openapi3.Schema) {
	want := goJSONType(t, w.custom)
	if !s.Type.Is(want) {
		w.addf("%s: Go's %s is written as JSON %s; openapi.yaml says type %s", w.where(path), t, want, strings.Join(s.Type.Slice(), ", "))
		return
	}
	_, custom := w.custom[t]
	if !custom && (reflect.PointerTo(t).Implements(reflect.TypeFor[json.Marshaler]()) || t.Implements(reflect.TypeFor[json.Marshaler]())) {
		w.addf("%s: Go's %s has its own MarshalJSON; say what it writes in the walk's custom table", w.where(path), t)
		return
	}
	switch want {
	case "array":
		if s.Items == nil || s.Items.Value == nil {
			w.addf("%s: openapi.yaml gives the list no items schema", w.where(path))
			return
		}
		w.compare(path+"[]", t.Elem(), s.Items.Value)
	case "object":
		if t.Kind() == reflect.Map {
			if custom {
				return // its members are its MarshalJSON's: a table of the test that uses it checks them
			}
			if s.AdditionalProperties.Schema == nil || s.AdditionalProperties.Schema.Value == nil {
				w.addf("%s: Go's map needs additionalProperties with a schema in openapi.yaml", w.where(path))
				return
			}
			w.compare(path+".*", t.Elem(), s.AdditionalProperties.Schema.Value)
			return
		}
		w.compareStruct(path, t, s)
	}
}

func (w *schemaWalk) compareStruct(path string, t reflect.Type, s *openapi3.Schema) {
	fields := jsonFields(t)
	w.objects(w, path, t, s, fields)
	for _, f := range fields {
		p := strings.TrimPrefix(path+"."+f.name, ".")
		prop, ok := s.Properties[f.name]
		if !ok || prop.Value == nil {
			w.addf("%s missing from openapi.yaml (Go: %s.%s)", p, t, f.name)
			continue
		}
		w.visited++
		w.compare(p, f.typ, prop.Value)
	}
	for name := range s.Properties {
		if !slices.ContainsFunc(fields, func(f jsonField) bool { return f.name == name }) {
			w.addf("%s is in openapi.yaml but not a JSON field of Go's %s", strings.TrimPrefix(path+"."+name, "."), t)
		}
	}
}

// check walks the root type against its schema, failing t with each difference in path order,
// and that the walk compared more than minVisited properties (it reached the nested fields).
func (w *schemaWalk) check(t *testing.T, root reflect.Type, s *openapi3.Schema, minVisited int) {
	t.Helper()
	w.compare("", root, s)
	slices.Sort(w.problems)
	for _, p := range w.problems {
		t.Error(p)
	}
	assert.Greater(t, w.visited, minVisited, "the walk reached the nested fields")
}

// problemsOf walks a Go type against components.schemas[name] at path and returns the
// differences (for a test that the walk finds them).
func (w *schemaWalk) problemsOf(t *testing.T, path string, typ reflect.Type, name string) []string {
	t.Helper()
	w.compare(path, typ, componentSchema(t, name))
	return w.problems
}

// TestScenarioSchemaMatchesGoType walks sim.Scenario and the Scenario schema side by side:
// every JSON field of the Go types is a property of the schema, of the same JSON type, and
// every property of the schema is a Go field.
func TestScenarioSchemaMatchesGoType(t *testing.T) {
	newScenarioWalk().check(t, reflect.TypeFor[sim.Scenario](), scenarioSchema(t), 100)

	// The walk has teeth: a Go type with a field the schema lacks, one the schema has more of,
	// and a field of the wrong JSON type are each reported by path.
	type rules struct {
		Select     string `json:"select"`
		SelectPol  string `json:"select_policy"`
		WindowMS   string `json:"window_ms"`
		Skipped    int    `json:"-"`
		unexported int
		Tolerance  *float64 `json:"tolerance"`
	}
	_ = rules{}.unexported
	assert.ElementsMatch(t, []string{
		"autoscaler.behavior.scale_down.select_policy missing from openapi.yaml (Go: web.rules.select_policy)",
		"autoscaler.behavior.scale_down.window_ms: Go's string is written as JSON string; openapi.yaml says type integer",
		"autoscaler.behavior.scale_down.policies is in openapi.yaml but not a JSON field of Go's web.rules",
	}, newScenarioWalk().problemsOf(t, "autoscaler.behavior.scale_down", reflect.TypeFor[rules](), "ScalingRules"))
}

// validScenario is a scenario both the server and the schema accept, as maps to change.
func validScenario() map[string]any {
	return map[string]any{
		"name":   "schema teeth",
		"fleet":  map[string]any{"workers": 4, "gpu_blocks": 1024, "timing": map[string]any{"decode_ms": 8}},
		"router": map[string]any{"policy": "kv_aware"},
		"autoscaler": map[string]any{"metric": "requests_waiting", "target": 4, "max_workers": 6,
			"behavior": map[string]any{"scale_down": map[string]any{"select": "min", "policies": []any{map[string]any{"type": "pods", "value": 1, "period_ms": 60000}}}}},
		"workload": map[string]any{"type": "sessions", "sessions": map[string]any{"count": 10, "rate_stages": []any{map[string]any{"duration_ms": 60000, "rate_per_s": 1}}}},
		"slo":      map[string]any{"ttft_ms": 2000},
	}
}

// TestScenarioSchemaRefusesWhatServerRefuses: hand-made bad scenarios (a string where a number
// goes, an unknown enum value, an unknown field, a rule the schema can state) are refused by
// sim.Parse and by the schema alike.
func TestScenarioSchemaRefusesWhatServerRefuses(t *testing.T) {
	schema := scenarioSchema(t)
	check := func(what string, v map[string]any, ok bool) {
		t.Helper()
		data, err := json.Marshal(v)
		require.NoError(t, err)
		_, parseErr := sim.Parse(data, sim.ParseEnv{})
		schemaErr := schema.VisitJSON(decodeJSON(t, data))
		if ok {
			assert.NoError(t, parseErr, "%s: the server accepts it", what)
			assert.NoError(t, schemaErr, "%s: the schema accepts it", what)
			return
		}
		assert.Error(t, parseErr, "%s: the server refuses it", what)
		assert.Error(t, schemaErr, "%s: the schema refuses it", what)
	}
	check("the valid scenario", validScenario(), true)
	m := func(f func(s map[string]any)) map[string]any { s := validScenario(); f(s); return s }
	at := func(s map[string]any, path ...string) map[string]any {
		for _, k := range path {
			s = s[k].(map[string]any)
		}
		return s
	}
	check("the minimal scenario", map[string]any{"workload": map[string]any{"type": "sessions"}}, true)
	example, ok := schema.Example.(map[string]any)
	require.True(t, ok, "the Scenario schema has an example")
	check("the schema's example", example, true)
	// pd gives s prefill and decode pools (and no autoscaler), with d's members besides.
	pd := func(s map[string]any, d map[string]any) {
		delete(at(s, "fleet"), "workers")
		delete(s, "autoscaler")
		s["disaggregation"] = map[string]any{"prefill": map[string]any{"workers": 1}, "decode": map[string]any{"workers": 1}}
		maps.Copy(at(s, "disaggregation"), d)
	}
	// requests gives s a scripted workload of one request with these members besides.
	requests := func(s map[string]any, r map[string]any) {
		req := map[string]any{"id": "r1", "at_ms": 0, "blocks": []any{"P*2"}, "output_tokens": 4}
		maps.Copy(req, r)
		for k, v := range r {
			if v == nil {
				delete(req, k)
			}
		}
		s["workload"] = map[string]any{"type": "requests", "requests": []any{req}}
	}
	// The changes the bad scenarios below build on are accepted alone.
	check("a pool autoscaler with disaggregation", m(func(s map[string]any) {
		pd(s, map[string]any{"decode": map[string]any{"workers": 2, "timing": map[string]any{"decode_ms": 4}}})
		s["autoscaler"] = map[string]any{"prefill": map[string]any{"metric": "handoffs_held", "target": 2}, "decode": nil}
	}), true)
	check("a fixed lease with its ttl", m(func(s map[string]any) {
		pd(s, map[string]any{"lease": map[string]any{"mode": "fixed", "ttl_ms": 1000}})
	}), true)
	check("a scale-in schedule", m(func(s map[string]any) {
		delete(s, "autoscaler")
		s["scale_in"] = []any{map[string]any{"at_ms": 0, "workers": []any{3}}, map[string]any{"at_ms": 0, "count": 1, "select": "least_loaded"}}
	}), true)
	check("a scripted request", m(func(s map[string]any) { requests(s, nil) }), true)
	check("a built-in trace", m(func(s map[string]any) {
		s["workload"] = map[string]any{"type": "trace", "trace": map[string]any{"name": "mooncake-conversation", "limit": 10}}
	}), true)
	for what, bad := range map[string]map[string]any{
		"fleet.workers as a string":    m(func(s map[string]any) { at(s, "fleet")["workers"] = "4" }),
		"fleet.workers not whole":      m(func(s map[string]any) { at(s, "fleet")["workers"] = 4.5 }),
		"fleet.workers 0":              m(func(s map[string]any) { at(s, "fleet")["workers"] = 0 }),
		"a timing as a string":         m(func(s map[string]any) { at(s, "fleet", "timing")["decode_ms"] = "8ms" }),
		"an unknown router policy":     m(func(s map[string]any) { at(s, "router")["policy"] = "kv-aware" }),
		"an unknown autoscaler metric": m(func(s map[string]any) { at(s, "autoscaler")["metric"] = "cpu" }),
		"an unknown workload type":     m(func(s map[string]any) { at(s, "workload")["type"] = "chat" }),
		"an unknown select policy":     m(func(s map[string]any) { at(s, "autoscaler", "behavior", "scale_down")["select"] = "Max" }),
		"a misspelt field":             m(func(s map[string]any) { at(s, "fleet")["gpu_block"] = 1024 }),
		"select_policy for select":     m(func(s map[string]any) { at(s, "autoscaler", "behavior", "scale_down")["select_policy"] = "min" }),
		"a policy of 0 pods": m(func(s map[string]any) {
			jsonAt(s, "autoscaler", "behavior", "scale_down", "policies", 0).(map[string]any)["value"] = 0
		}),
		"behavior with a shorthand":     m(func(s map[string]any) { at(s, "autoscaler")["scale_down_window_ms"] = 60000 }),
		"aggregate with a pods source":  m(func(s map[string]any) { at(s, "autoscaler")["aggregate"] = "max" }),
		"no workload":                   m(func(s map[string]any) { delete(s, "workload") }),
		"sessions beside type requests": m(func(s map[string]any) { at(s, "workload")["type"] = "requests" }),
		"a rate stage of no duration": m(func(s map[string]any) {
			jsonAt(s, "workload", "sessions", "rate_stages", 0).(map[string]any)["duration_ms"] = 0
		}),
		"a trace named twice": m(func(s map[string]any) {
			s["workload"] = map[string]any{"type": "trace", "trace": map[string]any{"name": "mooncake-conversation", "sha256": strings.Repeat("a", 64)}}
		}),
		"an unknown built-in trace": m(func(s map[string]any) {
			s["workload"] = map[string]any{"type": "trace", "trace": map[string]any{"name": "sharegpt"}}
		}),
		"a scale-in action with workers and count": m(func(s map[string]any) {
			delete(s, "autoscaler")
			s["scale_in"] = []any{map[string]any{"at_ms": 0, "workers": []any{3}, "count": 1}}
		}),
		"a scale-in action with workers and select": m(func(s map[string]any) {
			delete(s, "autoscaler")
			s["scale_in"] = []any{map[string]any{"at_ms": 0, "workers": []any{3}, "select": "least_loaded"}}
		}),
		"a scale-in action without at_ms":       m(func(s map[string]any) { delete(s, "autoscaler"); s["scale_in"] = []any{map[string]any{"count": 1}} }),
		"an slo with no limit":                  m(func(s map[string]any) { s["slo"] = map[string]any{} }),
		"an slo of 0 ms":                        m(func(s map[string]any) { s["slo"] = map[string]any{"tpot_ms": 0} }),
		"scale_in null":                         m(func(s map[string]any) { s["scale_in"] = nil }),
		"a kvcr bandwidth below the least rate": m(func(s map[string]any) { s["kvcr"] = map[string]any{"bandwidth_gbps": 1e-9} }),
		"a lease ttl with the heartbeat mode":   m(func(s map[string]any) { pd(s, map[string]any{"lease": map[string]any{"ttl_ms": 1000}}) }),
		"a pool without its workers":            m(func(s map[string]any) { pd(s, map[string]any{"decode": map[string]any{}}) }),
		"a pool's block_size": m(func(s map[string]any) {
			pd(s, map[string]any{"decode": map[string]any{"workers": 1, "block_size": 16}})
		}),
		"a pool autoscaler's unknown member": m(func(s map[string]any) {
			pd(s, nil)
			s["autoscaler"] = map[string]any{"prefill": map[string]any{"metric": "handoffs_held", "targett": 2}}
		}),
		"fleet.workers with pools":                 m(func(s map[string]any) { pd(s, nil); at(s, "fleet")["workers"] = 2 }),
		"one autoscaler with pools":                m(func(s map[string]any) { pd(s, nil); s["autoscaler"] = map[string]any{"target": 2} }),
		"handoffs_held for one fleet":              m(func(s map[string]any) { at(s, "autoscaler")["metric"] = "handoffs_held" }),
		"a scripted request without output_tokens": m(func(s map[string]any) { requests(s, map[string]any{"output_tokens": nil}) }),
		"a block label with a bad repeat":          m(func(s map[string]any) { requests(s, map[string]any{"blocks": []any{"P*x"}}) }),
		"a request id of 201 characters":           m(func(s map[string]any) { requests(s, map[string]any{"id": strings.Repeat("é", 201)}) }),
	} {
		check(what, bad, false)
	}
}

// schemaBlindExamples are the invalid conformance examples (sim/testdata/examples/invalid) whose
// only problem is a rule between fields or with the rest of the scenario, which a JSON schema
// of OpenAPI 3.0 does not state: the schema accepts them, the server refuses them. Every other
// invalid example must be refused by the schema too.
var schemaBlindExamples = map[string]string{
	"autoscaler-metric-delay-not-below-interval.json": "metric_delay_ms against interval_ms",
	"autoscaler-min-above-max.json":                   "min_workers against max_workers",
	"autoscaler-pending-above-startup.json":           "pending_ms against startup_ms",
	"autoscaler-target-not-milli.json":                "a multiple of 0.001: as multipleOf, a validator without kin-openapi's slack refuses 0.7 (0.7 ÷ 0.001 is not whole in doubles)",
	"batched-tokens-below-max-num-seqs.json":          "max_batched_tokens against max_num_seqs",
	"duplicate-request-id.json":                       "unique ids across list items",
	"empty-prompt.json":                               "blocks against tail_tokens",
	"kvcr-enabled-without-host-cache.json":            "kvcr.enabled against fleet.host_blocks",
	"pd-count-without-role.json":                      "role against disaggregation",
	"pd-request-too-large-for-decode.json":            "a request's tokens against a pool's blocks",
	"pd-role-batched-below-seqs.json":                 "a pool's max_batched_tokens against its max_num_seqs",
	"pd-route-to-decode-worker.json":                  "route_to against the prefill pool's size",
	"pd-scale-in-leaves-no-decode.json":               "the drained workers against a pool's size",
	"request-too-large.json":                          "a request's tokens against gpu_blocks",
	"scale-in-leaves-no-active-worker.json":           "the drained workers against fleet.workers",
	"scale-in-role-without-disaggregation.json":       "role against disaggregation",
	"scale-in-worker-named-twice.json":                "worker ids across actions",
	"scale-in-worker-outside-fleet.json":              "a worker id against fleet.workers",
	"tail-tokens-not-below-block-size.json":           "tail_tokens against fleet.block_size",
}

// TestScenarioSchemaRefusesInvalidExamples: the schema refuses every invalid conformance
// example whose problem lies in one field's type or value (or a rule it states), and the list
// of those it cannot refuse is exact.
func TestScenarioSchemaRefusesInvalidExamples(t *testing.T) {
	schema := scenarioSchema(t)
	paths, err := filepath.Glob("../sim/testdata/examples/invalid/*.json")
	require.NoError(t, err)
	require.NotEmpty(t, paths)
	seen := map[string]bool{}
	for _, p := range paths {
		name := filepath.Base(p)
		data, err := os.ReadFile(p)
		require.NoError(t, err)
		_, parseErr := sim.Parse(data, sim.ParseEnv{})
		require.Error(t, parseErr, "%s: the server refuses it", name)
		schemaErr := schema.VisitJSON(decodeJSON(t, data))
		why, blind := schemaBlindExamples[name]
		seen[name] = true
		switch {
		case blind && schemaErr != nil:
			t.Errorf("%s: the schema refuses it now; remove it from schemaBlindExamples (%s)", name, why)
		case !blind && schemaErr == nil:
			t.Errorf("%s: the server refuses it (%v) but the schema accepts it; state the rule in openapi.yaml, or list it in schemaBlindExamples with the reason", name, parseErr)
		}
	}
	for name := range schemaBlindExamples {
		assert.True(t, seen[name], "schemaBlindExamples names %s, which is not an invalid example", name)
	}
}

// mutationsFor are the values TestScenarioSchemaNeverStricterThanServer puts in a member that
// holds v: the other JSON types, and for a number the edges of the bounds the parser checks,
// for a string every word of the scenario's enums.
func mutationsFor(v any) []any {
	others := []any{nil, true, "x", 1.0, []any{}, map[string]any{}}
	switch v.(type) {
	case float64:
		return append(others, -1.0, 0.0, 0.5, 1.5, 2.0, 1e-7, 1e-6, 1e-3, 0.7, 4.0, 70.0,
			16383.0, 16384.0, 16385.0, 1048576.0, 1048577.0, 1800000.0, 1800001.0, 2e6, 2e6+1,
			3600000.0, 3600001.0, 5e6, 5e6+1, 1e7, 1e7+1, 1e8, 1e8+1, 1e9, 1e9+1,
			2147483647.0, 2147483648.0, 1e10, 1e10+1, 17179869184.0, 17179869185.0)
	case string:
		return append(others, "", "pods", "percent", "external", "sum", "avg", "max", "min", "disabled",
			"kv_usage", "offered_rate", "handoffs_held", "requests_waiting", "highest_id", "least_loaded",
			"least_cached", "kv_aware", "round_robin", "prefill", "decode", "fixed", "heartbeat", "wait",
			"skip", "recompute", "fail", "sessions", "requests", "trace", "P*8", "P*0", " ",
			"2026-12-03T00:00:00Z", "mooncake-conversation")
	case bool:
		return append(others, false)
	}
	return others
}

// withMember returns a copy of the decoded document v with the member at path set to value
// (remove: deleted).
func withMember(v any, path []any, value any, remove bool) any {
	if len(path) == 0 {
		return value
	}
	switch c := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(c))
		for k, x := range c {
			out[k] = x
		}
		k := path[0].(string)
		if len(path) == 1 && remove {
			delete(out, k)
		} else {
			out[k] = withMember(c[k], path[1:], value, remove)
		}
		return out
	case []any:
		out := slices.Clone(c)
		i := path[0].(int)
		out[i] = withMember(c[i], path[1:], value, remove)
		return out
	}
	return v
}

// memberPaths lists the path of every member and list item of v.
func memberPaths(v any, prefix []any) [][]any {
	var out [][]any
	switch c := v.(type) {
	case map[string]any:
		for _, k := range slices.Sorted(maps.Keys(c)) {
			p := append(slices.Clone(prefix), k)
			out = append(out, p)
			out = append(out, memberPaths(c[k], p)...)
		}
	case []any:
		for i, x := range c {
			if i > 1 {
				break // the first two items of a list stand for the rest
			}
			p := append(slices.Clone(prefix), i)
			out = append(out, p)
			out = append(out, memberPaths(x, p)...)
		}
	}
	return out
}

// TestScenarioSchemaNeverStricterThanServer: the schema states no bound, type or required member
// the server does not enforce. Each member of a few stored scenarios (every default filled, so
// every field is present) is set to each of mutations, and deleted; whatever sim.Parse accepts,
// the schema must accept.
func TestScenarioSchemaNeverStricterThanServer(t *testing.T) {
	schema := scenarioSchema(t)
	bases := []string{
		"sim/presets/autoscaler-day.json", "sim/presets/autoscaler-keda.json", "sim/presets/pd-vllm-lease.json",
		"sim/presets/e2.json",
		"sim/testdata/examples/hpa_legacy_spike_behavior.json", "sim/testdata/examples/eviction_deepest_first.json",
		"sim/testdata/examples/pd_drain_fixed.json",
	}
	accepted := 0
	for _, name := range bases {
		data, err := os.ReadFile("../" + name)
		require.NoError(t, err)
		s, err := sim.Parse(data, sim.ParseEnv{})
		require.NoError(t, err, name)
		stored, err := json.Marshal(s)
		require.NoError(t, err)
		doc := decodeJSON(t, stored)
		{
			for _, path := range memberPaths(doc, nil) {
				try := func(v any, what string) {
					b, err := json.Marshal(v)
					require.NoError(t, err)
					if _, err := sim.Parse(b, sim.ParseEnv{}); err != nil {
						return
					}
					accepted++
					if err := schema.VisitJSON(v); err != nil {
						t.Errorf("%s with %v %s: sim.Parse accepts it, the Scenario schema refuses it: %v", name, path, what, err)
					}
				}
				try(withMember(doc, path, nil, true), "left out")
				for _, m := range mutationsFor(jsonAt(doc, path...)) {
					try(withMember(doc, path, m, false), fmt.Sprintf("= %#v", m))
				}
			}
		}
	}
	assert.Greater(t, accepted, 1000, "the server accepted many of the changed scenarios")
}
