package web

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/scalein-planner/scalein/runs"
	"github.com/scalein-planner/scalein/store"
)

// A refused plan comes back on the plan form with the goals its own scenario allows: a drain
// refused on a scenario with an autoscaler still offers tune and diagnose, with the drain still
// chosen. The sweep form is a page of its own, without the plan's goal.
func TestRefusedPlanKeepsItsGoalChoices(t *testing.T) {
	s := newFakeServer(t, runs.Config{}, false)
	rec := postForm(t, s, "/plans", url.Values{"scenario": {lullScenario(t)}, "goal": {"drain"}, "remove": {"x"}, "start_ms": {"0"}})
	require.Equal(t, http.StatusBadRequest, rec.Code, rec.Body.String())
	doc := parseHTML(t, rec.Body)
	assert.Contains(t, byTestID(doc, "error-remove").Text(), "whole number")
	for _, id := range []string{"plan-goal-tune", "plan-goal-drain", "plan-goal-capacity", "plan-goal-diagnose"} {
		assert.Equal(t, 1, byTestID(doc, id).Length(), id)
	}
	_, checked := byTestID(doc, "plan-goal-drain").Attr("checked")
	assert.True(t, checked, "the goal posted stays chosen")
	assert.Equal(t, "Plan a scale-in", strings.TrimSpace(byTestID(doc, "plan-form-title").Text()))

	// A diagnose refused (this scenario has no slo) comes back as diagnose.
	rec = postForm(t, s, "/plans", url.Values{"scenario": {lullScenario(t)}, "goal": {"diagnose"}})
	require.Equal(t, http.StatusBadRequest, rec.Code)
	doc = parseHTML(t, rec.Body)
	_, checked = byTestID(doc, "plan-goal-diagnose").Attr("checked")
	assert.True(t, checked)
	assert.Equal(t, 1, byTestID(doc, "plan-goal-tune").Length())

	doc = parseHTML(t, get(t, s, "/sweeps/new").Body)
	assert.Equal(t, 1, byTestID(doc, "sweep-form").Length())
	assert.Zero(t, byTestID(doc, "plan-goal").Length()+byTestID(doc, "plan-form").Length())
	rec = postForm(t, s, "/sweeps", url.Values{"scenario": {fourWorkers(t, "")}, "axis0.path": {"kvcr.bandwidth_gbps"}, "axis0.values": {"x, y"}})
	require.Equal(t, http.StatusBadRequest, rec.Code)
	doc = parseHTML(t, rec.Body)
	assert.Equal(t, 1, byTestID(doc, "sweep-form").Length())
	assert.Equal(t, "kvcr.bandwidth_gbps", byTestID(doc, "axis-0").Find(`input[name="axis0.path"]`).AttrOr("value", ""))
}

// HEAD on a sweep's and a plan's page answers like GET, without the body (it was 405).
func TestHeadSweepAndPlan(t *testing.T) {
	s := newFakeServer(t, runs.Config{}, false)
	rec := postJSON(t, s, "/api/v1/sweeps", sweepBody(fourWorkers(t, `[{"at_ms": 100, "count": 2}]`), `[{"path": "kvcr.bandwidth_gbps", "values": [5, 40]}]`))
	require.Equal(t, http.StatusAccepted, rec.Code, rec.Body.String())
	sweepID := createdID(t, rec, rec.Body.Bytes())
	rec = postJSON(t, s, "/api/v1/plans", planBody(fourWorkers(t, ""), `"goal": {"remove": 2, "start_ms": 100}`))
	require.Equal(t, http.StatusAccepted, rec.Code, rec.Body.String())
	planID := createdID(t, rec, rec.Body.Bytes())
	for _, path := range []string{"/sweeps/" + sweepID, "/plans/" + planID, "/plans"} {
		got := get(t, s, path)
		require.Equal(t, http.StatusOK, got.Code, path)
		head := do(t, s.Handler(), httptest.NewRequest(http.MethodHead, path, nil))
		assert.Equal(t, http.StatusOK, head.Code, path)
		assert.Zero(t, head.Body.Len(), path)
		assert.Equal(t, got.Header().Get("Content-Type"), head.Header().Get("Content-Type"), path)
	}
}

// GET /plans lists plans newest first, with their kind, a page of 20 at a time, and the nav
// links it.
func TestPlansList(t *testing.T) {
	s := newFakeServer(t, runs.Config{}, false)
	doc := parseHTML(t, get(t, s, "/plans").Body)
	assert.Equal(t, 1, byTestID(doc, "plans-empty").Length())
	assert.Equal(t, 1, doc.Find(`nav.site-nav a[href="/plans"]`).Length(), "the nav links the plans")

	ctx := context.Background()
	t0 := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	for i := range 21 {
		req := `{"goal": {"remove": 1}}`
		if i == 20 {
			req = `{"goal": {"tune": "autoscaler"}}`
		}
		_, _, err := s.store.CreatePlan(ctx, store.Plan{ID: fmt.Sprintf("plan%012d", i), Name: fmt.Sprintf("plan number %d", i),
			ScenarioJSON: []byte(`{}`), RequestJSON: []byte(req)}, t0.Add(time.Duration(i)*time.Minute))
		require.NoError(t, err)
	}
	doc = parseHTML(t, get(t, s, "/plans").Body)
	rows := byTestID(doc, "plans-table").Find("tbody tr")
	require.Equal(t, 20, rows.Length())
	first := rows.First()
	assert.Equal(t, "plan number 20", first.Find("a").Text(), "newest first")
	assert.Equal(t, "/plans/plan000000000020", first.Find("a").AttrOr("href", ""))
	assert.Equal(t, "tune the autoscaler", byTestID(doc, "plan-row-plan000000000020").Find(`[data-testid="plan-kind"]`).Text())
	assert.Equal(t, "drain workers", byTestID(doc, "plan-row-plan000000000019").Find(`[data-testid="plan-kind"]`).Text())
	assert.Equal(t, "/plans?page=2", byTestID(doc, "next-page").AttrOr("href", ""))
	assert.Equal(t, "page", doc.Find(`nav.site-nav a[href="/plans"]`).AttrOr("aria-current", ""))

	doc = parseHTML(t, get(t, s, "/plans?page=2").Body)
	rows = byTestID(doc, "plans-table").Find("tbody tr")
	require.Equal(t, 1, rows.Length())
	assert.Equal(t, "plan number 0", rows.Find("a").Text())
	assert.Equal(t, "/plans?page=1", byTestID(doc, "prev-page").AttrOr("href", ""))
	assert.Equal(t, http.StatusNotFound, get(t, s, "/plans?page=3").Code)
}

// A malformed plan body is answered with the shape of the kind of plan it asks for.
func TestPlanBodyShapeByKind(t *testing.T) {
	s := newFakeServer(t, runs.Config{}, false)
	for goal, want := range map[string]string{
		`{"capacity": {"min_attainment": "x"}}`:        `"goal": {"capacity": {`,
		`{"diagnose": {"rate_per_worker_per_s": "x"}}`: `"goal": {"diagnose": {`,
		`{"tune": "autoscaler", "remove": "x"}`:        `"goal": {"tune": "autoscaler"}`,
		`{"remove": "x"}`:                              `"goal": {"remove": 4, "start_ms": 480000}`,
	} {
		rec := postJSON(t, s, "/api/v1/plans", planBody(fourWorkers(t, ""), `"goal": `+goal))
		require.Equal(t, http.StatusBadRequest, rec.Code, goal)
		var answer struct{ Error string }
		require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &answer))
		assert.Contains(t, answer.Error, want, goal)
	}
}
