package web

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"regexp"
	"strconv"
	"strings"

	"github.com/scalein-planner/scalein/sim"
	"github.com/scalein-planner/scalein/templates"
	"github.com/scalein-planner/scalein/web/format"
)

// partialNote explains the partial count wherever it is shown.
const partialNote = "A pull is partial when the source holds less than the whole reusable prefix. " +
	"A follow-up turn that extends a cached prefix is partial by definition: its newest blocks exist on no worker yet."

// partialShort is the same, short enough for a table row's label.
const partialShort = "a follow-up turn that extends a cached prefix is partial by definition"

// runCards are the key figures at the top of a run page.
func runCards(rep *sim.Report, clock format.Clock) []templates.Card {
	figs := sim.Headline(rep)
	byKey := make(map[string]sim.Figure, len(figs))
	for _, f := range figs {
		byKey[f.Key] = f
	}
	drained, removed := 0, 0
	for _, w := range rep.Workers {
		if w.MarkedAtMS != nil {
			drained++
			if w.RemovedAtMS != nil {
				removed++
			}
		}
	}
	k := rep.KVCR
	cards := []templates.Card{
		figureCard(sim.HeadlineLatestRemovalMS, "Latest removal deadline", byKey, "ms",
			fmt.Sprintf("%s drained, %d removed", format.Count(int64(drained), "workers"), removed)),
		figureCard(sim.HeadlineTotalPinWaitMS, "Total pin wait", byKey, "ms", "time drained workers waited for peers pulling from them"),
		{Key: sim.HeadlinePullsStaged, Label: "Pulls staged", Value: format.Count(k.Staged, "pulls"),
			Note: fmt.Sprintf("%s succeeded, %s partial, %s rejected", format.Count(k.Success, "pulls"), format.Count(k.Partial, "pulls"),
				format.Count(k.RejectedDraining+k.RejectedRemoved, "hints"))},
		figureCard(sim.HeadlineTTFTP99MS, "TTFT p99", byKey, "ms", "p50 "+format.DurationOpt(byKey[sim.HeadlineTTFTP50MS].Value)),
		{Key: sim.HeadlineRequestsCompleted, Label: "Requests completed", Value: format.Count(rep.Summary.Requests.Completed, "requests"),
			Note: format.Count(rep.Summary.Requests.Killed, "requests") + " killed"},
		workerTimeCard(byKey, "run lasted "+format.ReadableOpt(byKey[sim.HeadlineDurationMS].Value, "ms")),
	}
	if k.Partial > 0 {
		cards[2].HelpTitle, cards[2].Help = "What is a partial pull?", partialNote
	}
	if v := byKey[sim.HeadlineLatestRemovalMS].Value; v != nil && clock.Known {
		// An instant of a night with a start reads in clock time (the exact ms in its title).
		cards[0].Value, cards[0].Exact = clock.At(*v)+" UTC", format.WithUnit(v, "ms")
	}
	return append(sloCards(rep), cards...)
}

// workerTimeCard is the worker-seconds card: worker time is a sum, not an instant, so a large
// one reads in worker-hours rather than as a clock time, and the card is titled for the
// quantity ("Worker time"), not for one of its units.
func workerTimeCard(byKey map[string]sim.Figure, note string) templates.Card {
	c := figureCard(sim.HeadlineWorkerSeconds, "Worker time", byKey, "s", note)
	if v := byKey[sim.HeadlineWorkerSeconds].Value; v != nil {
		c.Value, c.Exact = workerTime(*v), format.WithUnit(v, "s")
	}
	return c
}

// workerTime writes worker-seconds as a person reads a sum of worker time: seconds, or
// worker-hours from an hour on.
func workerTime(v float64) string {
	if v >= 3600 {
		return format.Sig3(v/3600) + " worker-hours"
	}
	return format.Sig3(v) + " s"
}

// figureCard is a card of one headline figure, rounded for the card (the exact value is its
// title).
func figureCard(key, label string, byKey map[string]sim.Figure, unit, note string) templates.Card {
	value, exact := format.CardValue(byKey[key].Value, unit)
	return templates.Card{Key: key, Label: label, Value: value, Exact: exact, Note: note}
}

// compareCards are the key figures of both runs with their delta (B − A).
func compareCards(cmp sim.Comparison) []templates.Card {
	return cardsFor(cmp, []string{sim.HeadlineSLOAttainment, sim.HeadlineLatestRemovalMS, sim.HeadlineTotalPinWaitMS, sim.HeadlinePullsStaged, sim.HeadlinePullsPartial, sim.HeadlineTTFTP99MS, sim.HeadlineWorkerSeconds}, false)
}

// cardsFor is the compare cards of the given figures, in that order; aIsChange as in deltaOf.
// A and B read as a person reads them; the exact values are the figures table's.
func cardsFor(cmp sim.Comparison, keys []string, aIsChange bool) []templates.Card {
	var out []templates.Card
	for _, key := range keys {
		for _, f := range cmp.Figures {
			if f.Key != key {
				continue
			}
			c := templates.Card{Key: key, Label: f.Label, A: format.ReadableOpt(f.A, f.Unit), B: format.ReadableOpt(f.B, f.Unit)}
			c.Delta, c.Trend = deltaOf(f, aIsChange)
			if key == sim.HeadlinePullsPartial && ((f.A != nil && *f.A > 0) || (f.B != nil && *f.B > 0)) {
				c.Note = partialNote
			}
			out = append(out, c)
		}
	}
	return out
}

// scenarioOf decodes a stored run's canonical scenario without loading its trace.
func scenarioOf(scenarioJSON []byte) (*sim.Scenario, error) {
	var sc sim.Scenario
	if err := json.Unmarshal(scenarioJSON, &sc); err != nil {
		return nil, fmt.Errorf("decode stored scenario: %w", err)
	}
	return &sc, nil
}

// relatedRuns lists the pairs (the hint and guard counterparts that exist) and the comparisons
// a run belongs to.
func (s *Server) relatedRuns(ctx context.Context, id string, sc *sim.Scenario) ([]templates.RelatedRun, error) {
	var out []templates.RelatedRun
	if sc != nil {
		kinds := []struct{ kind, title string }{{sim.CounterpartHints, "hinted vs no-hint pair"}, {sim.CounterpartGuard, "guard on vs off pair"}}
		ids := map[string]string{}
		var lookup []string
		for _, k := range kinds {
			other, err := sim.Counterpart(sc, k.kind)
			if err != nil {
				return nil, err
			}
			ids[k.kind] = other.ID()
			lookup = append(lookup, other.ID())
		}
		found, err := s.store.RunsByID(ctx, lookup...)
		if err != nil {
			return nil, err
		}
		for _, k := range kinds {
			for _, r := range found {
				if r.ID != ids[k.kind] {
					continue
				}
				a, b := id, r.ID
				if on := pairSideOn(sc, k.kind); !on {
					a, b = b, a
				}
				out = append(out, templates.RelatedRun{Kind: k.title, URL: compareURL(a, b), Title: r.Name, Status: r.Status})
			}
		}
	}
	cmps, err := s.store.ComparisonsOf(ctx, id)
	if err != nil {
		return nil, err
	}
	for _, c := range cmps {
		other := c.B
		if other.ID == id {
			other = c.A
		}
		dup := false
		for _, r := range out {
			if r.URL == compareURL(c.A.ID, c.B.ID) {
				dup = true
			}
		}
		if !dup {
			out = append(out, templates.RelatedRun{Kind: "comparison", URL: compareURL(c.A.ID, c.B.ID), Title: other.Name, Status: other.Status})
		}
	}
	return out, nil
}

// counterpartIDs are the ids of the hint and guard counterparts of a scenario.
func counterpartIDs(sc *sim.Scenario) []string {
	var ids []string
	for _, kind := range []string{sim.CounterpartHints, sim.CounterpartGuard} {
		if other, err := sim.Counterpart(sc, kind); err == nil {
			ids = append(ids, other.ID())
		}
	}
	return ids
}

// pairSideOn says whether sc has the toggle of kind on (it is then side A of the pair).
func pairSideOn(sc *sim.Scenario, kind string) bool {
	if kind == sim.CounterpartGuard {
		return sc.KVCR.RejectDrainingSources
	}
	return sc.Router.Hints
}

func compareURL(a, b string) string {
	return "/compare?a=" + url.QueryEscape(a) + "&b=" + url.QueryEscape(b)
}

// editSuffix marks the name of a scenario prefilled by "Edit as new" ("name (edit)", then
// "name (edit 2)", …) so the new run is told apart from the one it came from.
var editSuffix = regexp.MustCompile(` \(edit(?: (\d+))?\)$`)

func editAsNewName(name string) string {
	m := editSuffix.FindStringSubmatch(name)
	if m == nil {
		return name + " (edit)"
	}
	n := 1
	if m[1] != "" {
		n, _ = strconv.Atoi(m[1])
	}
	return strings.TrimSuffix(name, m[0]) + fmt.Sprintf(" (edit %d)", n+1)
}
