package web

import (
	"fmt"
	"math"
	"strconv"

	"github.com/scalein-planner/scalein/sim"
	"github.com/scalein-planner/scalein/web/format"
)

// Verdicts put a report's main findings in words. The rules are documented in docs/verdicts.md;
// each rule reads only the report (and, on the compare page, the scenario diff), so the same
// reports always give the same sentences.

// msEqual says two report times are the same instant (they are whole nanoseconds).
func msEqual(a, b float64) bool { return math.Abs(a-b) < 5e-7 }

// drainedWorkers returns the drained workers of a report in id order.
func drainedWorkers(rep *sim.Report) []sim.WorkerRow {
	var out []sim.WorkerRow
	for _, w := range rep.Workers {
		if w.MarkedAtMS != nil {
			out = append(out, w)
		}
	}
	return out
}

func valueOr0(v *float64) float64 {
	if v == nil {
		return 0
	}
	return *v
}

// runVerdicts are the sentences at the top of a run page (rules R1–R6 of docs/verdicts.md).
func runVerdicts(rep *sim.Report, guardOn bool) []string {
	var out []string
	drained := drainedWorkers(rep)
	// R1: nothing drained.
	if len(drained) == 0 {
		out = append(out, "No worker was drained: the scenario has no scale-in action that found an active worker, so there is no removal to plan.")
	} else {
		// R2: the latest removal and what made it.
		var last *sim.WorkerRow
		stillDraining := 0
		for i, w := range drained {
			if w.RemovedAtMS == nil {
				stillDraining++
				continue
			}
			if last == nil || *w.RemovedAtMS > *last.RemovedAtMS {
				last = &drained[i]
			}
		}
		if last != nil {
			s := fmt.Sprintf("The last drained worker to go, worker %d, is removed at %s, %s after it was marked draining",
				last.ID, format.ShortMS(*last.RemovedAtMS), format.ShortMS(valueOr0(last.DrainMS)))
			if valueOr0(last.DrainMS) == 0 {
				s = fmt.Sprintf("The last drained worker to go, worker %d, is removed at %s", last.ID, format.ShortMS(*last.RemovedAtMS))
			}
			switch pin := valueOr0(last.PinWaitMS); {
			case last.Forced:
				s += fmt.Sprintf(": it reached its grace deadline and was removed by force, killing %s.", format.Count(last.RequestsKilled, "requests"))
			case valueOr0(last.DrainMS) == 0:
				s += ": it had no request left to finish and no peer pulling from it, so it went the moment it was marked."
			case pin > 0:
				s += fmt.Sprintf(": its own requests were done at %s, then it waited %s for peers pulling from it (pin wait).",
					format.ShortMS(valueOr0(last.LastWorkMS)), format.ShortMS(pin))
			default:
				s += ": its own requests decide it; no peer was still pulling from it."
			}
			out = append(out, s)
		}
		// R3: pin wait across the drained workers.
		var pinned int64
		var total float64
		var longest *sim.WorkerRow
		for i, w := range drained {
			if p := valueOr0(w.PinWaitMS); p > 0 {
				pinned++
				total += p
				if longest == nil || p > valueOr0(longest.PinWaitMS) {
					longest = &drained[i]
				}
			}
		}
		if pinned == 0 && last != nil {
			out = append(out, "No drained worker waited for peers: each was removed as soon as its own work ended.")
		} else if pinned > 0 {
			out = append(out, fmt.Sprintf("%s of %s waited for peers pulling from %s after %s own work (%s in all); the longest wait was worker %d's, %s, and it served %s.",
				format.Capitalize(format.NumberWord(pinned)), format.Count(int64(len(drained)), "drained workers"), format.Plural(pinned, "it", "them"), format.Plural(pinned, "its", "their"),
				format.ShortMS(total), longest.ID, format.ShortMS(valueOr0(longest.PinWaitMS)), format.Count(longest.PullsServed, "pulls")))
		}
		// R4: forced removals and workers never removed.
		var forced, killed int64
		for _, w := range drained {
			if w.Forced {
				forced++
				killed += w.RequestsKilled
			}
		}
		if forced > 0 {
			out = append(out, fmt.Sprintf("%s reached %s grace deadline and %s removed by force, killing %s.",
				format.Capitalize(format.Count(forced, "workers")), format.Plural(forced, "its", "their"), format.Plural(forced, "was", "were"), format.Count(killed, "requests")))
		}
		if stillDraining > 0 {
			out = append(out, fmt.Sprintf("%s still draining when the run ended: %s removal deadline lies beyond the simulated traffic.",
				format.Capitalize(format.Count(int64(stillDraining), "workers"))+" "+format.Plural(int64(stillDraining), "was", "were"), format.Plural(int64(stillDraining), "its", "their")))
		}
	}
	// R5: the guard.
	k := rep.KVCR
	switch {
	case k.StagedFromDraining > 0:
		out = append(out, fmt.Sprintf("%s staged from a draining source (the guard kvcr.reject_draining_sources is off): such pulls keep their source alive after its own work.",
			format.Capitalize(format.Count(k.StagedFromDraining, "pulls"))+" "+format.Plural(k.StagedFromDraining, "was", "were")))
	case guardOn && k.RejectedDraining > 0:
		out = append(out, fmt.Sprintf("The guard turned down %s whose source was draining; %s recomputed or used local cache instead of pinning the source.",
			format.Count(k.RejectedDraining, "hints"), format.Plural(k.RejectedDraining, "that request", "those requests")))
	}
	// R6: partial pulls.
	if k.Partial > 0 {
		s := fmt.Sprintf("%s of %s %s partial", format.Capitalize(format.NumberWord(k.Partial)), format.Count(k.Staged, "staged pulls"), format.Plural(k.Partial, "was", "were"))
		if k.Success == 0 {
			s = fmt.Sprintf("All %s %s partial, none succeeded", format.Count(k.Staged, "staged pulls"), format.Plural(k.Staged, "was", "were"))
			if k.Staged == 1 {
				s = "The one staged pull was partial"
			}
		}
		out = append(out, s+": a follow-up turn that extends a cached prefix is partial by definition, since its newest blocks exist on no worker yet.")
	}
	return out
}

// fieldWords names scenario fields in sentences; others are named by their path.
var fieldWords = map[string]string{
	"kvcr.bandwidth_gbps":          "the bandwidth",
	"kvcr.latency_ms":              "the KVCR latency",
	"fleet.workers":                "the workers",
	"fleet.gpu_blocks":             "the GPU cache",
	"fleet.host_blocks":            "the host cache",
	"fleet.max_num_seqs":           "the sequences per pass",
	"fleet.max_batched_tokens":     "the batched tokens per pass",
	"workload.sessions.count":      "the sessions",
	"workload.sessions.rate_per_s": "the session rate",
}

// changePhrase says what B changes relative to A, for the start of a sentence ("With the guard
// off", "4× the bandwidth", "With fleet.workers at 8 instead of 16").
func changePhrase(diffs []sim.FieldDiff, labelB string) string {
	onlyToggles := len(diffs) > 0
	for _, d := range diffs {
		if d.Path != "router.hints" && d.Path != "kvcr.reject_draining_sources" {
			onlyToggles = false
		}
	}
	switch {
	case len(diffs) == 0:
		return "With the same scenario"
	case onlyToggles:
		switch labelB {
		case "no hints":
			return "Without hints"
		case "hinted":
			return "With hints"
		}
		return "With the " + labelB
	case len(diffs) > 1:
		return fmt.Sprintf("With these %d changes", len(diffs))
	}
	d := diffs[0]
	a, errA := parseFloat(d.A)
	b, errB := parseFloat(d.B)
	if errA == nil && errB == nil && a > 0 && b > 0 {
		name, ok := fieldWords[d.Path]
		if ok {
			if r := b / a; r >= 2 && math.Abs(r-math.Round(r)) < 1e-9 {
				return fmt.Sprintf("%s× %s", format.Number(math.Round(r)), name)
			}
			if r := a / b; r >= 2 && math.Abs(r-math.Round(r)) < 1e-9 {
				return fmt.Sprintf("1/%s of %s", format.Number(math.Round(r)), name)
			}
		}
	}
	return fmt.Sprintf("With %s at %s instead of %s", d.Path, orNone(d.B), orNone(d.A))
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

func parseFloat(s string) (float64, error) {
	return strconv.ParseFloat(s, 64)
}

// compareVerdicts are the sentences at the top of a compare page (rules C1–C5 of
// docs/verdicts.md): what B's change does to the removal deadlines, pulls and TTFT.
func compareVerdicts(cmp sim.Comparison, a, b *sim.Report, labelB string) []string {
	phrase := changePhrase(cmp.Diffs, labelB)
	fig := func(key string) sim.FigureDelta {
		for _, f := range cmp.Figures {
			if f.Key == key {
				return f
			}
		}
		return sim.FigureDelta{}
	}
	var out []string

	// C1: the latest removal deadline.
	latest := fig(sim.HeadlineLatestRemovalMS)
	switch {
	case latest.A == nil && latest.B == nil:
		out = append(out, phrase+", still no drained worker is removed: there is no removal deadline to compare.")
	case latest.A == nil || latest.B == nil:
		out = append(out, fmt.Sprintf("%s, the latest removal deadline is %s in A and %s in B (— where no drained worker was removed).",
			phrase, format.ReadableOpt(latest.A, "ms"), format.ReadableOpt(latest.B, "ms")))
	case msEqual(*latest.A, *latest.B):
		s := fmt.Sprintf("%s did not move the latest removal deadline (%s)", phrase, format.ShortMS(*latest.A))
		pinA, pinB := valueOr0(fig(sim.HeadlineTotalPinWaitMS).A), valueOr0(fig(sim.HeadlineTotalPinWaitMS).B)
		if pinA == 0 && pinB == 0 {
			s += ": the drained workers' own work dominates it."
		} else {
			s += "."
		}
		out = append(out, s)
	default:
		d := *latest.B - *latest.A
		out = append(out, fmt.Sprintf("%s, the latest removal deadline moves %s %s (%s → %s).",
			phrase, format.ShortMS(math.Abs(d)), laterEarlier(d), format.Short(*latest.A), format.ShortMS(*latest.B)))
	}

	// C2: the worker whose removal moved most, and why.
	byID := map[int]sim.WorkerRow{}
	for _, w := range a.Workers {
		byID[w.ID] = w
	}
	var best *sim.WorkerRow
	var bestA sim.WorkerRow
	bestDelta := 0.0
	for i, wb := range b.Workers {
		wa, ok := byID[wb.ID]
		if !ok || wa.RemovedAtMS == nil || wb.RemovedAtMS == nil {
			continue
		}
		if d := *wb.RemovedAtMS - *wa.RemovedAtMS; !msEqual(d, 0) && math.Abs(d) > math.Abs(bestDelta) {
			best, bestA, bestDelta = &b.Workers[i], wa, d
		}
	}
	if best != nil {
		s := fmt.Sprintf("%s, worker %d is removed %s %s (%s → %s)", phrase, best.ID, format.ShortMS(math.Abs(bestDelta)),
			laterEarlier(bestDelta), format.Short(*bestA.RemovedAtMS), format.ShortMS(*best.RemovedAtMS))
		pinA, pinB := valueOr0(bestA.PinWaitMS), valueOr0(best.PinWaitMS)
		extra := best.PullsServed - bestA.PullsServed
		switch {
		case pinB > pinA && extra > 0 && b.KVCR.StagedFromDraining > a.KVCR.StagedFromDraining:
			s += fmt.Sprintf(": it waited %s for %s staged from it while it was draining.", format.ShortMS(pinB-pinA), format.NumberWord(extra)+" "+format.Unit(float64(extra), "pulls"))
		case pinB > pinA:
			s += fmt.Sprintf(": it waited %s longer for peers pulling from it (pin wait %s → %s).", format.ShortMS(pinB-pinA), format.Short(pinA), format.ShortMS(pinB))
		case pinB < pinA:
			s += fmt.Sprintf(": its pin wait shrinks from %s to %s.", format.ShortMS(pinA), format.ShortMS(pinB))
		default:
			s += ": its own work ends at a different time."
		}
		out = append(out, s)
	}

	// C3: pulls from draining sources and rejections.
	ka, kb := a.KVCR, b.KVCR
	if ka.StagedFromDraining != kb.StagedFromDraining {
		out = append(out, fmt.Sprintf("Pulls staged from a draining source: %d in A, %d in B.", ka.StagedFromDraining, kb.StagedFromDraining))
	}
	if ka.Staged != kb.Staged || ka.Partial != kb.Partial || ka.Success != kb.Success {
		n := func(v int64) string { return format.Number(float64(v)) }
		out = append(out, fmt.Sprintf("Pulls staged: %s in A (%s succeeded, %s partial), %s in B (%s succeeded, %s partial).",
			n(ka.Staged), n(ka.Success), n(ka.Partial), n(kb.Staged), n(kb.Success), n(kb.Partial)))
	}

	// C4: TTFT p99 (changes under 1 % are called unchanged).
	p99 := fig(sim.HeadlineTTFTP99MS)
	if p99.A != nil && p99.B != nil {
		switch {
		case p99.DeltaPct != nil && math.Abs(*p99.DeltaPct) >= 1:
			out = append(out, fmt.Sprintf("TTFT p99 %s by %.0f %% (%s → %s).", risesFalls(*p99.DeltaPct), math.Abs(*p99.DeltaPct),
				format.Short(*p99.A), format.ShortMS(*p99.B)))
		default:
			out = append(out, fmt.Sprintf("TTFT p99 is unchanged within 1 %% (%s).", format.ShortMS(*p99.B)))
		}
	}

	// C5: killed requests.
	ra, rb := a.Summary.Requests.Killed, b.Summary.Requests.Killed
	if ra != rb {
		out = append(out, fmt.Sprintf("Requests killed by forced removals: %d in A, %d in B.", ra, rb))
	}
	return out
}

func laterEarlier(d float64) string {
	if d > 0 {
		return "later"
	}
	return "earlier"
}

func risesFalls(pct float64) string {
	if pct > 0 {
		return "rises"
	}
	return "falls"
}
