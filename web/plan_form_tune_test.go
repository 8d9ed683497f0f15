package web

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/scalein-planner/scalein/runs"
	"github.com/scalein-planner/scalein/sim/whatif"
	"github.com/scalein-planner/scalein/static"
	"github.com/scalein-planner/scalein/store"
)

// The plan form in tune mode is titled and explained for tuning, lists what the search tries
// (whatif's defaults for the scenario's autoscaler) and hides the drain's fields; a scenario
// without an autoscaler gets the drain form.
func TestPlanFormTuneModeTitledAndSearched(t *testing.T) {
	s := newFakeServer(t, runs.Config{}, false)
	rec := get(t, s, "/plans/new?preset=autoscaler-day")
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	doc := parseHTML(t, rec.Body)
	assert.Equal(t, "Tune the autoscaler", strings.TrimSpace(byTestID(doc, "plan-form-title").Text()))
	assert.Contains(t, byTestID(doc, "plan-form-intro").Text(), "Tune the autoscaler: the settings with the fewest GPU-hours within your limits")
	assert.Contains(t, doc.Find("title").Text(), "Tune the autoscaler")
	searched := byTestID(doc, "tune-searched")
	require.Equal(t, 1, searched.Length())
	_, hidden := searched.Attr("hidden")
	assert.False(t, hidden)
	text := searched.Text()
	for _, want := range []string{"Targets", "Scale-down windows", "Selection", "Grace", "Migration limits", "300 s", "least_loaded"} {
		assert.Contains(t, text, want)
	}
	assert.True(t, strings.Contains(text, "Scale-down policies") || strings.Contains(text, "Step limits"), text)
	_, hidden = byTestID(doc, "plan-drain-fields").Attr("hidden")
	assert.True(t, hidden, "remove and start are the drain's")
	_, hidden = byTestID(doc, "plan-rate-field").Attr("hidden")
	assert.True(t, hidden, "the rate per worker is the diagnose plan's")
	// The drain's heading is sent too, hidden, for the goal radio to switch to.
	assert.Equal(t, "Plan a scale-in", strings.TrimSpace(byTestID(doc, "plan-form-other-title").Text()))
	_, hidden = byTestID(doc, "plan-heading-drain").Attr("hidden")
	assert.True(t, hidden)
	_, hidden = byTestID(doc, "plan-heading-tune").Attr("hidden")
	assert.False(t, hidden)

	doc = parseHTML(t, get(t, s, "/plans/new").Body)
	assert.Equal(t, "Plan a scale-in", strings.TrimSpace(byTestID(doc, "plan-form-title").Text()))
	_, hidden = byTestID(doc, "plan-drain-fields").Attr("hidden")
	assert.False(t, hidden)
	assert.Zero(t, byTestID(doc, "tune-searched").Length())

	// A refused tune form comes back titled for tuning, the search listed for its scenario.
	rec = postForm(t, s, "/plans", url.Values{"scenario": {lullScenario(t)}, "goal": {"tune"}, "ttft_p99_ms": {"x"}})
	require.Equal(t, http.StatusBadRequest, rec.Code)
	doc = parseHTML(t, rec.Body)
	assert.Equal(t, "Tune the autoscaler", strings.TrimSpace(byTestID(doc, "plan-form-title").Text()))
	assert.Equal(t, 1, byTestID(doc, "tune-searched").Length())

	css, err := static.FS.ReadFile("css/app.css")
	require.NoError(t, err)
	assert.Contains(t, string(css), `.whatif-form:has(input[name="goal"][value="tune"]:checked) .drain-only`, "switching the goal needs no script")
	assert.Contains(t, string(css), `main:has(.whatif-form input[name="goal"][value="tune"]:checked) .drain-heading`, "nor does switching the heading")
}

// A tune plan where nothing meets the limits names the closest setting and the limit it
// breaks, and links to the plan form prefilled with that limit relaxed.
func TestTunePlanNothingFeasibleLinksToRelaxedForm(t *testing.T) {
	s := newFakeServer(t, runs.Config{Workers: 2}, true)
	body := planBody(lullScenario(t), `"goal": {"tune": "autoscaler"}, "constraints": {"ttft_p99_ms": 0.001}, "search": {"max_runs": 5}`)
	rec := postJSON(t, s, "/api/v1/plans", body)
	require.Equal(t, http.StatusAccepted, rec.Code, rec.Body.String())
	id := createdID(t, rec, rec.Body.Bytes())
	p := waitPlan(t, s, id, store.StatusDone)
	require.Nil(t, p.Recommended)
	require.NotEmpty(t, p.Candidates)

	doc := parseHTML(t, get(t, s, "/plans/"+id).Body)
	assert.Contains(t, byTestID(doc, "relax-closest").Text(), p.Candidates[0].Label)
	assert.Contains(t, byTestID(doc, "relax-breaks").Text(), "TTFT p99")
	link := byTestID(doc, "relax-link")
	href, ok := link.Attr("href")
	require.True(t, ok)
	assert.Contains(t, link.Text(), "TTFT p99 at most")
	u, err := url.Parse(href)
	require.NoError(t, err)
	assert.Equal(t, "/plans/new", u.Path)
	assert.Equal(t, id, u.Query().Get("plan"))
	relaxed := u.Query().Get("ttft_p99_ms")
	require.NotEmpty(t, relaxed)

	form := parseHTML(t, get(t, s, href).Body)
	_, checked := byTestID(form, "plan-goal-tune").Attr("checked")
	assert.True(t, checked)
	assert.Equal(t, relaxed, byTestID(form, "plan-ttft").AttrOr("value", ""))
	assert.Contains(t, byTestID(form, "whatif-notice").Text(), id)
	assert.NotEmpty(t, strings.TrimSpace(byTestID(form, "whatif-scenario").Text()))

	// The prefilled form, submitted as it is, is a plan whose closest setting now fits.
	values := url.Values{"scenario": {byTestID(form, "whatif-scenario").Text()}, "goal": {"tune"}, "ttft_p99_ms": {relaxed},
		"max_killed": {byTestID(form, "plan-form").Find(`input[name="max_killed"]`).AttrOr("value", "")}, "max_runs": {"5"}}
	rec = postForm(t, s, "/plans", values)
	require.Equal(t, http.StatusSeeOther, rec.Code, rec.Body.String())

	// Ranked tables are dense, and every cell carries its column's label for a phone.
	table := byTestID(doc, "plan-candidates")
	assert.True(t, table.HasClass("dense"))
	table.Find("tbody td").Each(func(_ int, td *goquery.Selection) {
		assert.NotEmpty(t, td.AttrOr("data-label", ""))
	})
}

// With no limit to relax, the way out widens the search, up to the server's bound.
func TestRelaxLinkWidensWithoutABrokenLimit(t *testing.T) {
	l := relaxLink(runs.PlanView{ID: "p1", Runs: 10, Search: whatif.Search{MaxRuns: 10}}, 16)
	assert.Equal(t, "/plans/new?max_runs=16&plan=p1", l.URL)
	assert.Contains(t, l.Action, "16 runs")
	assert.Equal(t, 0.0013, ceilSignificant(0.00121, 2))
	assert.Equal(t, 130.0, ceilSignificant(121, 2))
}
