package web

import (
	"net/http"

	"github.com/scalein-planner/scalein/sim"
	"github.com/scalein-planner/scalein/store"
	"github.com/scalein-planner/scalein/templates"
)

// handleCompare is GET /compare?a=&b=: while either run is unfinished it shows their progress
// and refreshes; then the differing fields, the headline deltas and the charts on shared axes.
func (s *Server) handleCompare(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	idA, idB := q.Get("a"), q.Get("b")
	if !runIDPattern.MatchString(idA) || !runIDPattern.MatchString(idB) {
		return notFound("compare needs two run ids: /compare?a=ID&b=ID (16 characters of a–z and 2–7 each)")
	}
	runA, err := s.store.GetRun(r.Context(), idA)
	if err != nil {
		return err
	}
	runB, err := s.store.GetRun(r.Context(), idB)
	if err != nil {
		return err
	}
	scA, errA := sim.Parse(runA.ScenarioJSON, sim.ParseEnv{Traces: s.store})
	scB, errB := sim.Parse(runB.ScenarioJSON, sim.ParseEnv{Traces: s.store})
	labelA, labelB := "A", "B"
	if errA == nil && errB == nil {
		labelA, labelB = sideLabels(scA, scB)
	}
	p := templates.ComparePage{
		Page: s.pageInfo("Compare "+runA.Name+" and "+runB.Name, "runs"),
		A:    templates.RunSide{ID: runA.ID, Name: runA.Name, Status: runA.Status, Error: runA.Error, Label: labelA, Progress: s.progressOf(runA)},
		B:    templates.RunSide{ID: runB.ID, Name: runB.Name, Status: runB.Status, Error: runB.Error, Label: labelB, Progress: s.progressOf(runB)},
	}
	if !isFinal(runA.Status) || !isFinal(runB.Status) {
		p.Page.RefreshSeconds = 2
		return s.render(w, r, http.StatusOK, templates.CompareView(p))
	}
	if runA.Status != store.StatusDone || runB.Status != store.StatusDone || errA != nil || errB != nil {
		// Both ended but not both with a report: the heads show each run's error.
		return s.render(w, r, http.StatusOK, templates.CompareView(p))
	}
	repA, err := decodeReport(runA)
	if err != nil {
		return err
	}
	repB, err := decodeReport(runB)
	if err != nil {
		return err
	}
	cmp := sim.Compare(scA, scB, repA, repB)
	p.Ready = true
	p.Page.Charts = true
	p.OnlyToggle = cmp.OnlyToggle
	for _, d := range cmp.Diffs {
		p.Diffs = append(p.Diffs, templates.DiffRow{Path: d.Path, A: d.A, B: d.B})
	}
	for _, f := range cmp.Figures {
		row := templates.CompareFigure{Key: f.Key, Label: f.Label, A: withUnit(f.A, f.Unit), B: withUnit(f.B, f.Unit),
			Delta: dash, DeltaPct: formatPct(f.DeltaPct)}
		if f.Delta != nil {
			row.Delta = formatSigned(*f.Delta, f.Unit)
			switch {
			case *f.Delta > 0:
				row.Trend = "up"
			case *f.Delta < 0:
				row.Trend = "down"
			}
		}
		p.Figures = append(p.Figures, row)
	}
	p.Charts = compareCharts(repA, repB, labelA, labelB)
	return s.render(w, r, http.StatusOK, templates.CompareView(p))
}

// sideLabels names the two runs by the toggle that tells them apart, when it does.
func sideLabels(a, b *sim.Scenario) (string, string) {
	hints := func(sc *sim.Scenario) string {
		if sc.Router.Hints {
			return "hinted"
		}
		return "no hints"
	}
	guard := func(sc *sim.Scenario) string {
		if sc.KVCR.RejectDrainingSources {
			return "guard on"
		}
		return "guard off"
	}
	switch {
	case a.Router.Hints != b.Router.Hints && a.KVCR.RejectDrainingSources != b.KVCR.RejectDrainingSources:
		return hints(a) + ", " + guard(a), hints(b) + ", " + guard(b)
	case a.Router.Hints != b.Router.Hints:
		return hints(a), hints(b)
	case a.KVCR.RejectDrainingSources != b.KVCR.RejectDrainingSources:
		return guard(a), guard(b)
	}
	return a.Name, b.Name
}
