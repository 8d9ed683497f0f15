package web

import (
	"github.com/scalein-planner/scalein/sim"
	"github.com/scalein-planner/scalein/templates"
	"github.com/scalein-planner/scalein/web/format"
)

// sloCards is the SLO attainment card of a run with an slo (none without): the share that met
// it, with the SLO beside it, so the card reads "95.8 % of requests met TTFT ≤ 3 s and TPOT ≤
// 100 ms".
func sloCards(rep *sim.Report) []templates.Card {
	s := rep.Summary.SLO
	if s == nil {
		return nil
	}
	c := templates.Card{Key: sim.HeadlineSLOAttainment, Label: "SLO attainment", Value: format.Attainment(s.Attainment),
		Note:      "of requests met " + sim.FormatSLO(s.TTFTMS, s.TPOTMS) + " (" + format.SLODetail(s) + ")",
		HelpTitle: "How is it judged?",
		Help: "A request meets the SLO when its time to first token and its time per output token after the first, " +
			"(done − first token) ÷ (output tokens − 1), are both within the limits; a one-token answer has no TPOT to judge, " +
			"and a killed request never meets it. The SLO judges the run: it changes nothing in the simulation."}
	if s.Requests == 0 {
		c.Note = format.SLOSentence(s)
	}
	if full := format.WithUnit(s.Attainment, sim.UnitShare); full != c.Value && s.Attainment != nil {
		c.Exact = full
	}
	return []templates.Card{c}
}

// noteCompareSLO says beside the compare page's SLO card which SLO each run was judged by: one
// phrase when both runs have the same, else each run's ("none" for a run without an slo).
func noteCompareSLO(cards []templates.Card, a, b *sim.Report) {
	phrase := func(r *sim.Report) string {
		if r.Summary.SLO == nil {
			return "no SLO"
		}
		return sim.FormatSLO(r.Summary.SLO.TTFTMS, r.Summary.SLO.TPOTMS)
	}
	for i := range cards {
		if cards[i].Key != sim.HeadlineSLOAttainment {
			continue
		}
		if pa, pb := phrase(a), phrase(b); pa == pb {
			cards[i].Note = "of requests met " + pa
		} else {
			cards[i].Note = "A judged by " + pa + "; B by " + pb
		}
	}
}
