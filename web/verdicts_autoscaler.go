package web

import (
	"fmt"
	"math"
	"strings"

	"github.com/scalein-planner/scalein/sim"
	"github.com/scalein-planner/scalein/web/format"
)

// autoscalerCardKeys are the compare page's cards for the autoscaler pair (issue 17): what the
// autoscaler saved, what it cost in latency, and what its forced removals did.
var autoscalerCardKeys = []string{sim.HeadlineGPUHours, sim.HeadlineWorkersPeak, sim.HeadlineTTFTP99MS,
	sim.HeadlineE2EP99MS, sim.HeadlineRequestsKilled, sim.HeadlineRequestsMigrated}

// withArticle is a fixed side's label in a sentence: "a fixed fleet of 5 workers", but "fixed
// pools of 8 prefill and 16 decode workers".
func withArticle(fixed string) string {
	if strings.HasPrefix(fixed, "fixed pools") {
		return fixed
	}
	return "a " + fixed
}

// autoscalerPairVerdicts says in words what the autoscaler (A) saved against the fixed fleet
// (B, named by fixed: "fixed fleet of 5 workers, the autoscaler's maximum") and what it cost:
// GPU-hours saved, absolute and as a share of the fixed fleet's, the change in TTFT p99 and
// end-to-end p99, and the requests killed and migrated on each side.
func autoscalerPairVerdicts(a, b *sim.Report, fixed string) []string {
	var out []string
	ga, gb := a.Summary.GPUHours, b.Summary.GPUHours
	switch {
	case gb > 0 && ga < gb:
		out = append(out, fmt.Sprintf("The autoscaler saved %s against %s (%s of its %s): it used %s.",
			format.GPUHours(gb-ga), withArticle(fixed), format.Share((gb-ga)/gb), format.GPUHours(gb), format.GPUHours(ga)))
	case gb > 0:
		out = append(out, fmt.Sprintf("The autoscaler saved no GPU-hours: it used %s, %s more than %s (%s, %s).",
			format.GPUHours(ga), format.GPUHours(ga-gb), withArticle(fixed), format.GPUHours(gb), format.Share((ga-gb)/gb)))
	}
	latency := func(name string, va, vb *float64) string {
		if va == nil || vb == nil {
			return name + " is not known on both sides (a run without completed requests)"
		}
		pa, pb := *va, *vb
		if math.Abs(pa-pb) < 5e-7 {
			return fmt.Sprintf("%s is the same on both sides (%s)", name, format.ShortMS(pa))
		}
		d := pa - pb
		word := "higher"
		if d < 0 {
			word = "lower"
		}
		s := fmt.Sprintf("%s is %s %s with the autoscaler (%s against %s", name, format.ShortMS(math.Abs(d)), word,
			format.ShortMS(pa), format.ShortMS(pb))
		if pb > 0 {
			s += fmt.Sprintf(", %+.0f %%", 100*d/pb)
		}
		return s + ")"
	}
	out = append(out, latency("TTFT p99", a.Summary.TTFTMS.P99, b.Summary.TTFTMS.P99)+"; "+
		latency("end-to-end p99", a.Summary.E2EMS.P99, b.Summary.E2EMS.P99)+".")
	ra, rb := a.Summary.Requests, b.Summary.Requests
	out = append(out, fmt.Sprintf("Forced removals killed %s and migration moved %s with the autoscaler; the fixed fleet killed %s and moved %s.",
		format.Count(ra.Killed, "requests"), format.Count(ra.Migrated, "requests"),
		format.Count(rb.Killed, "requests"), format.Count(rb.Migrated, "requests")))
	return out
}

// settingsPairVerdicts compares two autoscaler runs (the plan's "Compare with your settings":
// A yours, B the recommended ones) on what the settings decide: GPU-hours, the p99s and the
// requests killed.
func settingsPairVerdicts(a, b *sim.Report, labelB string) []string {
	var out []string
	ga, gb := a.Summary.GPUHours, b.Summary.GPUHours
	switch {
	case ga > 0 && gb < ga:
		out = append(out, fmt.Sprintf("With %s the fleet uses %s, %s less than A's %s (%s saved).",
			labelB, format.GPUHours(gb), format.GPUHours(ga-gb), format.GPUHours(ga), format.Share((ga-gb)/ga)))
	case ga > 0 && gb > ga:
		out = append(out, fmt.Sprintf("With %s the fleet uses %s, %s more than A's %s (%s more).",
			labelB, format.GPUHours(gb), format.GPUHours(gb-ga), format.GPUHours(ga), format.Share((gb-ga)/ga)))
	default:
		out = append(out, fmt.Sprintf("Both use %s.", format.GPUHours(ga)))
	}
	p99 := func(name string, va, vb *float64) string {
		if va == nil || vb == nil {
			return name + " is not known on both sides"
		}
		return fmt.Sprintf("%s %s in A, %s in B", name, format.Duration(*va), format.Duration(*vb))
	}
	out = append(out, format.Capitalize(p99("TTFT p99", a.Summary.TTFTMS.P99, b.Summary.TTFTMS.P99))+"; "+
		p99("end-to-end p99", a.Summary.E2EMS.P99, b.Summary.E2EMS.P99)+".")
	ra, rb := a.Summary.Requests, b.Summary.Requests
	out = append(out, fmt.Sprintf("Requests killed: %s in A, %s in B; migrated: %s in A, %s in B.",
		format.Number(float64(ra.Killed)), format.Number(float64(rb.Killed)), format.Number(float64(ra.Migrated)), format.Number(float64(rb.Migrated))))
	return out
}
