package web

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/scalein-planner/scalein/sim"
	"github.com/scalein-planner/scalein/templates"
	"github.com/scalein-planner/scalein/web/charts"
	"github.com/scalein-planner/scalein/web/format"
)

// poolsView builds the section of a run with prefill and decode pools (docs/model.md#model-5)
// from its report summary; full is the report with its request rows when the run kept them
// (report.per_request), else nil, and d the scenario's disaggregation when the scenario
// parsed. It returns nil for an aggregated run.
func poolsView(rep, full *sim.Report, d *sim.Disaggregation, clock format.Clock) *templates.PoolsView {
	ds := rep.Summary.Disaggregation
	if ds == nil {
		return nil
	}
	v := &templates.PoolsView{
		Cards:    handoffCards(ds),
		Verdicts: poolVerdicts(rep, d, clock),
		Drained:  drainedPrefillTable(rep, clock),
	}
	if c, ok := charts.PoolFleet(rep); ok {
		v.Chart = charts.BoundTables([]templates.Chart{c})
	}
	v.TTFTSplit, v.TTFTNote = ttftSplit(full)
	return v
}

// failedHandoffs is the handoffs that failed, over the five causes.
func failedHandoffs(f sim.HandoffFailures) int64 {
	return f.LeaseExpired + f.SourceRemoved + f.SourceSkipped + f.Forced + f.DecodeRemoved
}

// failureCauses names the causes with a count, in the report's order ("" when none failed).
func failureCauses(f sim.HandoffFailures) string {
	var parts []string
	for _, c := range []struct {
		name string
		n    int64
	}{
		{"lease expired", f.LeaseExpired}, {"prefill worker removed", f.SourceRemoved},
		{"prefill worker skipped (drain skip)", f.SourceSkipped}, {"forced removal", f.Forced},
		{"decode worker removed", f.DecodeRemoved},
	} {
		if c.n > 0 {
			parts = append(parts, c.name+" "+format.Number(float64(c.n)))
		}
	}
	return strings.Join(parts, ", ")
}

func handoffCards(ds *sim.DisaggregationSummary) []templates.Card {
	failed := failedHandoffs(ds.Failed)
	failedNote := "none failed"
	if failed > 0 {
		failedNote = failureCauses(ds.Failed)
	}
	transfer := templates.Card{Key: "handoff-transfer", Label: "Handoff transfer p99", Value: format.Dash, Note: "no handoff landed"}
	if p99 := ds.TransferMS.P99; p99 != nil {
		transfer.Value = format.DurationOpt(p99)
		transfer.Exact = format.Number(*p99) + " ms"
		transfer.Note = "p50 " + format.DurationOpt(ds.TransferMS.P50) + ", max " + format.DurationOpt(ds.TransferMS.Max) + " (from the pull's admission on a decode worker to its landing)"
	}
	return []templates.Card{
		{Key: "handoffs", Label: "Handoffs made", Value: format.Count(ds.Handoffs, "handoffs"),
			Note: format.Number(float64(ds.Landed)) + " landed, " + format.Number(float64(failed)) + " failed"},
		{Key: "handoffs-failed", Label: "Handoffs failed", Value: format.Count(failed, "handoffs"),
			Note: failedNote + "; " + format.Count(ds.Recomputed, "prompts") + " recomputed on a decode worker"},
		{Key: "held-block-seconds", Label: "Held block-seconds", Value: format.Sig3(ds.HeldBlockSeconds) + " block-s",
			Exact:     format.Number(ds.HeldBlockSeconds) + " block-s",
			Note:      format.Sig3(ds.HeldBlockSecondsDraining) + " block-s on draining prefill workers",
			HelpTitle: "What is a held block?",
			Help:      "A prefill worker keeps a prompt's KV blocks from the end of its prefill until a decode worker has read them (or the handoff fails). A block held for one second is one block-second; those held on a draining worker are GPU memory only the handoffs keep."},
		transfer,
		{Key: "pool-worker-seconds", Label: "Worker time by pool", Value: "prefill " + workerTime(ds.WorkerSeconds.Prefill),
			Exact: format.Number(ds.WorkerSeconds.Prefill) + " s", Note: "decode " + workerTime(ds.WorkerSeconds.Decode)},
	}
}

// workerName names a worker of a run with pools by its role and id ("prefill-3").
func workerName(w sim.WorkerRow) string {
	if w.Role == "" {
		return strconv.Itoa(w.ID)
	}
	return w.Role + "-" + strconv.Itoa(w.ID)
}

// reportNumber reads a report's optional number.
func reportNumber(o *sim.OptNumber) (float64, bool) {
	if o == nil {
		return 0, false
	}
	return o.Value()
}

// drainedHeld is a drained prefill worker's average held blocks over its drain (its
// held_block_seconds_draining over the time from its mark to its removal); ok is false
// while it was not removed or its drain took no time.
func drainedHeld(w sim.WorkerRow) (blocks, seconds float64, ok bool) {
	hbs, has := reportNumber(w.HeldBlockSecondsDraining)
	if !has || w.MarkedAtMS == nil || w.RemovedAtMS == nil || *w.RemovedAtMS <= *w.MarkedAtMS {
		return 0, 0, false
	}
	seconds = (*w.RemovedAtMS - *w.MarkedAtMS) / 1000
	return hbs / seconds, seconds, true
}

func drainedPrefillTable(rep *sim.Report, clock format.Clock) templates.DataTable {
	t := templates.DataTable{
		Caption: "Drained prefill workers: the removal deadline, how long each waited after its own work ended for decode workers to read its handoffs (pin wait), and the blocks its handoffs held while it drained",
		Columns: []templates.Column{
			{Label: "Worker"}, {Label: clock.Column("Marked"), Num: true}, {Label: clock.Column("Removal deadline"), Num: true},
			{Label: "Waited for handoffs", Num: true}, {Label: "Drain", Num: true},
			{Label: "Held while draining (block-s)", Num: true}, {Label: "Average held blocks", Num: true}, {Label: "Forced"},
		},
	}
	for _, w := range rep.Workers {
		if w.Role != sim.RolePrefill || w.MarkedAtMS == nil {
			continue
		}
		held, avg := format.Dash, format.Dash
		if hbs, ok := reportNumber(w.HeldBlockSecondsDraining); ok {
			held = format.Number(hbs)
		}
		if blocks, _, ok := drainedHeld(w); ok {
			avg = format.Sig3(blocks)
		}
		forced := "no"
		if w.Forced {
			forced = "yes"
		}
		removal := clock.AtOpt(w.RemovedAtMS)
		if w.RemovedAtMS == nil {
			removal = "not removed (" + w.FinalState + ")"
		}
		t.Rows = append(t.Rows, []string{workerName(w), clock.AtOpt(w.MarkedAtMS), removal,
			format.DurationOpt(w.PinWaitMS), format.DurationOpt(w.DrainMS), held, avg, forced})
	}
	return t
}

// poolVerdicts says in words what the drains of prefill workers cost and what the handoffs did.
func poolVerdicts(rep *sim.Report, d *sim.Disaggregation, clock format.Clock) []string {
	ds := rep.Summary.Disaggregation
	var out []string
	drained := 0
	for _, w := range rep.Workers {
		if w.Role != sim.RolePrefill || w.MarkedAtMS == nil {
			continue
		}
		drained++
		blocks, seconds, ok := drainedHeld(w)
		if !ok {
			if w.RemovedAtMS == nil {
				out = append(out, fmt.Sprintf("Prefill worker %s was marked draining at %s and not removed before the run ended (%s).", workerName(w), clock.AtOpt(w.MarkedAtMS), w.FinalState))
			}
			continue
		}
		s := fmt.Sprintf("Draining %s held %s blocks on average over its %s drain (%s block-seconds) until its removal at %s",
			workerName(w), format.Sig3(blocks), format.Duration(seconds*1000), format.Sig3(blocks*seconds), clock.AtOpt(w.RemovedAtMS))
		if w.Forced {
			s += ", when it was removed by force"
		}
		s += "."
		if w.PinWaitMS != nil && *w.PinWaitMS > 0 {
			s += " Its own work ended at " + clock.AtOpt(w.LastWorkMS) + "; it then waited " + format.Duration(*w.PinWaitMS) + " for decode workers to read its handoffs"
			if mx := ds.TransferMS.Max; mx != nil && *w.PinWaitMS > *mx {
				// A hold lasts from the handoff (at or before the worker's last work) to its
				// landing, and a transfer takes at most the maximum: the rest was spent waiting
				// for a decode worker's admission.
				s += fmt.Sprintf(", and since no transfer took longer than %s, at least one handoff waited %s or more in a decode worker's queue because the decode pool was full (no free slot or blocks)",
					format.Duration(*mx), format.Duration(*w.PinWaitMS-*mx))
			}
			s += "."
		}
		out = append(out, s)
	}
	if drained == 0 {
		out = append(out, "No prefill worker was drained: every handoff was read from an active prefill worker.")
	}
	if failed := failedHandoffs(ds.Failed); failed > 0 {
		s := fmt.Sprintf("%s of %s failed (%s)", format.Count(failed, "handoffs"), format.Number(float64(ds.Handoffs)), failureCauses(ds.Failed))
		switch {
		case ds.Recomputed > 0:
			s += fmt.Sprintf("; %s recomputed on a decode worker (load_failure_policy recompute)", format.Count(ds.Recomputed, "prompts"))
		case d != nil && d.LoadFailurePolicy == sim.LoadFailureFail:
			if f := rep.Summary.Requests.Failed; f != nil {
				s += fmt.Sprintf("; under load_failure_policy fail (vLLM's default) %s failed", format.Count(*f, "requests"))
			}
		}
		out = append(out, s+".")
	} else if ds.Handoffs > 0 {
		out = append(out, fmt.Sprintf("%s landed on decode workers; none failed.", format.Capitalize(format.Plural(ds.Handoffs, "the one handoff", "all "+format.Count(ds.Handoffs, "handoffs")))))
	}
	return out
}

// ttftSplit splits the mean TTFT of the requests whose last handoff landed into the wait in a
// decode worker's queue (handoff_wait_ms), the transfer (transfer_ms) and the rest (prefill on
// the prefill worker with its queue, and the first decode pass). Means add up, so the three
// parts sum to the mean TTFT. Without request rows it says why there is no split.
func ttftSplit(full *sim.Report) (templates.DataTable, string) {
	if full == nil || len(full.Requests) == 0 {
		return templates.DataTable{}, "This run's report has no request rows (report.per_request is off), so its TTFT cannot be split into prefill, decode queue and transfer; the transfer figures above cover every handoff. Run it again with per-request rows (report.per_request) for the split."
	}
	var n int
	var ttft, wait, transfer float64
	for _, r := range full.Requests {
		tr, ok := reportNumber(r.TransferMS)
		hw, okw := reportNumber(r.HandoffWaitMS)
		if r.FirstTokenMS == nil || !ok || !okw {
			continue
		}
		n++
		ttft += *r.FirstTokenMS - r.ArrivalMS
		wait += hw
		transfer += tr
	}
	if n == 0 {
		return templates.DataTable{}, "No request's handoff landed and emitted a token, so there is no TTFT to split."
	}
	mean := func(v float64) float64 { return v / float64(n) }
	share := func(v float64) string {
		if ttft == 0 {
			return format.Dash
		}
		return format.Number(v/ttft*100) + " %"
	}
	t := templates.DataTable{
		Caption: "Mean TTFT of the requests whose handoff landed, in its parts",
		Columns: []templates.Column{{Label: "Part"}, {Label: "Mean", Num: true}, {Label: "Share", Num: true}},
	}
	rest := ttft - wait - transfer
	t.Rows = [][]string{
		{"Prefill (queue and pass on the prefill worker) and the first decode pass", format.Duration(mean(rest)), share(rest)},
		{"Decode queue (handoff made to its admission on a decode worker)", format.Duration(mean(wait)), share(wait)},
		{"Transfer (admission to landing)", format.Duration(mean(transfer)), share(transfer)},
		{"TTFT", format.Duration(mean(ttft)), share(ttft)},
	}
	return t, "Over " + format.Count(int64(n), "requests") + " whose last handoff landed and that emitted a token."
}

// poolDrainCards adapts the drain cards of a run with pools: no KVCR pull is made there, so the
// pulls card goes, and a drained worker's pin wait is its wait for decode workers to read its
// handoffs.
func poolDrainCards(cards []templates.Card) []templates.Card {
	out := make([]templates.Card, 0, len(cards))
	for _, c := range cards {
		switch c.Key {
		case sim.HeadlinePullsStaged:
			continue
		case sim.HeadlineTotalPinWaitMS:
			c.Note = "time drained prefill workers waited for decode workers to read their handoffs"
		}
		out = append(out, c)
	}
	return out
}
