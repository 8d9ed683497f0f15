package web

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/url"
	"regexp"
	"strconv"
	"strings"

	"github.com/scalein-planner/scalein/sim"
	"github.com/scalein-planner/scalein/templates"
)

// singularUnits maps plural count units to their singular, so "1 pull" never reads "1 pulls".
var singularUnits = map[string]string{
	"pulls": "pull", "requests": "request", "hints": "hint", "tokens": "token", "blocks": "block",
	"bytes": "byte", "preemptions": "preemption", "workers": "worker", "runs": "run",
}

// unitFor returns the unit as it reads after v.
func unitFor(v float64, unit string) string {
	if v == 1 {
		if s, ok := singularUnits[unit]; ok {
			return s
		}
	}
	return unit
}

// countOf prints a count with its unit in the right number: "1 pull", "262 pulls".
func countOf(n int64, unit string) string {
	return formatNumber(float64(n)) + " " + unitFor(float64(n), unit)
}

// shortMS prints a time for a sentence: at most two decimals ("86.55 ms", "77 ms").
func shortMS(v float64) string {
	return shortNumber(v) + " ms"
}

func shortNumber(v float64) string {
	if math.Abs(v) >= 1000 {
		return formatNumber(math.Round(v))
	}
	return formatNumber(math.Round(v*100) / 100)
}

// partialNote explains the partial count wherever it is shown.
const partialNote = "A pull is partial when the source holds less than the whole reusable prefix. " +
	"A follow-up turn that extends a cached prefix is partial by definition: its newest blocks exist on no worker yet."

// partialShort is the same, short enough for a table row's label.
const partialShort = "a follow-up turn that extends a cached prefix is partial by definition"

// runCards are the key figures at the top of a run page.
func runCards(rep *sim.Report) []templates.Card {
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
		figureCard("latest_removal_ms", "Latest removal deadline", byKey, "ms",
			fmt.Sprintf("%s drained, %d removed", countOf(int64(drained), "workers"), removed)),
		figureCard("total_pin_wait_ms", "Total pin wait", byKey, "ms", "time drained workers waited for peers pulling from them"),
		{Key: "pulls_staged", Label: "Pulls staged", Value: countOf(k.Staged, "pulls"),
			Note: fmt.Sprintf("%s succeeded, %s partial, %s rejected", countOf(k.Success, "pulls"), countOf(k.Partial, "pulls"),
				countOf(k.RejectedDraining+k.RejectedRemoved, "hints"))},
		figureCard("ttft_p99_ms", "TTFT p99", byKey, "ms", "p50 "+withUnit(byKey["ttft_p50_ms"].Value, "ms")),
		{Key: "requests_completed", Label: "Requests completed", Value: countOf(rep.Summary.Requests.Completed, "requests"),
			Note: countOf(rep.Summary.Requests.Killed, "requests") + " killed"},
		figureCard("worker_seconds", "Worker-seconds", byKey, "s", "run lasted "+withUnit(byKey["duration_ms"].Value, "ms")),
	}
	if k.Partial > 0 {
		cards[2].HelpTitle, cards[2].Help = "What is a partial pull?", partialNote
	}
	return cards
}

// figureCard is a card of one headline figure, rounded for the card (the exact value is its
// title).
func figureCard(key, label string, byKey map[string]sim.Figure, unit, note string) templates.Card {
	value, exact := cardValue(byKey[key].Value, unit)
	return templates.Card{Key: key, Label: label, Value: value, Exact: exact, Note: note}
}

// compareCards are the key figures of both runs with their delta (B − A).
func compareCards(cmp sim.Comparison) []templates.Card {
	keys := []string{"latest_removal_ms", "total_pin_wait_ms", "pulls_staged", "pulls_partial", "ttft_p99_ms", "worker_seconds"}
	var out []templates.Card
	for _, key := range keys {
		for _, f := range cmp.Figures {
			if f.Key != key {
				continue
			}
			c := templates.Card{Key: key, Label: f.Label, A: withUnit(f.A, f.Unit), B: withUnit(f.B, f.Unit)}
			c.Delta, c.Trend = deltaOf(f)
			if key == "pulls_partial" && ((f.A != nil && *f.A > 0) || (f.B != nil && *f.B > 0)) {
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

func onOff(b bool) string {
	if b {
		return "on"
	}
	return "off"
}

func num(v float64, unit string) string {
	if unit == "" {
		return formatNumber(v)
	}
	return formatNumber(v) + " " + unitFor(v, unit)
}

// scenarioSummary lists a scenario's inputs grouped like the form: fleet, caches, KVCR, router,
// schedule, workload.
func scenarioSummary(sc *sim.Scenario) []templates.ScenarioGroup {
	f := sc.Fleet
	item := func(label, value string) templates.ScenarioItem {
		return templates.ScenarioItem{Label: label, Value: value}
	}
	groups := []templates.ScenarioGroup{
		{Title: "Fleet", Items: []templates.ScenarioItem{
			item("Workers", num(float64(f.Workers), "workers")),
			item("Max sequences per pass", num(float64(f.MaxNumSeqs), "")),
			item("Max batched tokens", num(float64(f.MaxBatchedTokens), "tokens")),
			item("Prefill pass", fmt.Sprintf("%s ms + %s ms per 1k tokens", formatNumber(f.Timing.PrefillMS), formatNumber(f.Timing.PrefillMSPer1kTokens))),
			item("Decode pass", fmt.Sprintf("%s ms + %s ms per sequence", formatNumber(f.Timing.DecodeMS), formatNumber(f.Timing.DecodeMSPerSeq))),
			item("Seed", strconv.FormatInt(sc.Seed, 10)),
		}},
		{Title: "Caches", Items: []templates.ScenarioItem{
			item("GPU cache (G1)", num(float64(f.GPUBlocks), "blocks")),
			item("Host cache (G2)", num(float64(f.HostBlocks), "blocks")),
			item("Block size", num(float64(f.BlockSize), "tokens")),
			item("KV bytes per token", num(float64(f.BytesPerToken), "bytes")),
			item("Host ↔ GPU", fmt.Sprintf("%s GB/s in, %s GB/s out", formatNumber(f.H2DGBps), formatNumber(f.D2HGBps))),
		}},
	}
	kv := []templates.ScenarioItem{item("Peer pulls", onOff(sc.KVCR.Enabled))}
	if sc.KVCR.Enabled {
		kv = append(kv,
			item("Latency", num(sc.KVCR.LatencyMS, "ms")),
			item("Bandwidth per source", num(sc.KVCR.BandwidthGBps, "GB/s")),
			item("Reject draining sources (guard)", onOff(sc.KVCR.RejectDrainingSources)))
	}
	groups = append(groups, templates.ScenarioGroup{Title: "KVCR", Items: kv})
	groups = append(groups, templates.ScenarioGroup{Title: "Router", Items: []templates.ScenarioItem{
		item("Policy", sc.Router.Policy),
		item("Hints", onOff(sc.Router.Hints)),
		item("Prefill load scale", formatNumber(sc.Router.PrefillLoadScale)),
		item("Host hit weight", formatNumber(sc.Router.HostHitWeight)),
	}})
	var sched []templates.ScenarioItem
	for i, a := range sc.ScaleIn {
		what := ""
		if len(a.Workers) > 0 {
			what = "drain " + unitFor(float64(len(a.Workers)), "workers") + " " + idList(a.Workers)
		} else {
			what = fmt.Sprintf("drain %s chosen by %s", countOf(int64(a.Count), "workers"), a.Select)
		}
		if a.GraceMS != nil {
			what += ", grace " + num(*a.GraceMS, "ms")
		} else {
			what += ", no grace deadline"
		}
		sched = append(sched, item(fmt.Sprintf("Action %d at %s", i+1, num(a.AtMS, "ms")), what))
	}
	if len(sched) == 0 {
		sched = append(sched, item("Scale-in", "none"))
	}
	groups = append(groups, templates.ScenarioGroup{Title: "Schedule", Items: sched})
	w := sc.Workload
	wl := []templates.ScenarioItem{item("Type", w.Type)}
	switch {
	case w.Type == sim.WorkloadRequests:
		wl = append(wl, item("Scripted requests", countOf(int64(len(w.Requests)), "requests")))
	case w.Type == sim.WorkloadSessions && w.Sessions != nil:
		s := w.Sessions
		wl = append(wl,
			item("Sessions", fmt.Sprintf("%s at %s per s, %d turns each", formatNumber(float64(s.Count)), formatNumber(s.RatePerS), s.Turns)),
			item("Prompt", fmt.Sprintf("%s system prompt in %d prefix groups, %s new per turn",
				num(float64(s.SystemPromptTokens), "tokens"), s.PrefixGroups, num(float64(s.NewInputTokens), "tokens"))),
			item("Output", num(float64(s.OutputTokens), "tokens")+" per turn"),
			item("Think time", num(s.ThinkTimeMS, "ms")))
	case w.Type == sim.WorkloadTrace && w.Trace != nil:
		t := w.Trace
		src := t.Name
		if src == "" {
			src = "uploaded trace " + shortSHA(t.SHA256)
		}
		wl = append(wl, item("Trace", src),
			item("Trace block", num(float64(t.TraceBlockTokens), "tokens")),
			item("Speed-up", formatNumber(t.Speedup)+"×"))
		if t.Limit > 0 {
			wl = append(wl, item("First rows", num(float64(t.Limit), "requests")))
		}
		if t.OffsetMS != 0 {
			wl = append(wl, item("Offset", num(t.OffsetMS, "ms")))
		}
	}
	groups = append(groups, templates.ScenarioGroup{Title: "Workload", Items: wl})
	return groups
}

func shortSHA(s string) string {
	if len(s) > 12 {
		return s[:12]
	}
	return s
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
