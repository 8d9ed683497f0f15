package web

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/scalein-planner/scalein/sim"
	"github.com/scalein-planner/scalein/store"
	"github.com/scalein-planner/scalein/templates"
	"github.com/scalein-planner/scalein/web/format"
)

const runsPerPage = 20

// listColumns are the headline figures the runs list shows, by key, in column order.
var listColumns = []string{sim.HeadlineLatestRemovalMS, sim.HeadlineTotalPinWaitMS, sim.HeadlineTTFTP99MS, sim.HeadlineWorkerSeconds}

// pageParam reads ?page= (1-based); anything else is page 1.
func pageParam(r *http.Request) int {
	n, err := strconv.Atoi(r.URL.Query().Get("page"))
	if err != nil || n < 1 {
		return 1
	}
	return min(n, 1_000_000)
}

// handleRuns is GET /runs, newest first. ?q= filters by name; ?with=ID turns the list into the
// "compare with…" choice for that run.
func (s *Server) handleRuns(w http.ResponseWriter, r *http.Request) error {
	return s.renderRuns(w, r, http.StatusOK, "")
}

// runsWithError shows the runs list again with a message (a "Compare selected" without exactly
// two runs ticked).
func (s *Server) runsWithError(w http.ResponseWriter, r *http.Request, msg string) error {
	return s.renderRuns(w, r, http.StatusUnprocessableEntity, msg)
}

func (s *Server) renderRuns(w http.ResponseWriter, r *http.Request, status int, errMsg string) error {
	page := pageParam(r)
	q := r.URL.Query()
	query := strings.TrimSpace(q.Get("q"))
	if len(query) > 200 {
		return badRequest("the name filter is longer than 200 characters; shorten it")
	}
	with := q.Get("with")
	p := templates.RunsPage{Page: s.pageInfo("Runs", "runs"), PageNum: page, Query: query, Error: errMsg}
	if with != "" {
		if !idPattern.MatchString(with) {
			return notFound("no run has this id; run ids are 16 characters of a–z and 2–7")
		}
		base, err := s.store.GetRunStatus(r.Context(), with)
		if err != nil {
			return err
		}
		p.With, p.WithName = base.ID, base.Name
		p.Page.Title = "Compare " + base.Name + " with…"
	}
	runs, total, err := s.store.SearchRuns(r.Context(), query, runsPerPage, (page-1)*runsPerPage)
	if err != nil {
		return err
	}
	p.Total = total
	owners, err := s.runOwners(r.Context(), runs)
	if err != nil {
		return err
	}
	for _, run := range runs {
		p.Runs = append(p.Runs, templates.RunLink{ID: run.ID, Name: run.Name, Status: run.Status,
			Created: format.Time(run.CreatedAt), CreatedBy: owners[run.ID], Figures: listFigures(run)})
	}
	if len(runs) > 0 {
		p.FromItem = (page-1)*runsPerPage + 1
		p.ToItem = p.FromItem + len(runs) - 1
	}
	link := func(n int) string {
		v := url.Values{}
		if query != "" {
			v.Set("q", query)
		}
		if with != "" {
			v.Set("with", with)
		}
		v.Set("page", strconv.Itoa(n))
		return "/runs?" + v.Encode()
	}
	if page > 1 {
		p.PrevURL = link(page - 1)
	}
	if page*runsPerPage < total {
		p.NextURL = link(page + 1)
	}
	if total > 0 && len(runs) == 0 {
		return notFound(fmt.Sprintf("there is no page %d of runs; the list has %d runs", page, total))
	}
	return s.render(w, r, status, templates.RunsView(p))
}

// listFigures picks the list's columns from a run's stored headline.
func listFigures(run store.RunSummary) []templates.FigureCell {
	var figs []sim.Figure
	if len(run.HeadlineJSON) > 0 {
		_ = json.Unmarshal(run.HeadlineJSON, &figs)
	}
	out := make([]templates.FigureCell, len(listColumns))
	for i, key := range listColumns {
		out[i] = templates.FigureCell{Key: key, Value: format.Dash}
		for _, f := range figs {
			if f.Key == key {
				shown, exact := format.CardValue(f.Value, f.Unit)
				out[i] = templates.FigureCell{Key: key, Label: f.Label, Value: shown, Exact: exact}
			}
		}
	}
	return out
}
