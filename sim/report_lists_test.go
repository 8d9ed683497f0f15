package sim

import (
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// nullLists returns the JSON paths of every slice in v that would marshal as null. Fields tagged
// omitempty are left out of the JSON when empty, so they are not null.
func nullLists(path string, v reflect.Value) []string {
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			return nil
		}
		return nullLists(path, v.Elem())
	case reflect.Slice:
		if v.IsNil() {
			return []string{path}
		}
		var out []string
		for i := range v.Len() {
			out = append(out, nullLists(path+"[]", v.Index(i))...)
		}
		return out
	case reflect.Struct:
		var out []string
		for i := range v.NumField() {
			f := v.Type().Field(i)
			if !f.IsExported() {
				continue
			}
			name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
			if name == "-" {
				continue
			}
			fv := v.Field(i)
			if strings.Contains(opts, "omitempty") && fv.Kind() == reflect.Slice && fv.Len() == 0 {
				continue
			}
			out = append(out, nullLists(path+"."+name, fv)...)
		}
		return out
	}
	return nil
}

// Every list of a report is a list: `scale_in` is [] without a scale-in action, never null.
func TestReportListsNeverNull(t *testing.T) {
	noScaleIn := `{"name": "no scale-in", "fleet": {"workers": 2},
		"workload": {"type": "requests", "requests": [{"id": "a", "at_ms": 0, "blocks": ["A*2"], "output_tokens": 2}]}}`
	// Two actions, one named and one chosen by policy.
	repeated := `{"name": "two scale-in actions", "fleet": {"workers": 3},
		"scale_in": [{"at_ms": 0, "workers": [2]}, {"at_ms": 1, "count": 1, "select": "highest_id"}],
		"workload": {"type": "requests", "requests": [{"id": "a", "at_ms": 5, "blocks": ["A*2"], "output_tokens": 2}]}}`
	// Pool autoscalers over a run that ends before their first decision (interval 15 s).
	noDecision := `{"name": "pool autoscalers, no decision",
		"disaggregation": {"prefill": {"workers": 1}, "decode": {"workers": 1}},
		"autoscaler": {"prefill": {"metric": "handoffs_held", "target": 2}, "decode": {"target": 2}},
		"workload": {"type": "requests", "requests": [{"id": "a", "at_ms": 0, "blocks": ["A*2"], "output_tokens": 2}]}}`
	cases := map[string]string{"no scale-in": noScaleIn, "two scale-in actions": repeated, "pool autoscalers, no decision": noDecision}
	for _, p := range Presets() {
		if p.Long && !slowTests() {
			continue // 10–15 s of CPU each (large-fleet, the real-time days): SCALEIN_SLOW=1 runs them
		}
		cases["preset "+p.Key] = string(p.JSON)
	}
	for name, js := range cases {
		t.Run(name, func(t *testing.T) {
			s, err := Parse([]byte(js), ParseEnv{})
			require.NoError(t, err)
			modes := []bool{false, true}
			switch {
			case name == "preset large-fleet":
				modes = modes[:1] // 100,000 per-request rows add nothing to this check
			case strings.HasPrefix(name, "preset ") && !slowTests():
				modes = modes[:1] // the hand-made cases try both; a preset's per-request run is SCALEIN_SLOW=1's
			}
			for _, perRequest := range modes {
				s.Report.PerRequest = perRequest
				rep, err := Run(context.Background(), s, RunOptions{})
				require.NoError(t, err)
				require.Empty(t, nullLists("report", reflect.ValueOf(rep)), "per_request=%v", perRequest)
				data, err := json.Marshal(rep)
				require.NoError(t, err)
				var generic map[string]any
				require.NoError(t, json.Unmarshal(data, &generic))
				require.NotNil(t, generic["scale_in"], "scale_in must be a list")
				require.IsType(t, []any{}, generic["scale_in"])
				if perRequest && rep.Summary.Requests.Total > 0 {
					require.IsType(t, []any{}, generic["requests"])
				}
			}
		})
	}
}

// The check above must be able to fail.
func TestNullListsSeesNil(t *testing.T) {
	got := nullLists("report", reflect.ValueOf(&Report{Workers: []WorkerRow{{}}, ScaleIn: []ScaleInRow{{Drained: []int{}}}}))
	require.ElementsMatch(t, []string{"report.scale_in[].skipped", "report.timeseries.buckets"}, got)
}
