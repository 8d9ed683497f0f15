package web

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"

	"github.com/scalein-planner/scalein/sim"
	"github.com/scalein-planner/scalein/store"
	"github.com/scalein-planner/scalein/templates"
)

const runsPerPage = 20

// listColumns are the headline figures the runs list shows, by key, in column order.
var listColumns = []string{"latest_removal_ms", "total_pin_wait_ms", "ttft_p99_ms", "worker_seconds"}

// pageParam reads ?page= (1-based); anything else is page 1.
func pageParam(r *http.Request) int {
	n, err := strconv.Atoi(r.URL.Query().Get("page"))
	if err != nil || n < 1 {
		return 1
	}
	return min(n, 1_000_000)
}

// handleRuns is GET /runs, newest first.
func (s *Server) handleRuns(w http.ResponseWriter, r *http.Request) error {
	page := pageParam(r)
	runs, total, err := s.store.ListRuns(r.Context(), runsPerPage, (page-1)*runsPerPage)
	if err != nil {
		return err
	}
	p := templates.RunsPage{Page: s.pageInfo("Runs", "runs"), Total: total, PageNum: page}
	for _, run := range runs {
		p.Runs = append(p.Runs, templates.RunLink{ID: run.ID, Name: run.Name, Status: run.Status,
			Created: formatTime(run.CreatedAt), Figures: listFigures(run)})
	}
	if len(runs) > 0 {
		p.FromItem = (page-1)*runsPerPage + 1
		p.ToItem = p.FromItem + len(runs) - 1
	}
	if page > 1 {
		p.PrevURL = fmt.Sprintf("/runs?page=%d", page-1)
	}
	if page*runsPerPage < total {
		p.NextURL = fmt.Sprintf("/runs?page=%d", page+1)
	}
	if total > 0 && len(runs) == 0 {
		return notFound(fmt.Sprintf("there is no page %d of runs; the list has %d runs", page, total))
	}
	return s.render(w, r, http.StatusOK, templates.RunsView(p))
}

// listFigures picks the list's columns from a run's stored headline.
func listFigures(run store.RunSummary) []templates.FigureCell {
	var figs []sim.Figure
	if len(run.HeadlineJSON) > 0 {
		_ = json.Unmarshal(run.HeadlineJSON, &figs)
	}
	out := make([]templates.FigureCell, len(listColumns))
	for i, key := range listColumns {
		out[i] = templates.FigureCell{Key: key, Value: dash}
		for _, f := range figs {
			if f.Key == key {
				out[i] = templates.FigureCell{Key: key, Label: f.Label, Value: withUnit(f.Value, f.Unit)}
			}
		}
	}
	return out
}
