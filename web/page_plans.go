package web

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"

	"github.com/scalein-planner/scalein/sim/whatif"
	"github.com/scalein-planner/scalein/store"
	"github.com/scalein-planner/scalein/templates"
	"github.com/scalein-planner/scalein/web/format"
)

const plansPerPage = runsPerPage

// planKindWords is what a kind of plan asks, in the plans list's words.
func planKindWords(k whatif.Kind) string {
	switch k {
	case whatif.KindTune:
		return "tune the autoscaler"
	case whatif.KindCapacity:
		return "one worker's capacity"
	case whatif.KindDiagnose:
		return "how far from ideal"
	case whatif.KindDrain:
	}
	return "drain workers"
}

// handlePlans is GET /plans: every plan, newest first, plansPerPage at a time (?page=N).
func (s *Server) handlePlans(w http.ResponseWriter, r *http.Request) error {
	page := pageParam(r)
	plans, total, err := s.store.ListPlans(r.Context(), plansPerPage, (page-1)*plansPerPage)
	if err != nil {
		return err
	}
	if total > 0 && len(plans) == 0 {
		return notFound(fmt.Sprintf("there is no page %d of plans; the list has %d plans", page, total))
	}
	ids := make([]string, len(plans))
	for i, pl := range plans {
		ids[i] = pl.ID
	}
	owners, err := s.ownersOf(r.Context(), store.OwnedPlan, ids)
	if err != nil {
		return err
	}
	p := templates.PlansPage{Page: s.pageInfo("Plans", "plans"), PageNum: page, Total: total}
	for _, pl := range plans {
		var doc struct {
			Goal whatif.Goal `json:"goal"`
		}
		_ = json.Unmarshal(pl.RequestJSON, &doc) // a request that does not read lists as a drain
		p.Plans = append(p.Plans, templates.PlanItem{ID: pl.ID, Name: pl.Name, Status: pl.Status, Kind: planKindWords(doc.Goal.Kind()),
			Created: format.Time(pl.CreatedAt), CreatedBy: owners[pl.ID]})
	}
	if len(plans) > 0 {
		p.FromItem = (page-1)*plansPerPage + 1
		p.ToItem = p.FromItem + len(plans) - 1
	}
	if page > 1 {
		p.PrevURL = "/plans?page=" + strconv.Itoa(page-1)
	}
	if page*plansPerPage < total {
		p.NextURL = "/plans?page=" + strconv.Itoa(page+1)
	}
	return s.render(w, r, http.StatusOK, templates.PlansView(p))
}
