package web

import (
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/scalein-planner/scalein/runs"
	"github.com/scalein-planner/scalein/sim"
	"github.com/scalein-planner/scalein/store"
)

// sloPageScenario: one worker, a pass of 2 ms when it prefills plus 1 ms when a token is
// emitted, 64 tokens a pass. a (64 tokens, 3 out) runs [0, 3) and emits its first token at
// 3 ms; b (64 tokens) arrives at 1 ms and is prefilled beside a's decodes: 63 tokens in [3, 6),
// the last one in [6, 9). a is done at 9 ms (TTFT 3, TPOT (9 − 3) / 2 = 3); b emits its first
// token at 9 ms (TTFT 8) and is done at 11 ms (TPOT 1). With TTFT ≤ 3 ms and TPOT ≤ 3 ms, a
// meets the SLO and b does not: 50 %.
func sloPageScenario(name, slo string) string {
	js := `{"name": "` + name + `",
	  "fleet": {"workers": 1, "gpu_blocks": 64, "host_blocks": 0, "block_size": 16, "max_num_seqs": 4,
	    "max_batched_tokens": 64, "timing": {"prefill_ms": 2, "decode_ms": 1, "prefill_ms_per_1k_tokens": 0, "decode_ms_per_seq": 0, "decode_ms_per_1k_kv_tokens": 0}},
	  "kvcr": {"enabled": false},
	  "workload": {"type": "requests", "requests": [
	    {"id": "a", "at_ms": 0, "blocks": ["A*4"], "output_tokens": 3},
	    {"id": "b", "at_ms": 1, "blocks": ["B*4"], "output_tokens": 3}]}`
	if slo != "" {
		js += `, "slo": ` + slo
	}
	return js + "}"
}

func runDone(t *testing.T, s *Server, js string) string {
	t.Helper()
	rec := postJSON(t, s, "/api/v1/runs", js)
	require.Contains(t, []int{http.StatusAccepted, http.StatusOK}, rec.Code, rec.Body.String())
	sc, err := sim.Parse([]byte(js), sim.ParseEnv{})
	require.NoError(t, err)
	waitStatus(t, s, sc.ID(), store.StatusDone)
	return sc.ID()
}

func TestRunPageShowsSLOAttainment(t *testing.T) {
	s := newFakeServer(t, runs.Config{}, true)
	id := runDone(t, s, sloPageScenario("slo", `{"ttft_ms": 3, "tpot_ms": 3}`))
	doc := parseHTML(t, get(t, s, "/runs/"+id).Body)

	card := byTestID(doc, "card-"+sim.HeadlineSLOAttainment)
	require.Equal(t, 1, card.Length())
	assert.Equal(t, "50 %", strings.TrimSpace(card.Find(".kcard-value").Text()))
	assert.Equal(t, "of requests met TTFT ≤ 3 ms and TPOT ≤ 3 ms (1 of 2 requests)", strings.TrimSpace(card.Find(".kcard-note").Text()))
	assert.Equal(t, 0, byTestID(doc, "cards").Find(".kcard").Index(), "the SLO card comes first")
	// The headline table and the scenario summary carry it too.
	assert.Contains(t, byTestID(doc, "figure-"+sim.HeadlineSLOAttainment).Text(), "50 %")
	scenario := doc.Find("#scenario").Next().Text()
	assert.Contains(t, scenario, "TTFT limit")
	assert.Contains(t, scenario, "3 ms")

	// A tighter TPOT limit: a misses too.
	id = runDone(t, s, sloPageScenario("slo tight", `{"ttft_ms": 3, "tpot_ms": 2.999999}`))
	card = byTestID(parseHTML(t, get(t, s, "/runs/"+id).Body), "card-"+sim.HeadlineSLOAttainment)
	assert.Equal(t, "0 %", strings.TrimSpace(card.Find(".kcard-value").Text()))

	// Without an slo there is no SLO card.
	id = runDone(t, s, sloPageScenario("no slo", ""))
	plain := parseHTML(t, get(t, s, "/runs/"+id).Body)
	assert.Equal(t, 0, byTestID(plain, "card-"+sim.HeadlineSLOAttainment).Length())
	assert.Equal(t, 1, byTestID(plain, "cards").Length())
}

func TestComparePageShowsSLOAttainment(t *testing.T) {
	s := newFakeServer(t, runs.Config{}, true)
	a := runDone(t, s, sloPageScenario("slo", `{"ttft_ms": 3, "tpot_ms": 3}`))
	b := runDone(t, s, sloPageScenario("slo loose", `{"ttft_ms": 8, "tpot_ms": 3}`))
	doc := parseHTML(t, get(t, s, "/compare?a="+a+"&b="+b).Body)
	card := byTestID(doc, "card-"+sim.HeadlineSLOAttainment)
	require.Equal(t, 1, card.Length())
	dd := card.Find("dd")
	require.Equal(t, 3, dd.Length())
	assert.Equal(t, "50 %", dd.Eq(0).Text())
	assert.Equal(t, "100 %", dd.Eq(1).Text())
	assert.Contains(t, dd.Eq(2).Text(), "+50 points")
	assert.Contains(t, card.Text(), "A judged by TTFT ≤ 3 ms and TPOT ≤ 3 ms; B by TTFT ≤ 8 ms and TPOT ≤ 3 ms")
}

func TestFormHasSLOFields(t *testing.T) {
	s := newPageServer(t)
	doc := parseHTML(t, get(t, s, "/").Body)
	for _, name := range []string{"slo.ttft_ms", "slo.tpot_ms"} {
		field := byTestID(doc, "field-"+name)
		require.Equal(t, 1, field.Length(), name)
		assert.Equal(t, "", field.AttrOr("value", "x"), "%s starts empty: no SLO", name)
		help := doc.Find(`[id="help-` + name + `"]`).Text()
		assert.Contains(t, help, "Empty = ", name)
	}
	assert.Contains(t, doc.Find(`[id="help-slo.tpot_ms"]`).Text(), "(done − first token) ÷ (output tokens − 1)")

	// Posting the form with a bad limit puts the problem beside the field.
	values := submittedValues(doc)
	values.Set("slo.ttft_ms", "-5")
	rec := postForm(t, s, "/runs", values)
	require.Equal(t, http.StatusUnprocessableEntity, rec.Code)
	errDoc := parseHTML(t, rec.Body)
	assert.Contains(t, byTestID(errDoc, "error-slo.ttft_ms").Text(), "must be > 0")
}
