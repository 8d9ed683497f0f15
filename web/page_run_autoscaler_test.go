package web

import (
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/scalein-planner/scalein/runs"
	"github.com/scalein-planner/scalein/sim"
	"github.com/scalein-planner/scalein/store"
)

// An autoscaler run's page: its figures, verdicts in words, and the decisions table, which
// pages and filters to the decisions that changed the fleet.
func TestRunPageShowsTheAutoscaler(t *testing.T) {
	s := newFakeServer(t, runs.Config{}, true)
	raw, err := os.ReadFile(filepath.Join("..", "sim", "testdata", "examples", "autoscaler_window_holds_scale_down.json"))
	require.NoError(t, err)
	rec := postJSON(t, s, "/api/v1/runs", string(raw))
	require.Equal(t, http.StatusAccepted, rec.Code, rec.Body.String())
	sc, err := sim.Parse(raw, sim.ParseEnv{})
	require.NoError(t, err)
	waitStatus(t, s, sc.ID(), store.StatusDone)

	doc := parseHTML(t, get(t, s, "/runs/"+sc.ID()).Body)
	sec := byTestID(doc, "autoscaler-section")
	require.Equal(t, 1, sec.Length())
	text := sec.Text()
	assert.Contains(t, text, "GPU-hours")
	assert.Contains(t, text, "Peak workers")
	// The words at the top are about the autoscaler.
	words := byTestID(doc, "autoscaler-words").Text()
	assert.Contains(t, words, "In 10 decisions the autoscaler drained 2 workers in 1 decision")
	assert.Contains(t, words, "from 3 to 1 workers")
	assert.Equal(t, 1, byTestID(doc, "chart-fleet").Length(), "the fleet chart is drawn")

	// The page leads with the night at a glance, the autoscaler in words, the fleet chart at
	// full width, the decisions, then the drains.
	page := get(t, s, "/runs/"+sc.ID()).Body.String()
	at := func(id string) int { return strings.Index(page, `data-testid="`+id+`"`) }
	order := []int{at("glance"), at("autoscaler-words"), at("fleet-chart-lead"), at("autoscaler-section"), at("drain-cards"), at("run-actions")}
	require.True(t, slices.IsSorted(order) && order[0] >= 0, "glance, words, fleet chart, decisions, drains, actions: %v", order)
	assert.Contains(t, byTestID(doc, "fleet-chart-lead").AttrOr("class", ""), "full-width")
	assert.Equal(t, 1, strings.Count(page, "In 10 decisions the autoscaler drained"), "the autoscaler's words once, at the top")
	lead := byTestID(doc, "glance").Text()
	for _, want := range []string{"GPU-hours", " GPU-h", "per GPU-hour", "TTFT p99", "end-to-end p99", "peak 3", "final 1", "Scale events", "0 up, 1 down", "under a behavior; most held: within tolerance", "Requests killed", "migrated"} {
		assert.Contains(t, lead, want)
	}
	assert.Equal(t, 0, byTestID(doc, "charts").Find(`[data-testid="chart-fleet"]`).Length(), "the fleet chart is not drawn twice")
	assert.Equal(t, 1, byTestID(doc, "counterpart-autoscaler").Length(), "the run page offers the autoscaler pair")
	rows := byTestID(doc, "decisions-table").Find("tbody tr")
	assert.Equal(t, 10, rows.Length())
	assert.Contains(t, rows.Eq(0).Text(), "stabilized")
	assert.Contains(t, rows.Eq(2).Text(), "drained 2, 1")
	// "Load" is per worker with its unit (the metric against its target) beside the sampled value.
	head := byTestID(doc, "decisions-table").Find("thead th")
	assert.Contains(t, head.Eq(2).Text(), "Load per worker (requests, target ")
	assert.Contains(t, head.Eq(3).Text(), "Sampled (per pod)")
	assert.NotEqual(t, "—", strings.TrimSpace(rows.Eq(0).Find("td").Eq(2).Text()), "a decision with a ratio shows its load per worker")

	changes := parseHTML(t, get(t, s, "/runs/"+sc.ID()+"?decisions=changes").Body)
	rows = byTestID(changes, "decisions-table").Find("tbody tr")
	require.Equal(t, 1, rows.Length())
	assert.Contains(t, rows.Text(), "scale down")
	assert.Contains(t, byTestID(changes, "decisions-filter").Text(), "Show every decision")

	// A run without an autoscaler has no such section.
	rec = postJSON(t, s, "/api/v1/runs", testScenario("plain"))
	require.Equal(t, http.StatusAccepted, rec.Code)
	plain, err := sim.Parse([]byte(testScenario("plain")), sim.ParseEnv{})
	require.NoError(t, err)
	waitStatus(t, s, plain.ID(), store.StatusDone)
	plainPage := get(t, s, "/runs/"+plain.ID()).Body.String()
	assert.False(t, strings.Contains(plainPage, `data-testid="autoscaler-section"`))
	assert.False(t, strings.Contains(plainPage, `data-testid="counterpart-autoscaler"`), "no autoscaler pair without an autoscaler")
}
