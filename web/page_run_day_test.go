package web

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/scalein-planner/scalein/runs"
	"github.com/scalein-planner/scalein/sim"
	"github.com/scalein-planner/scalein/store"
	"github.com/scalein-planner/scalein/templates"
	"github.com/scalein-planner/scalein/web/format"
)

// scenarioValue is the summary's value of the input labelled label (its <dd>), with its title.
func scenarioValue(t *testing.T, doc *goquery.Document, label string) (text, title string) {
	t.Helper()
	var dd *goquery.Selection
	byTestID(doc, "scenario").Find("dt").EachWithBreak(func(_ int, dt *goquery.Selection) bool {
		if strings.TrimSpace(dt.Text()) == label {
			dd = dt.Next()
			return false
		}
		return true
	})
	require.NotNil(t, dd, "no input labelled %q in the scenario summary", label)
	return strings.TrimSpace(dd.Text()), dd.AttrOr("title", "")
}

// Issue 35: a long autoscaler run's page says which decisions a page of the table shows, and
// its scenario summary reads times in their largest sensible unit and the start as a clock
// time, the exact values in the titles.
func TestRunPageOfALongNightReadsWell(t *testing.T) {
	p, ok := sim.PresetByKey("autoscaler-hour")
	require.True(t, ok)
	sc, err := sim.Parse(p.JSON, sim.ParseEnv{})
	require.NoError(t, err)
	sc.Workload.Sessions.StartsAt = "2026-12-03T00:00:00Z"
	sc.Autoscaler.DownscaleWindowMS = 900_000
	raw := sc.CanonicalJSON()
	s := newFakeServer(t, runs.Config{}, true)
	rec := postJSON(t, s, "/api/v1/runs", string(raw))
	require.Equal(t, http.StatusAccepted, rec.Code, rec.Body.String())
	waitStatus(t, s, sc.ID(), store.StatusDone)
	rep, err := sim.Run(context.Background(), sc, sim.RunOptions{})
	require.NoError(t, err)
	n := len(rep.Autoscaler.Decisions)
	require.Greater(t, n, 2*decisionsPerPage, "the hour has pages of decisions")

	doc := parseHTML(t, get(t, s, "/runs/"+sc.ID()).Body)
	filter := byTestID(doc, "decisions-filter").Text()
	assert.Contains(t, filter, fmt.Sprintf("Showing decisions 1–%d of %s.", decisionsPerPage, format.Number(float64(n))))
	assert.NotContains(t, filter, "Showing all", "the table is paged: it does not show all")
	page2 := parseHTML(t, get(t, s, "/runs/"+sc.ID()+"?dpage=2").Body)
	assert.Contains(t, byTestID(page2, "decisions-filter").Text(), fmt.Sprintf("Showing decisions %d–%d of ", decisionsPerPage+1, 2*decisionsPerPage))

	for _, tc := range []struct{ label, text, title string }{
		{"Interval", "15 s", "15000 ms"},
		{"Downscale stabilisation", "15 min", "900000 ms"},
		{"Cold start", "30 s", "30000 ms"},
		{"Prefill base", "2 ms", ""},
		{"Starts at", "2026-12-03 00:00 UTC", "2026-12-03T00:00:00Z"},
	} {
		text, title := scenarioValue(t, doc, tc.label)
		assert.Equal(t, tc.text, text, "%s", tc.label)
		assert.Equal(t, tc.title, title, "title of %s", tc.label)
	}
	down, _ := scenarioValue(t, doc, "Scale down")
	assert.True(t, strings.HasPrefix(down, "window 1 min; select max; At most"), "the scale-down rules read as words: %q", down)
	assert.NotContains(t, down, "[", "no Go slice syntax on the page")
	assert.NotContains(t, byTestID(doc, "scenario").Text(), "000 ms", "no setting in raw thousands of ms")
}

// The sentence above the workers' and the decisions' tables names the rows a page shows.
func TestShownRowsSentences(t *testing.T) {
	one := paged(10, 25, 1)
	many := paged(5760, 100, 2)
	assert.Equal(t, "Showing all 10 decisions.", decisionsShown(one, false, 3, 10))
	assert.Equal(t, "Showing decisions 101–200 of 5760.", decisionsShown(many, false, 764, 5760))
	assert.Equal(t, "Showing the 3 decisions that changed the fleet, of 10.", decisionsShown(one, true, 3, 10))
	changes := paged(764, 100, 8)
	assert.Equal(t, "Showing decisions 701–764 of 764 that changed the fleet (5760 decisions in all).", decisionsShown(changes, true, 764, 5760))
	assert.Equal(t, "Showing all 10 workers.", workersShown(one, true, 2, 10))
	assert.Equal(t, "Showing the 2 drained of 10 workers.", workersShown(one, false, 2, 10))
	assert.Equal(t, "Showing workers 101–200 of 5760.", workersShown(many, true, 526, 5760))
	assert.Equal(t, "Showing drained workers 26–50 of 526 (529 workers in all).", workersShown(paged(526, 25, 2), false, 526, 529))
}

// paged is the pager of page n of rows rows, perPage a page.
func paged(rows, perPage, n int) templates.Pager {
	table := make([][]string, rows)
	_, pg := paginateBy(table, map[string][]string{"p": {fmt.Sprint(n)}}, "/x", "p", "x", perPage)
	return pg
}
