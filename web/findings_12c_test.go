package web

import (
	"encoding/json"
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/scalein-planner/scalein/runs"
)

// TestPlanOriginBounded replays finding M3 of the 2026-12c probe: a tune plan's origin padded
// with 1.9 MB of annotations is refused at creation, naming the field, instead of being stored
// outside every quota; an import's own origin stays small whatever the manifest's annotations.
func TestPlanOriginBounded(t *testing.T) {
	s := newFakeServer(t, runs.Config{Workers: 2}, false)
	manifest, err := os.ReadFile("../sim/hpa/testdata/charts/production-stack-keda.yaml")
	require.NoError(t, err)
	padded := strings.Replace(string(manifest), "metadata:\n", "metadata:\n  annotations:\n    pad: '"+strings.Repeat("p", 600_000)+"'\n", 1)
	body, err := json.Marshal(map[string]any{"scenario": json.RawMessage(lullScenario(t)), "manifest": padded})
	require.NoError(t, err)
	rec := postJSON(t, s, "/api/v1/hpa/import", string(body))
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	var imported struct {
		Scenario json.RawMessage `json:"scenario"`
		Origin   map[string]any  `json:"origin"`
	}
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &imported))
	origin, err := json.Marshal(imported.Origin)
	require.NoError(t, err)
	assert.Less(t, len(origin), 8<<10, "the import's origin leaves the annotations out, and the file over 256 KiB")

	// The probe's origin: the import's, with 1.9 MB of annotations put back.
	doc := imported.Origin["document"].(map[string]any)
	doc["metadata"].(map[string]any)["annotations"] = map[string]string{"pad": strings.Repeat("p", 1_900_000)}
	origin, err = json.Marshal(imported.Origin)
	require.NoError(t, err)
	rest := `"goal": {"tune": "autoscaler"}, "search": {"max_runs": 3}, "origin": ` + string(origin)
	rec = postJSON(t, s, "/api/v1/plans", planBody(string(imported.Scenario), rest))
	require.Equal(t, http.StatusBadRequest, rec.Code, clipBody(rec.Body.String()))
	assert.Contains(t, rec.Body.String(), `"path":"origin"`)
	assert.Contains(t, rec.Body.String(), "at most 1156 KiB") // the object (64 KiB) and the file (256 KiB), escaped
	assert.Less(t, rec.Body.Len(), 2000, "the refusal does not echo the origin")
}

func clipBody(s string) string {
	if len(s) > 500 {
		return s[:500] + "…"
	}
	return s
}

// sloScenario is a small sessions scenario with an slo, as capacity and diagnose plans need.
const sloScenario = `{"name": "slo", "fleet": {"workers": 2, "gpu_blocks": 64, "host_blocks": 0, "block_size": 16, "max_num_seqs": 4,
	"max_batched_tokens": 64, "timing": {"prefill_ms": 2, "decode_ms": 1, "prefill_ms_per_1k_tokens": 0, "decode_ms_per_seq": 0, "decode_ms_per_1k_kv_tokens": 0}},
	"kvcr": {"enabled": false}, "slo": {"ttft_ms": 3},
	"workload": {"type": "requests", "requests": [{"id": "a", "at_ms": 0, "blocks": ["A*4"], "output_tokens": 1}]}}`

// TestPlanDefaultsWithinMaxPlanRuns replays finding L1 of the 2026-12c probe on a server with
// -max-plan-runs 2: a capacity plan's default budget is capped by it, a diagnose or tune plan
// that cannot fit is refused naming the flag, not a value the user never sent.
func TestPlanDefaultsWithinMaxPlanRuns(t *testing.T) {
	s := newFakeServer(t, runs.Config{MaxPlanRuns: 2}, false)

	rec := postJSON(t, s, "/api/v1/plans", planBody(sloScenario, `"goal": {"capacity": {"workers": 1, "duration_ms": 1000}}`))
	require.Equal(t, http.StatusAccepted, rec.Code, rec.Body.String())
	id := createdID(t, rec, rec.Body.Bytes())
	rec = get(t, s, "/api/v1/plans/"+id)
	require.Equal(t, http.StatusOK, rec.Code)
	assert.Contains(t, rec.Body.String(), `"max_runs":2`, "the capacity default (12) is capped by -max-plan-runs")

	for _, goal := range []string{`{"diagnose": {}}`, `{"tune": "autoscaler"}`} {
		rec := postJSON(t, s, "/api/v1/plans", planBody(lullScenario(t), `"goal": `+goal))
		require.Equal(t, http.StatusBadRequest, rec.Code, "%s: %s", goal, rec.Body.String())
		body := rec.Body.String()
		assert.Contains(t, body, "search.max_runs", goal)
		assert.Contains(t, body, "this server allows at most 2 runs a plan (-max-plan-runs)", goal)
		assert.NotContains(t, body, "(got 2)", "%s: the user sent no max_runs", goal)
	}
}

// TestPlanMessagesQuoteTheirGoal replays finding L5 of the 2026-12c probe: a capacity or
// diagnose plan's problem shows that plan's body, not the drain plan's.
func TestPlanMessagesQuoteTheirGoal(t *testing.T) {
	s := newFakeServer(t, runs.Config{}, false)
	for goal, want := range map[string]string{
		`{"capacity": {"workers": 1.5}}`:           `"goal": {"capacity": {"min_attainment"?: 0.99`,
		`{"diagnose": {"bogus": 1}}`:               `"goal": {"diagnose": {"rate_per_worker_per_s"?`,
		`{"tune": "autoscaler", "bogus": 1}`:       `"goal": {"tune": "autoscaler"}`,
		`{"remove": 1, "start_ms": 0, "bogus": 1}`: `"goal": {"remove": 4, "start_ms": 480000}`,
	} {
		rec := postJSON(t, s, "/api/v1/plans", planBody(sloScenario, `"goal": `+goal))
		require.Equal(t, http.StatusBadRequest, rec.Code, "%s: %s", goal, rec.Body.String())
		assert.Contains(t, rec.Body.String(), strings.ReplaceAll(want, `"`, `\"`), goal)
	}

	// A Prometheus answer's several 2 MB label sets are clipped in the refusal.
	pad := func(c string) string { return strings.Repeat(c, 2<<20) }
	answer := `{"status":"success","data":{"resultType":"matrix","result":[` +
		`{"metric":{"pad":"` + pad("a") + `"},"values":[[0,"1"],[60,"1"]]},` +
		`{"metric":{"pad":"` + pad("b") + `"},"values":[[0,"1"],[60,"1"]]},` +
		`{"metric":{"pad":"` + pad("c") + `"},"values":[[0,"1"],[60,"1"]]}]}}`
	rec := postJSON(t, s, "/api/v1/load/prometheus", `{"answer":`+answer+`}`)
	require.Equal(t, http.StatusBadRequest, rec.Code, clipBody(rec.Body.String()))
	assert.Contains(t, rec.Body.String(), "3 series")
	assert.Less(t, rec.Body.Len(), 4000, "the label sets are clipped")
}
