package web

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/scalein-planner/scalein/runs"
	"github.com/scalein-planner/scalein/sim"
	"github.com/scalein-planner/scalein/web/form"
)

// submittedValues is what a browser sends for the scenario form on a page: every input and
// textarea, and each select's selected option (its first option when none is marked), except
// those inside a <template>.
func submittedValues(doc *goquery.Document) url.Values {
	values := url.Values{}
	scope := `form[data-testid="scenario-form"] `
	doc.Find(scope + "input[name], " + scope + "textarea[name]").Each(func(_ int, sel *goquery.Selection) {
		if sel.Closest("template").Length() > 0 {
			return
		}
		name := sel.AttrOr("name", "")
		if sel.Is("textarea") {
			values.Set(name, sel.Text())
		} else {
			values.Set(name, sel.AttrOr("value", ""))
		}
	})
	doc.Find(scope + "select[name]").Each(func(_ int, sel *goquery.Selection) {
		if sel.Closest("template").Length() > 0 {
			return
		}
		opt := sel.Find("option[selected]")
		if opt.Length() == 0 {
			opt = sel.Find("option").First()
		}
		values.Set(sel.AttrOr("name", ""), opt.AttrOr("value", ""))
	})
	return values
}

// TestRenderedFormIsTheDefaultScenario: the fresh form page, submitted untouched, is the
// simulator's default scenario (same scenario id), so the defaults shown are the defaults run.
func TestRenderedFormIsTheDefaultScenario(t *testing.T) {
	want := sim.DefaultScenario().ID()
	s := newPageServer(t)
	values := submittedValues(parseHTML(t, get(t, s, "/").Body))
	sc, err := form.Scenario(form.FromValues(values), sim.ParseEnv{})
	require.NoError(t, err)
	assert.Equal(t, want, sc.ID(), "the rendered page's values → %s", sc.CanonicalJSON())
}

// TestFourBadFieldsFourErrors: two unparsable numbers, a bad worker id and an out-of-range
// value are reported in one answer, each beside its field with aria-invalid and
// aria-describedby, and each linked from the error summary.
func TestFourBadFieldsFourErrors(t *testing.T) {
	s := newPageServer(t)
	values := submittedValues(parseHTML(t, get(t, s, "/").Body))
	bad := map[string]string{
		"fleet.gpu_blocks":        "lots",
		"kvcr.latency_ms":         "1,5",
		"scale_in[0].workers":     "1, x",
		"workload.sessions.turns": "0",
	}
	for name, v := range bad {
		values.Set(name, v)
	}
	values.Set("scale_in[0].at_ms", "10")
	rec := postForm(t, s, "/runs", values)
	require.Equal(t, http.StatusUnprocessableEntity, rec.Code)
	doc := parseHTML(t, rec.Body)

	assert.Contains(t, doc.Find("title").Text(), "Fix 4 problems")
	summary := byTestID(doc, "form-errors")
	require.Equal(t, 1, summary.Length())
	assert.Contains(t, summary.Find("h2").Text(), "4 problems")
	assert.Equal(t, "-1", summary.AttrOr("tabindex", ""), "the summary can take the focus")
	links := summary.Find("a[data-error-link]")
	require.Equal(t, 4, links.Length(), summary.Text())
	var hrefs []string
	links.Each(func(_ int, a *goquery.Selection) { hrefs = append(hrefs, a.AttrOr("href", "")) })
	// In page order: fleet, KVCR, schedule, workload.
	assert.Equal(t, []string{"#fleet.gpu_blocks", "#kvcr.latency_ms", "#scale_in[0].workers", "#workload.sessions.turns"}, hrefs)

	for name := range bad {
		input := doc.Find(fmt.Sprintf(`[id=%q]`, name))
		require.Equal(t, 1, input.Length(), name)
		assert.Equal(t, "true", input.AttrOr("aria-invalid", ""), name)
		describedBy := strings.Fields(input.AttrOr("aria-describedby", ""))
		require.Contains(t, describedBy, "error-"+name, name)
		msg := doc.Find(fmt.Sprintf(`[id=%q]`, "error-"+name))
		assert.NotEmpty(t, strings.TrimSpace(msg.Text()), name)
		assert.Equal(t, bad[name], input.AttrOr("value", ""), "%s keeps what was typed", name)
	}
	assert.Contains(t, doc.Find(`[id="error-fleet.gpu_blocks"]`).Text(), "must be a number")
	assert.Contains(t, doc.Find(`[id="error-kvcr.latency_ms"]`).Text(), "must be a number")
	assert.Contains(t, doc.Find(`[id="error-scale_in[0].workers"]`).Text(), "worker ids")
	assert.Contains(t, doc.Find(`[id="error-workload.sessions.turns"]`).Text(), "1")

	// A valid field carries neither.
	ok := doc.Find(`[id="fleet.workers"]`)
	assert.Empty(t, ok.AttrOr("aria-invalid", ""))
	assert.Equal(t, "help-fleet.workers", ok.AttrOr("aria-describedby", ""))
}

func TestFreshFormHasOneScheduleRowAndSelectionHelp(t *testing.T) {
	s := newPageServer(t)
	doc := parseHTML(t, get(t, s, "/").Body)
	assert.Equal(t, 1, doc.Find("[data-schedule-rows] [data-schedule-row]").Length())
	note := byTestID(doc, "selection-note").Text()
	for _, policy := range []string{sim.SelectHighestID, sim.SelectLeastLoaded, sim.SelectLeastCached} {
		assert.Contains(t, note, policy)
	}
	assert.Equal(t, 1, doc.Find(`select[data-workload-type][name="workload.type"]`).Length(), "the marker app.js looks for")
	assert.Equal(t, 4, doc.Find("fieldset[data-workload]").Length(), "every workload section, and the sessions' day helper, is in the page (shown without JavaScript)")
	assert.Equal(t, 0, doc.Find("fieldset[data-workload][hidden]").Length())
	assert.Equal(t, 1, doc.Find(`textarea[name="workload.requests"]`).Length())
}

// TestScheduleRowsAreBounded: a post with more rows than a scenario may have gets an error and
// a page of at most sim.MaxScaleInActions rows, and a far-off index is a row like any other.
func TestScheduleRowsAreBounded(t *testing.T) {
	s := newPageServer(t)
	values := submittedValues(parseHTML(t, get(t, s, "/").Body))
	extra := 7
	for i := range sim.MaxScaleInActions + extra {
		values.Set(fmt.Sprintf("scale_in[%d].at_ms", i), "10")
		values.Set(fmt.Sprintf("scale_in[%d].count", i), "1")
	}
	values.Set("scale_in_rows", "100000")
	rec := postForm(t, s, "/runs", values)
	require.Equal(t, http.StatusUnprocessableEntity, rec.Code)
	assert.Less(t, rec.Body.Len(), 4<<20, "page size")
	doc := parseHTML(t, rec.Body)
	assert.Equal(t, sim.MaxScaleInActions, doc.Find("[data-schedule-rows] [data-schedule-row]").Length())
	assert.Contains(t, byTestID(doc, "error-scale_in").Text(), fmt.Sprintf("%d more non-empty rows", extra))

	values = submittedValues(parseHTML(t, get(t, s, "/").Body))
	values.Set("scale_in[99999].at_ms", "10")
	values.Set("scale_in[99999].count", "1")
	values.Set("scale_in[99999999999999999999999].at_ms", "20")
	values.Set("scale_in[99999999999999999999999].count", "1")
	sc, err := form.Scenario(form.FromValues(values), sim.ParseEnv{})
	require.NoError(t, err)
	require.Len(t, sc.ScaleIn, 2)
	assert.Equal(t, 10.0, sc.ScaleIn[0].AtMS)
	assert.Equal(t, 20.0, sc.ScaleIn[1].AtMS)
}

// The scale-in section is a choice: the autoscaler's fields are on the page, the day helper
// fills the rate stages (with a preview), and a posted autoscaler form runs an autoscaler.
func TestFormOffersTheAutoscaler(t *testing.T) {
	s := newFakeServer(t, runs.Config{}, false)
	doc := parseHTML(t, get(t, s, "/").Body)
	assert.Equal(t, 1, doc.Find(`select[data-scale-in-mode][name="scale_in_mode"]`).Length())
	for _, name := range []string{"autoscaler.target", "autoscaler.metric", "autoscaler.source", "autoscaler.aggregate",
		"autoscaler.pending_ms", "autoscaler.downscale_window_ms", "autoscaler.behavior", "autoscaler.behavior.scale_down.window_ms",
		"autoscaler.behavior.scale_up.tolerance", "autoscaler.behavior.scale_up.select", "autoscaler.behavior.scale_down.policies[0].value", "autoscaler.grace_ms", "autoscaler.startup_ms", "router.migration_limit", "workload.sessions.rate_stages", "fleet.gpus_per_worker"} {
		assert.Equal(t, 1, doc.Find(`[name="`+name+`"]`).Length(), name)
	}
	assert.Contains(t, byTestID(doc, "autoscaler").Text(), "stabilizationWindowSeconds")
	assert.Contains(t, byTestID(doc, "autoscaler").Text(), "terminationGracePeriodSeconds")
	assert.Equal(t, 1, byTestID(doc, "run-pair-autoscaler").Length())
	assert.Equal(t, 0, byTestID(doc, "rate-preview").Length(), "no stages, no preview")

	values := submittedValues(doc)
	values.Set("action", "fill_day")
	rec := postForm(t, s, "/", values)
	require.Equal(t, http.StatusOK, rec.Code)
	filled := parseHTML(t, rec.Body)
	stages := filled.Find(`textarea[name="workload.sessions.rate_stages"]`).Text()
	assert.Len(t, strings.Split(strings.TrimSpace(stages), "\n"), 24)
	assert.Contains(t, byTestID(filled, "rate-preview").Text(), "24 stages")

	values = submittedValues(filled)
	values.Set("scale_in_mode", "autoscaler")
	values.Set("autoscaler.target", "4")
	values.Set("workload.sessions.count", "50")
	rec = postForm(t, s, "/runs", values)
	require.Equal(t, http.StatusSeeOther, rec.Code, rec.Body.String())
	id := strings.TrimPrefix(rec.Header().Get("Location"), "/runs/")
	run, err := s.store.GetRun(context.Background(), id)
	require.NoError(t, err)
	sc, err := sim.Parse(run.ScenarioJSON, sim.ParseEnv{})
	require.NoError(t, err)
	require.NotNil(t, sc.Autoscaler)
	assert.Equal(t, 4.0, sc.Autoscaler.Target)
	assert.Len(t, sc.Workload.Sessions.RateStages, 24)
	assert.Empty(t, sc.ScaleIn)
}

// The behavior editor through the page: "Add policy" (a submit button, no JavaScript) gives a
// second scale-down row, two policies filled in run as the behavior, and a bad policy value
// comes back beside its field with the others kept.
func TestFormBehaviorEditor(t *testing.T) {
	s := newFakeServer(t, runs.Config{}, false)
	doc := parseHTML(t, get(t, s, "/").Body)
	assert.Equal(t, 1, doc.Find(`[data-testid="add-policy-scale_down"]`).Length())
	assert.Equal(t, 1, doc.Find(`[data-testid^="policy-scale_down-"]`).Length(), "one row: Kubernetes' default as placeholders")
	assert.Contains(t, byTestID(doc, "behavior-scale_down").Text(), "at most 100 % of the workers removed per 15 s")
	assert.Contains(t, byTestID(doc, "field-autoscaler.metric").Text(), "vllm:num_requests_waiting")
	assert.Equal(t, 1, doc.Find(`[data-testid="autoscaler-avg-warning"][hidden]`).Length(), "no warning with a pods source")

	values := submittedValues(doc)
	values.Set("scale_in_mode", "autoscaler")
	values.Set("autoscaler.behavior.scale_down.policies[0].type", "pods")
	values.Set("autoscaler.behavior.scale_down.policies[0].value", "1")
	values.Set("autoscaler.behavior.scale_down.policies[0].period_ms", "60000")
	values.Set("action", "add_policy:scale_down")
	rec := postForm(t, s, "/", values)
	require.Equal(t, http.StatusOK, rec.Code)
	added := parseHTML(t, rec.Body)
	require.Equal(t, 2, added.Find(`[data-testid^="policy-scale_down-"]`).Length())
	assert.Equal(t, "At most 1 worker removed per 60 s.", byTestID(added, "policy-help-scale_down-0").Text())
	assert.Equal(t, form.BehaviorSet, formFields(added)[form.BehaviorModePath], "adding a policy chooses a behavior")

	values = submittedValues(added)
	values.Set("autoscaler.behavior.scale_down.policies[1].type", "percent")
	values.Set("autoscaler.behavior.scale_down.policies[1].value", "x")
	values.Set("autoscaler.behavior.scale_down.policies[1].period_ms", "30000")
	values.Set("autoscaler.source", "external")
	values.Set("autoscaler.aggregate", "avg")
	values.Set("workload.sessions.count", "50")
	rec = postForm(t, s, "/runs", values)
	require.Equal(t, http.StatusUnprocessableEntity, rec.Code)
	bad := parseHTML(t, rec.Body)
	assert.Contains(t, byTestID(bad, "error-autoscaler.behavior.scale_down.policies[1].value").Text(), "must be a number")
	assert.Equal(t, 0, bad.Find(`[data-testid="autoscaler-avg-warning"][hidden]`).Length(), "KEDA's avg warning shown")
	assert.Equal(t, 1, byTestID(bad, "autoscaler-avg-warning").Length())

	values = submittedValues(bad)
	values.Set("autoscaler.behavior.scale_down.policies[1].value", "10")
	rec = postForm(t, s, "/runs", values)
	require.Equal(t, http.StatusSeeOther, rec.Code, rec.Body.String())
	run, err := s.store.GetRun(context.Background(), strings.TrimPrefix(rec.Header().Get("Location"), "/runs/"))
	require.NoError(t, err)
	sc, err := sim.Parse(run.ScenarioJSON, sim.ParseEnv{})
	require.NoError(t, err)
	require.NotNil(t, sc.Autoscaler.Behavior)
	assert.Equal(t, []sim.ScalingPolicy{{Type: "pods", Value: 1, PeriodMS: 60000}, {Type: "percent", Value: 10, PeriodMS: 30000}},
		sc.Autoscaler.Behavior.ScaleDown.Policies)
	assert.Equal(t, sim.AggregateAvg, sc.Autoscaler.Aggregate)
}
