package web

import (
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
	"github.com/scalein-planner/scalein/templates"
)

// submittedValues is what a browser sends for the scenario form on a page: every input and
// textarea, and each select's selected option (its first option when none is marked), except
// those inside a <template>.
func submittedValues(doc *goquery.Document) url.Values {
	form := url.Values{}
	scope := `form[data-testid="scenario-form"] `
	doc.Find(scope + "input[name], " + scope + "textarea[name]").Each(func(_ int, sel *goquery.Selection) {
		if sel.Closest("template").Length() > 0 {
			return
		}
		name := sel.AttrOr("name", "")
		if sel.Is("textarea") {
			form.Set(name, sel.Text())
		} else {
			form.Set(name, sel.AttrOr("value", ""))
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
		form.Set(sel.AttrOr("name", ""), opt.AttrOr("value", ""))
	})
	return form
}

// TestDefaultFormIsTheDefaultScenario: the fresh form, submitted untouched, is the simulator's
// default scenario (same scenario id), so the defaults shown are the defaults run.
func TestDefaultFormIsTheDefaultScenario(t *testing.T) {
	want := sim.DefaultScenario().ID()

	sc, err := scenarioOfForm(defaultForm(), sim.ParseEnv{})
	require.NoError(t, err)
	assert.Equal(t, want, sc.ID(), "defaultForm → %s", sc.CanonicalJSON())

	s := newTestServer(t, runs.Config{}, false)
	values := submittedValues(parseHTML(t, get(t, s, "/").Body))
	sc, err = scenarioOfForm(formFromValues(values), sim.ParseEnv{})
	require.NoError(t, err)
	assert.Equal(t, want, sc.ID(), "the rendered page's values → %s", sc.CanonicalJSON())
}

// TestFormStartsOnlyWhereTheSimulatorHasNoDefault keeps the defaults in one place: a field
// either shows the simulator's default or, where the simulator has none, a starting value.
func TestFormStartsOnlyWhereTheSimulatorHasNoDefault(t *testing.T) {
	noDefault := map[string]bool{workloadTypeField.Path: true, traceSourceField: true, "workload.trace.limit": true, "workload.requests": true}
	singleFields(func(fs fieldSpec) {
		def, has := formDefaults[fs.Path]
		assert.Equal(t, !noDefault[fs.Path], has, "%s: has a simulator default (%q)", fs.Path, def)
		if fs.Start != "" {
			assert.False(t, has, "%s has both a Start value and the simulator's default %q", fs.Path, def)
		}
	})
	assert.Equal(t, "4096", formDefaults["fleet.gpu_blocks"])
	assert.Equal(t, "0.05", formDefaults["fleet.timing.decode_ms_per_seq"])
	assert.Equal(t, "512", formDefaults["workload.trace.trace_block_tokens"])
	assert.Equal(t, "true", formDefaults["kvcr.reject_draining_sources"])

	// The schedule's select names the policy sim.Parse fills in for a count without one.
	sc, err := sim.Parse([]byte(`{"scale_in": [{"at_ms": 0, "count": 1}], "workload": {"type": "sessions"}}`), sim.ParseEnv{})
	require.NoError(t, err)
	assert.Contains(t, scheduleFields[3].Help, "by default "+sc.ScaleIn[0].Select)
	assert.Contains(t, selectionNote, sc.ScaleIn[0].Select+" (the default)")
}

// TestPresetsPrefillRoundTrip: a preset put in the form and submitted untouched is the preset.
func TestPresetsPrefillRoundTrip(t *testing.T) {
	for _, p := range sim.Presets() {
		t.Run(p.Key, func(t *testing.T) {
			sc, err := sim.Parse(p.JSON, sim.ParseEnv{})
			require.NoError(t, err)
			again, err := scenarioOfForm(formFromScenario(sc), sim.ParseEnv{})
			require.NoError(t, err)
			assert.Equal(t, sc.ID(), again.ID(), "\nwant %s\ngot  %s", sc.CanonicalJSON(), again.CanonicalJSON())
		})
	}
}

// TestFourBadFieldsFourErrors: two unparsable numbers, a bad worker id and an out-of-range
// value are reported in one answer, each beside its field with aria-invalid and
// aria-describedby, and each linked from the error summary.
func TestFourBadFieldsFourErrors(t *testing.T) {
	s := newTestServer(t, runs.Config{}, false)
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

// TestFormProblemsAreNotRepeated: a field the form could not read is not faulted a second time
// by sim.Parse (which then holds its default), and an empty requests list is one problem.
func TestFormProblemsAreNotRepeated(t *testing.T) {
	f := defaultForm()
	f.values["workload.type"] = sim.WorkloadRequests
	f.values["workload.requests"] = `[{"id": "a",`
	f.values["fleet.max_num_seqs"] = "many"
	_, err := scenarioOfForm(f, sim.ParseEnv{})
	invalid, ok := err.(*invalidForm)
	require.True(t, ok, "want *invalidForm, got %v", err)
	assert.Equal(t, 2, invalid.errs.count, "%v", invalid.errs.byField)
	assert.Len(t, invalid.errs.byField["workload.requests"], 1)
	assert.Contains(t, invalid.errs.byField["workload.requests"][0], "not valid JSON")
	assert.Len(t, invalid.errs.byField["fleet.max_num_seqs"], 1)
}

func TestFreshFormHasOneScheduleRowAndSelectionHelp(t *testing.T) {
	s := newTestServer(t, runs.Config{}, false)
	doc := parseHTML(t, get(t, s, "/").Body)
	assert.Equal(t, 1, doc.Find("[data-schedule-rows] [data-schedule-row]").Length())
	note := byTestID(doc, "selection-note").Text()
	for _, policy := range []string{sim.SelectHighestID, sim.SelectLeastLoaded, sim.SelectLeastCached} {
		assert.Contains(t, note, policy)
	}
	assert.Equal(t, 1, doc.Find(`select[data-workload-type][name="workload.type"]`).Length(), "the marker app.js looks for")
	assert.Equal(t, 3, doc.Find("fieldset[data-workload]").Length(), "every workload section is in the page (shown without JavaScript)")
	assert.Equal(t, 0, doc.Find("fieldset[data-workload][hidden]").Length())
	assert.Equal(t, 1, doc.Find(`textarea[name="workload.requests"]`).Length())
}

// TestScheduleRowsAreBounded: a post with more rows than a scenario may have gets an error and
// a page of at most maxScheduleRows rows, and a far-off index is a row like any other.
func TestScheduleRowsAreBounded(t *testing.T) {
	s := newTestServer(t, runs.Config{}, false)
	values := submittedValues(parseHTML(t, get(t, s, "/").Body))
	extra := 7
	for i := range maxScheduleRows + extra {
		values.Set(fmt.Sprintf("scale_in[%d].at_ms", i), "10")
		values.Set(fmt.Sprintf("scale_in[%d].count", i), "1")
	}
	values.Set("scale_in_rows", "100000")
	rec := postForm(t, s, "/runs", values)
	require.Equal(t, http.StatusUnprocessableEntity, rec.Code)
	assert.Less(t, rec.Body.Len(), 4<<20, "page size")
	doc := parseHTML(t, rec.Body)
	assert.Equal(t, maxScheduleRows, doc.Find("[data-schedule-rows] [data-schedule-row]").Length())
	assert.Contains(t, byTestID(doc, "error-scale_in").Text(), fmt.Sprintf("%d more non-empty rows", extra))

	values = submittedValues(parseHTML(t, get(t, s, "/").Body))
	values.Set("scale_in[99999].at_ms", "10")
	values.Set("scale_in[99999].count", "1")
	values.Set("scale_in[99999999999999999999999].at_ms", "20")
	values.Set("scale_in[99999999999999999999999].count", "1")
	f := formFromValues(values)
	require.Len(t, f.rows, 3, "the far-off indices are kept, after the empty row 0")
	sc, err := scenarioOfForm(f, sim.ParseEnv{})
	require.NoError(t, err)
	require.Len(t, sc.ScaleIn, 2)
	assert.Equal(t, 10.0, sc.ScaleIn[0].AtMS)
	assert.Equal(t, 20.0, sc.ScaleIn[1].AtMS)
}

// FuzzScenarioForm: whatever a post holds, reading and validating it neither panics nor fails
// with anything but an *invalidForm, and a valid result's JSON parses to the same scenario.
func FuzzScenarioForm(f *testing.F) {
	f.Add("fleet.workers=4&workload.type=sessions&workload.sessions.count=3")
	f.Add("scale_in[0].at_ms=5&scale_in[0].workers=1,2&scale_in[7].count=x&workload.type=requests&workload.requests=[{")
	f.Add("workload.type=trace&workload.trace.source=sha256:zz&scale_in_rows=-4")
	f.Add("scenario_json={\"workload\":{\"type\":\"sessions\"}}")
	f.Fuzz(func(t *testing.T, body string) {
		values, err := url.ParseQuery(body)
		if err != nil {
			return
		}
		form := formFromValues(values)
		sc, err := scenarioOfForm(form, sim.ParseEnv{})
		if err != nil {
			invalid, ok := err.(*invalidForm)
			require.True(t, ok, "want *invalidForm, got %T: %v", err, err)
			require.Positive(t, invalid.errs.count)
			_ = form.view(templatesPage(), invalid.errs, nil)
			return
		}
		again, err := sim.Parse(sc.CanonicalJSON(), sim.ParseEnv{})
		require.NoError(t, err)
		require.Equal(t, sc.ID(), again.ID())
	})
}

func templatesPage() templates.Page { return templates.Page{Title: "fuzz"} }
