package format

import (
	"fmt"

	"github.com/scalein-planner/scalein/sim"
)

// Attainment prints an SLO attainment as a percentage with one decimal that never rounds a
// miss away: 99.96 % reads "> 99.9 %", not "100 %", and 0.04 % reads "< 0.1 %"; a dash for nil.
func Attainment(v *float64) string {
	if v == nil {
		return Dash
	}
	s := Share(*v)
	switch {
	case *v < 1 && s == "100 %":
		return "> 99.9 %"
	case *v > 0 && s == "0 %":
		return "< 0.1 %"
	}
	return s
}

// SLOSentence says what share of a run's requests met its SLO, with the SLO beside it: "95.8 %
// of requests met TTFT ≤ 3 s and TPOT ≤ 100 ms". Empty without an slo.
func SLOSentence(s *sim.SLOSummary) string {
	if s == nil {
		return ""
	}
	limits := sim.FormatSLO(s.TTFTMS, s.TPOTMS)
	if s.Requests == 0 {
		return "No request arrived to judge against " + limits
	}
	return fmt.Sprintf("%s of requests met %s", Attainment(s.Attainment), limits)
}

// SLODetail is the counts behind the attainment: "115 of 120 requests; 2 killed".
func SLODetail(s *sim.SLOSummary) string {
	if s == nil {
		return ""
	}
	d := fmt.Sprintf("%s of %s", Number(float64(s.Met)), Count(s.Requests, "requests"))
	if s.Killed > 0 {
		d += "; " + Number(float64(s.Killed)) + " killed (a killed request misses)"
	}
	return d
}
