package web

import (
	"encoding/json"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/scalein-planner/scalein/runs"
	"github.com/scalein-planner/scalein/sim"
	"github.com/scalein-planner/scalein/store"
)

// windowExample is the autoscaler example with max_workers raised to 5 (its fleet starts at 3).
func windowExample(t *testing.T) string {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "sim", "testdata", "examples", "autoscaler_window_holds_scale_down.json"))
	require.NoError(t, err)
	var doc map[string]any
	require.NoError(t, json.Unmarshal(raw, &doc))
	doc["autoscaler"].(map[string]any)["max_workers"] = 5
	out, err := json.Marshal(doc)
	require.NoError(t, err)
	return string(out)
}

// The autoscaler pair compares with one baseline: a fixed fleet of max_workers, not
// fleet.workers, or the size baseline_workers names; the compare page and its sentences say
// which.
func TestPairBaselineIsTheMaximum(t *testing.T) {
	s := newFakeServer(t, runs.Config{}, true)
	scenario := windowExample(t)
	for _, c := range []struct {
		body    string
		workers int
		why     string
	}{
		{`{"kind": "autoscaler", "scenario": ` + scenario + `}`, 5, "fixed fleet of 5 workers, the autoscaler's maximum"},
		{`{"kind": "autoscaler", "baseline_workers": 4, "scenario": ` + scenario + `}`, 4, "fixed fleet of 4 workers"},
	} {
		rec := postJSON(t, s, "/api/v1/pairs", c.body)
		require.Equal(t, http.StatusAccepted, rec.Code, rec.Body.String())
		var out struct {
			A, B       struct{ ID string }
			CompareURL string `json:"compare_url"`
		}
		require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &out))
		waitStatus(t, s, out.A.ID, store.StatusDone)
		rb := waitStatus(t, s, out.B.ID, store.StatusDone)
		sb, err := sim.Parse(rb.ScenarioJSON, sim.ParseEnv{})
		require.NoError(t, err)
		assert.Nil(t, sb.Autoscaler)
		assert.Equal(t, c.workers, sb.Fleet.Workers)
		doc := parseHTML(t, get(t, s, out.CompareURL).Body)
		assert.Contains(t, doc.Find("body").Text(), c.why)
		verdicts := byTestID(doc, "verdicts").Text()
		assert.Contains(t, verdicts, "against a "+c.why, verdicts)
	}
	rec := postJSON(t, s, "/api/v1/pairs", `{"kind": "hints", "baseline_workers": 4, "scenario": `+scenario+`}`)
	assert.Equal(t, http.StatusBadRequest, rec.Code)
	assert.Contains(t, rec.Body.String(), "baseline_workers is the fixed fleet of the")
	rec = postJSON(t, s, "/api/v1/pairs", `{"kind": "autoscaler", "baseline_workers": -1, "scenario": `+scenario+`}`)
	assert.Equal(t, http.StatusBadRequest, rec.Code)
	assert.Contains(t, rec.Body.String(), "baseline_workers: must be a number of workers from 1")

	// The run page's pair form names the baseline field; the page's sentence compares with the
	// maximum.
	id := submitAPI(t, s, scenario)
	waitStatus(t, s, id, store.StatusDone)
	doc := parseHTML(t, get(t, s, "/runs/"+id).Body)
	assert.Equal(t, 1, byTestID(doc, "pair-baseline-workers").Length())
	assert.Contains(t, doc.Find("body").Text(), "Against a fixed fleet of 5 workers, the autoscaler's maximum, held for the whole run")
	rec = postForm(t, s, "/pairs", url.Values{"from": {id}, "kind": {"autoscaler"}, "baseline_workers": {"x"}})
	assert.Equal(t, http.StatusBadRequest, rec.Code)
	assert.Contains(t, rec.Body.String(), "baseline_workers")
	rec = postForm(t, s, "/pairs", url.Values{"from": {id}, "kind": {"autoscaler"}, "baseline_workers": {"2"}})
	require.Equal(t, http.StatusSeeOther, rec.Code, rec.Body.String())
	assert.True(t, strings.HasPrefix(rec.Header().Get("Location"), "/compare?"))
}

// The tune plan's page says which baseline its savings are against; the plan form has the
// field and a refused size comes back beside it.
func TestTunePlanSaysItsBaseline(t *testing.T) {
	s := newFakeServer(t, runs.Config{Workers: 2}, true)
	body := planBody(lullScenario(t), `"goal": {"tune": "autoscaler", "baseline_workers": 6}, "constraints": {"ttft_p99_ms": 200}, "search": {"max_runs": 6}`)
	rec := postJSON(t, s, "/api/v1/plans", body)
	require.Equal(t, http.StatusAccepted, rec.Code, rec.Body.String())
	id := createdID(t, rec, rec.Body.Bytes())
	waitPlan(t, s, id, store.StatusDone)
	doc := parseHTML(t, get(t, s, "/plans/"+id).Body)
	assert.Equal(t, "Savings are measured against the baseline: a fixed fleet of 6 workers, the size you named.", strings.TrimSpace(byTestID(doc, "plan-baseline").Text()))

	doc = parseHTML(t, get(t, s, "/plans/new?plan="+id).Body)
	assert.Equal(t, "6", byTestID(doc, "plan-baseline-workers").AttrOr("value", ""), "the form prefilled from the plan keeps its baseline")
	rec = postForm(t, s, "/plans", url.Values{"scenario": {lullScenario(t)}, "goal": {"tune"}, "baseline_workers": {"-3"}})
	require.Equal(t, http.StatusBadRequest, rec.Code)
	doc = parseHTML(t, rec.Body)
	assert.Contains(t, byTestID(doc, "error-baseline_workers").Text(), "must be a number of workers from 1")
}

// No raw floats where a person reads the run page of an autoscaler run: every table, card and
// sentence goes through the one number writer (format), with units; the exact values stay in
// titles and downloads.
func TestRunPageHasNoRawFloats(t *testing.T) {
	s := newFakeServer(t, runs.Config{}, true)
	id := submitAPI(t, s, windowExample(t))
	waitStatus(t, s, id, store.StatusDone)
	doc := parseHTML(t, get(t, s, "/runs/"+id+"?workers=all").Body)
	raw := regexp.MustCompile(`\d\.\d{4,}|\d{4,}\.\d{2,}`)
	cells := 0
	doc.Find("main td, main th, main li, main p, main dd, main figcaption, main h1, main h2").Each(func(_ int, el *goquery.Selection) {
		cells++
		text := strings.Join(strings.Fields(el.Text()), " ")
		assert.Empty(t, raw.FindAllString(text, -1), "a raw float in %q", text)
	})
	assert.Greater(t, cells, 100)
	head := byTestID(doc, "workers-table").Find("thead").Text()
	assert.Contains(t, head, "Own work ended")
	assert.Contains(t, byTestID(doc, "decisions-table").Find("thead").Text(), "At (from the start)")
}

// A run made from a Prometheus load carries its start time: the decisions, the workers table
// and the scale-in read in clock time; the form keeps the field.
func TestRunPageReadsClockTime(t *testing.T) {
	s := newFakeServer(t, runs.Config{}, true)
	var doc map[string]any
	require.NoError(t, json.Unmarshal([]byte(lullScenario(t)), &doc))
	doc["workload"].(map[string]any)["sessions"].(map[string]any)["starts_at"] = "2026-12-03T03:07:00Z"
	doc["slo"] = map[string]any{"ttft_ms": 500}
	raw, err := json.Marshal(doc)
	require.NoError(t, err)
	id := submitAPI(t, s, string(raw))
	waitStatus(t, s, id, store.StatusDone)
	page := parseHTML(t, get(t, s, "/runs/"+id+"?workers=all").Body)
	decisions := byTestID(page, "decisions-table")
	assert.Contains(t, decisions.Find("thead").Text(), "At (UTC)")
	first := strings.TrimSpace(decisions.Find("tbody tr").First().Find("td").First().Text())
	assert.Regexp(t, `^03:0[7-9]:\d\d$`, first)
	workers := byTestID(page, "workers-table")
	assert.Contains(t, workers.Find("caption").Text(), "UTC clock time")
	workers.Find("tbody tr").Each(func(_ int, tr *goquery.Selection) {
		marked := strings.TrimSpace(tr.Find("td").Eq(2).Text())
		assert.Regexp(t, `^(\d\d:\d\d:\d\d|—)$`, marked)
	})
	// The charts' time axes read in clock time: charts.js gets the start, the axis its name.
	fleet := page.Find("#fleet")
	assert.Equal(t, "1796267220000", fleet.AttrOr("data-clock-start-ms", ""), "2026-12-03T03:07:00Z in ms")
	assert.Contains(t, fleet.AttrOr("data-echarts-option", ""), `"clock time (UTC`)

	// The SLO card leads with the night at a glance, not under the drains; attainment follows
	// the decisions.
	assert.Equal(t, 1, byTestID(page, "glance").Find(`[data-testid="card-slo_attainment"]`).Length())
	assert.Zero(t, byTestID(page, "drain-cards").Find(`[data-testid="card-slo_attainment"]`).Length())
	assert.Equal(t, 1, byTestID(page, "attainment-lead").Length())

	// The autoscaler pair of the same night shares its clock on the compare page's charts.
	rec := postJSON(t, s, "/api/v1/pairs", `{"kind": "autoscaler", "scenario": `+string(raw)+`}`)
	require.Equal(t, http.StatusAccepted, rec.Code, rec.Body.String())
	var pair struct {
		A, B       struct{ ID string }
		CompareURL string `json:"compare_url"`
	}
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &pair))
	waitStatus(t, s, pair.B.ID, store.StatusDone)
	cmp := parseHTML(t, get(t, s, pair.CompareURL).Body)
	assert.NotZero(t, cmp.Find(`[data-clock-start-ms="1796267220000"]`).Length(), "a chart of the compare page reads in clock time")

	form := parseHTML(t, get(t, s, "/?from="+id).Body)
	assert.Equal(t, "2026-12-03T03:07:00Z", form.Find(`[name="workload.sessions.starts_at"]`).AttrOr("value", ""))
}

// The home page starts where an operator with a cluster starts: their HPA or KEDA object and
// last night's Prometheus load at the top of the form, before any field, neither hidden behind
// the scale-in choice nor collapsed.
func TestHomePageStartsWithTheImport(t *testing.T) {
	s := newFakeServer(t, runs.Config{}, false)
	body := get(t, s, "/").Body.String()
	doc := parseHTML(t, strings.NewReader(body))
	top := byTestID(doc, "bring-your-night")
	require.Equal(t, 1, top.Length())
	assert.Equal(t, "Bring your HPA or KEDA object and last night's load", strings.TrimSpace(top.Find("h2").Text()))
	assert.Equal(t, 1, top.Find(`[data-testid="form-hpa-import"]`).Length())
	assert.Equal(t, 1, top.Find(`[data-testid="prom-load"]`).Length())
	assert.Zero(t, top.Find("details").Length(), "nothing collapsed")
	assert.Zero(t, top.ParentsFiltered("[data-scale-in]").Length(), "not behind the scale-in choice")
	first := strings.Index(body, `data-testid="bring-your-night"`)
	for _, later := range []string{`data-testid="scale-in-mode"`, `data-testid="workload"`, `name="fleet.workers"`} {
		assert.Less(t, first, strings.Index(body, later), later)
	}
	assert.Equal(t, 1, doc.Find(`[data-testid="form-hpa-import"]`).Length(), "one import on the page")
}
