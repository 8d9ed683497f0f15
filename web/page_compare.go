package web

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/scalein-planner/scalein/runs"
	"github.com/scalein-planner/scalein/sim"
	"github.com/scalein-planner/scalein/store"
	"github.com/scalein-planner/scalein/templates"
	"github.com/scalein-planner/scalein/web/charts"
	"github.com/scalein-planner/scalein/web/format"
)

// handleCompare is GET /compare?a=&b=: while either run is unfinished it shows their progress
// and refreshes; then the differing fields, the headline deltas and the charts on shared axes.
func (s *Server) handleCompare(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	if picked, ok := q["run"]; ok {
		return s.redirectPicked(w, r, picked)
	}
	idA, idB := q.Get("a"), q.Get("b")
	if !idPattern.MatchString(idA) || !idPattern.MatchString(idB) {
		return notFound("compare needs two run ids: /compare?a=ID&b=ID (16 characters of a–z and 2–7 each)")
	}
	// The price changes the cost figures; the key and the page have it in normal form.
	u := normalPageURL(r.URL, "price")
	key := compareURL(idA, idB)
	if u.RawQuery != "" {
		key += "&" + u.RawQuery
	}
	u.RawQuery = strings.TrimPrefix(key, "/compare?")
	return s.servePage(w, r, key, func(ctx context.Context, _ *cachedPage) (string, error) {
		return s.compareVersion(ctx, idA, idB)
	}, func(ctx context.Context) (builtPage, error) {
		return s.buildComparePage(ctx, u, idA, idB)
	})
}

// buildComparePage builds the compare page of runs a and b: the page to cache once both are
// done, else the view to render per request.
func (s *Server) buildComparePage(ctx context.Context, u *url.URL, idA, idB string) (builtPage, error) {
	gen, checked := s.pages.gen.Load(), s.now()
	runA, err := s.store.GetRun(ctx, idA)
	if err != nil {
		return builtPage{}, err
	}
	runB, err := s.store.GetRun(ctx, idB)
	if err != nil {
		return builtPage{}, err
	}
	// The stored scenarios are canonical and complete: decoding them is enough to diff them
	// (sim.Parse would also load a trace workload's rows, which a diff does not need).
	scA, errA := scenarioOf(runA.ScenarioJSON)
	scB, errB := scenarioOf(runB.ScenarioJSON)
	p := s.compareHeads(runA, runB, scA, scB, errA == nil && errB == nil)
	if !runs.IsFinal(runA.Status) || !runs.IsFinal(runB.Status) {
		p.Page.RefreshSeconds = 2
		return builtPage{view: templates.CompareView(p)}, nil
	}
	if runA.Status != store.StatusDone || runB.Status != store.StatusDone || errA != nil || errB != nil {
		// Both ended but not both with a report: the heads show each run's error.
		return builtPage{view: templates.CompareView(p)}, nil
	}
	sumA, err := s.runs.LoadSummary(ctx, runA)
	if err != nil {
		return builtPage{}, err
	}
	sumB, err := s.runs.LoadSummary(ctx, runB)
	if err != nil {
		return builtPage{}, err
	}
	fillComparison(&p, sim.Compare(scA, scB, &sumA.Report, &sumB.Report), sumA, sumB)
	p.PoolVerdictsLead, p.PoolVerdicts = comparePoolVerdicts(&sumA.Report, &sumB.Report, scA, scB, p.A.Label, p.B.Label)
	// Two runs of the same night (one start time) share its clock on their time axes.
	if startA, okA := scA.StartTime(); okA {
		if startB, okB := scB.StartTime(); okB && startA.Equal(startB) {
			onClock(p.Charts, format.ClockAt(startA, true))
		}
	}
	p.Cost = s.costView(&http.Request{URL: u}, []string{"a", "b"}, &sumA.Report, &sumB.Report)
	// Both runs are done and stay so: the page never changes.
	return cachedPageOf(ctx, store.StatusDone+"+"+store.StatusDone, gen, checked, nil, templates.CompareView(p))
}

// redirectPicked answers "Compare selected" on /runs, which sends the checked runs as
// run=ID&run=ID.
func (s *Server) redirectPicked(w http.ResponseWriter, r *http.Request, picked []string) error {
	if len(picked) != 2 {
		return s.runsWithError(w, r, fmt.Sprintf("Compare selected needs exactly two runs; %d %s selected. Tick two runs and press Compare selected again.",
			len(picked), format.Plural(int64(len(picked)), "was", "were")))
	}
	if picked[0] == picked[1] {
		return s.runsWithError(w, r, "Compare selected needs two different runs; tick two runs and press Compare selected again.")
	}
	// The list is newest first: the older run is A, the newer one (the change) B.
	a, b := picked[1], picked[0]
	if !idPattern.MatchString(a) || !idPattern.MatchString(b) {
		return notFound("compare needs two run ids (16 characters of a–z and 2–7 each)")
	}
	// "Compare selected" is the explicit action that records a comparison, which the run pages
	// then list (issue 19 L9: opening /compare?a=…&b=… records nothing, so browsing pairs is
	// no write and no change of every cached run page).
	for _, id := range []string{a, b} {
		if _, err := s.store.GetRunStatus(r.Context(), id); err != nil {
			return err
		}
	}
	created, err := s.store.RecordComparison(r.Context(), a, b, s.now())
	if err != nil {
		return err
	}
	if created {
		s.pages.changed() // the run pages of A and B now list this comparison
	}
	http.Redirect(w, r, compareURL(a, b), http.StatusSeeOther)
	return nil
}

// compareHeads is the compare page of two runs before their figures: the title and each run's
// head, labelled by what differs between the scenarios when both decode.
func (s *Server) compareHeads(runA, runB store.Run, scA, scB *sim.Scenario, decoded bool) templates.ComparePage {
	labelA, labelB, differs := "A", "B", ""
	if decoded {
		labelA, labelB, differs = sideLabels(scA, scB, runA.Name, runB.Name)
	}
	// Titled by the runs' names, as their owner named them ("my HPA 01 vs the ideal fleet");
	// what tells them apart is the line below.
	title := runA.Name + " vs " + runB.Name
	statusA, progressA := s.liveStatus(runA)
	statusB, progressB := s.liveStatus(runB)
	return templates.ComparePage{
		Differs: differs,
		Page:    s.pageInfo(title, "runs"),
		A:       templates.RunSide{ID: runA.ID, Name: runA.Name, Status: statusA, Error: runA.Error, Label: labelA, Progress: progressA},
		B:       templates.RunSide{ID: runB.ID, Name: runB.Name, Status: statusB, Error: runB.Error, Label: labelB, Progress: progressB},
	}
}

// fillComparison adds the figures of two finished runs to their compare page.
func fillComparison(p *templates.ComparePage, cmp sim.Comparison, sumA, sumB *runs.StoredSummary) {
	p.Ready = true
	p.Page.Charts = true
	p.OnlyToggle = cmp.OnlyToggle
	p.ToggleExtra = cmp.Kind != "" && !cmp.OnlyToggle
	p.Cards = compareCards(cmp)
	p.Verdicts = compareVerdicts(cmp, &sumA.Report, &sumB.Report, p.B.Label)
	if cmp.Kind == sim.CounterpartAutoscaler && sumA.Report.Autoscaler != nil {
		// The autoscaler pair says what it saved and what that cost (A: autoscaler, B: fixed), and
		// what the autoscaler did; the removal-deadline verdicts of a schedule pair do not apply.
		p.Cards = cardsFor(cmp, append([]string{sim.HeadlineSLOAttainment}, autoscalerCardKeys...), true)
		p.Verdicts = autoscalerPairVerdicts(&sumA.Report, &sumB.Report, p.B.Label)
		w := sumA.Report.Summary.Workers
		p.Verdicts = append(p.Verdicts, decisionsInWords("", "the autoscaler", "fleet", sumA.Report.Autoscaler.Decisions, w.Initial, w.Final, w.Peak))
		if v, ok := pinWaitVerdict(&sumA.Report); ok {
			p.Verdicts = append(p.Verdicts, v)
		}
	} else if sumA.Report.Autoscaler != nil && sumB.Report.Autoscaler != nil {
		// Two autoscaler runs (a plan's "Compare with your settings"): what the settings decide,
		// GPU-hours first, not the drain times of a hand-written schedule.
		p.Cards = cardsFor(cmp, autoscalerCardKeys, false)
		p.Verdicts = settingsPairVerdicts(&sumA.Report, &sumB.Report, p.B.Label)
	}
	noteCompareSLO(p.Cards, &sumA.Report, &sumB.Report)
	for _, d := range cmp.Diffs {
		a, b := d.A, d.B
		if cmp.Kind == sim.CounterpartAutoscaler && d.Path == "autoscaler" {
			a, b = orNone(a), orNone(b)
		}
		p.Diffs = append(p.Diffs, templates.DiffRow{Path: d.Path, A: a, B: b})
	}
	aIsChange := cmp.Kind == sim.CounterpartAutoscaler
	for _, f := range cmp.Figures {
		delta, trend := deltaOf(f, aIsChange)
		a, aExact := format.CardValue(f.A, f.Unit)
		b, bExact := format.CardValue(f.B, f.Unit)
		p.Figures = append(p.Figures, templates.CompareFigure{Key: f.Key, Label: f.Label, A: a, B: b, AExact: aExact, BExact: bExact,
			Delta: delta, Trend: trend, DeltaPct: format.Pct(f.DeltaPct)})
	}
	p.Charts = charts.BoundTables(charts.CompareSummaries(sumA, sumB, p.A.Label, p.B.Label))
	p.Pools = comparePools(&sumA.Report, &sumB.Report, p.A.Label, p.B.Label)
}

// deltaOf prints the change B − A of a compared figure with its sign and unit, and whether it
// is "better" or "worse" ("" for none). Every compared figure is one to lower (times, waits,
// GPU-hours, workers). B is the change except in the autoscaler pair, where A (the autoscaler)
// is weighed against B (the fixed fleet): there a positive B − A is what the autoscaler saves.
// SLO attainment is the exception, a figure to raise.
func deltaOf(f sim.FigureDelta, aIsChange bool) (delta, trend string) {
	if f.Delta == nil {
		return format.Dash, ""
	}
	lower := *f.Delta < 0
	if aIsChange {
		lower = *f.Delta > 0
	}
	if f.Key == sim.HeadlineSLOAttainment {
		lower = !lower // the one figure to raise: the share of requests within the SLO
	}
	switch {
	case *f.Delta == 0:
	case lower:
		trend = "better"
	default:
		trend = "worse"
	}
	return format.SignedReadable(*f.Delta, f.Unit), trend
}

// isAutoscalerPair says whether two scenarios are an autoscaler and a fixed fleet that differ
// in nothing else (the fleet's size is the baseline's, sim.FixedFleet).
func isAutoscalerPair(diffs []sim.FieldDiff, a, b *sim.Scenario) bool {
	if scales(a) == scales(b) {
		return false
	}
	for _, d := range diffs {
		switch d.Path {
		case "autoscaler", "fleet.workers", "disaggregation.prefill.workers", "disaggregation.decode.workers":
		default:
			return false
		}
	}
	return true
}

// scales says whether a scenario has an autoscaler: the fleet's, or one of its pools'.
func scales(sc *sim.Scenario) bool { return sc.Autoscaler != nil || sc.PoolAutoscalers != nil }

// fixedFleetLabel names the fixed side of an autoscaler pair and which baseline it is: "fixed
// fleet of 5 workers, the autoscaler's maximum"; with pools, "fixed pools of 8 prefill and 16
// decode workers, the autoscalers' maximums".
func fixedFleetLabel(fixed, scaled *sim.Scenario) string {
	if d := fixed.Disaggregation; d != nil {
		label := fmt.Sprintf("fixed pools of %d prefill and %s", d.Prefill.Workers, format.Count(int64(d.Decode.Workers), "decode workers"))
		if scaled.Disaggregation != nil && scaled.PoolAutoscalers != nil {
			if p, dec := sim.FixedPoolSizes(scaled); p == d.Prefill.Workers && dec == d.Decode.Workers {
				label += ", the autoscalers' maximums"
			}
		}
		return label
	}
	label := "fixed fleet of " + format.Count(int64(fixed.Fleet.Workers), "workers")
	switch a := scaled.Autoscaler; {
	case a != nil && fixed.Fleet.Workers == a.MaxWorkers:
		label += ", the autoscaler's maximum"
	case fixed.Fleet.Workers == scaled.Fleet.Workers:
		label += ", the autoscaler's starting fleet"
	}
	return label
}

// compareVersion is the statuses of both runs ("done+done" for a cacheable page).
func (s *Server) compareVersion(ctx context.Context, a, b string) (string, error) {
	runs, err := s.store.RunsByID(ctx, a, b)
	if err != nil {
		return "", err
	}
	st := map[string]string{}
	for _, run := range runs {
		st[run.ID] = run.Status
	}
	return st[a] + "+" + st[b], nil
}

// maxLabelValueChars bounds a value quoted in a side's label.
const maxLabelValueChars = 32

// sideLabels names the two runs by what tells them apart: the hint/guard toggle ("guard on" /
// "guard off"), otherwise the differing fields and their values ("kvcr.bandwidth_gbps 25" /
// "kvcr.bandwidth_gbps 100"; past two fields "+N more"), otherwise the run names. differs is
// the short form for a title ("kvcr.bandwidth_gbps 25 / 100").
func sideLabels(a, b *sim.Scenario, nameA, nameB string) (labelA, labelB, differs string) {
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
	diffs := sim.DiffScenarios(a, b)
	if isAutoscalerPair(diffs, a, b) {
		// The autoscaler pair: one side scales, the other holds the baseline's workers for the
		// whole run.
		if !scales(a) {
			fixed := fixedFleetLabel(a, b)
			return fixed, "autoscaler", fixed + " / autoscaler"
		}
		fixed := fixedFleetLabel(b, a)
		return "autoscaler", fixed, "autoscaler / " + fixed
	}
	toggles, others := 0, []sim.FieldDiff{}
	for _, d := range diffs {
		if d.Path == "router.hints" || d.Path == "kvcr.reject_draining_sources" {
			toggles++
		} else {
			others = append(others, d)
		}
	}
	switch {
	case len(others) == 0 && toggles == 2:
		labelA, labelB = hints(a)+", "+guard(a), hints(b)+", "+guard(b)
		return labelA, labelB, labelA + " / " + labelB
	case len(others) == 0 && a.Router.Hints != b.Router.Hints:
		return hints(a), hints(b), hints(a) + " / " + hints(b)
	case len(others) == 0 && toggles == 1:
		return guard(a), guard(b), guard(a) + " / " + guard(b)
	case len(diffs) == 0:
		if nameA == nameB {
			return "A", "B", ""
		}
		return nameA, nameB, ""
	}
	clip := func(v string) string {
		if v == "" {
			v = "(none)"
		}
		if r := []rune(v); len(r) > maxLabelValueChars {
			return string(r[:maxLabelValueChars-1]) + "…"
		}
		return v
	}
	var pa, pb, pd []string
	for i, d := range diffs {
		if i == 2 {
			more := fmt.Sprintf("+%d more", len(diffs)-2)
			pa, pb, pd = append(pa, more), append(pb, more), append(pd, more)
			break
		}
		pa = append(pa, d.Path+" "+clip(d.A))
		pb = append(pb, d.Path+" "+clip(d.B))
		pd = append(pd, d.Path+" "+clip(d.A)+" / "+clip(d.B))
	}
	return strings.Join(pa, ", "), strings.Join(pb, ", "), strings.Join(pd, ", ")
}
