package sim

// The keys of the headline figures (Headline), as reports, sweeps' CSV and plans name them.
const (
	HeadlineLatestRemovalMS         = "latest_removal_ms"
	HeadlineTotalDrainMS            = "total_drain_ms"
	HeadlineTotalPinWaitMS          = "total_pin_wait_ms"
	HeadlinePullsStaged             = "pulls_staged"
	HeadlinePullsSuccess            = "pulls_success"
	HeadlinePullsPartial            = "pulls_partial"
	HeadlinePullsMiss               = "pulls_miss"
	HeadlinePullsRejectedDraining   = "pulls_rejected_draining"
	HeadlinePullsRejectedRemoved    = "pulls_rejected_removed"
	HeadlinePullsStagedFromDraining = "pulls_staged_from_draining"
	HeadlinePullsAborted            = "pulls_aborted"
	HeadlineTTFTP50MS               = "ttft_p50_ms"
	HeadlineTTFTP99MS               = "ttft_p99_ms"
	HeadlineE2EP99MS                = "e2e_p99_ms"
	HeadlineRequestsCompleted       = "requests_completed"
	HeadlineRequestsKilled          = "requests_killed"
	HeadlineWorkerSeconds           = "worker_seconds"
	HeadlineDurationMS              = "duration_ms"

	// The figures an autoscaler run adds (AutoscalerFigures).
	HeadlineGPUHours         = "gpu_hours"
	HeadlineWorkersPeak      = "workers_peak"
	HeadlineWorkersFinal     = "workers_final"
	HeadlineRequestsMigrated = "requests_migrated"
)

// Figure is one headline number of a report; Value is nil where it does not apply (no worker
// drained ⇒ no latest removal deadline).
type Figure struct {
	Key   string   `json:"key"`
	Label string   `json:"label"`
	Unit  string   `json:"unit"`
	Value *float64 `json:"value"`
}

// Headline picks the figures an SRE reads first from a report, in display order.
func Headline(r *Report) []Figure {
	if r == nil {
		r = &Report{}
	}
	var latest, drain, pinWait *float64
	for _, w := range r.Workers {
		if w.RemovedAtMS != nil && w.MarkedAtMS != nil {
			latest = maxPtr(latest, *w.RemovedAtMS)
		}
		if w.DrainMS != nil {
			drain = addPtr(drain, *w.DrainMS)
		}
		if w.PinWaitMS != nil {
			pinWait = addPtr(pinWait, *w.PinWaitMS)
		}
	}
	k := r.KVCR
	count := func(n int64) *float64 { f := float64(n); return &f }
	value := func(f float64) *float64 { return &f }
	return []Figure{
		{HeadlineLatestRemovalMS, "Latest removal deadline", "ms", latest},
		{HeadlineTotalDrainMS, "Total drain time", "ms", drain},
		{HeadlineTotalPinWaitMS, "Total pin wait", "ms", pinWait},
		{HeadlinePullsStaged, "Pulls staged", "pulls", count(k.Staged)},
		{HeadlinePullsSuccess, "Pulls succeeded", "pulls", count(k.Success)},
		{HeadlinePullsPartial, "Pulls partial", "pulls", count(k.Partial)},
		{HeadlinePullsMiss, "Pulls missed", "pulls", count(k.Miss)},
		{HeadlinePullsRejectedDraining, "Pulls rejected (source draining)", "pulls", count(k.RejectedDraining)},
		{HeadlinePullsRejectedRemoved, "Pulls rejected (source removed)", "pulls", count(k.RejectedRemoved)},
		{HeadlinePullsStagedFromDraining, "Pulls staged from a draining source", "pulls", count(k.StagedFromDraining)},
		{HeadlinePullsAborted, "Pulls aborted", "pulls", count(k.Aborted)},
		{HeadlineTTFTP50MS, "TTFT p50", "ms", r.Summary.TTFTMS.P50},
		{HeadlineTTFTP99MS, "TTFT p99", "ms", r.Summary.TTFTMS.P99},
		{HeadlineE2EP99MS, "End-to-end p99", "ms", r.Summary.E2EMS.P99},
		{HeadlineRequestsCompleted, "Requests completed", "requests", count(r.Summary.Requests.Completed)},
		{HeadlineRequestsKilled, "Requests killed", "requests", count(r.Summary.Requests.Killed)},
		{HeadlineWorkerSeconds, "Worker-seconds", "s", value(r.Summary.WorkerSeconds)},
		{HeadlineDurationMS, "Duration", "ms", value(r.Summary.DurationMS)},
	}
}

func maxPtr(p *float64, v float64) *float64 {
	if p == nil || v > *p {
		return &v
	}
	return p
}

func addPtr(p *float64, v float64) *float64 {
	if p == nil {
		return &v
	}
	sum := *p + v
	return &sum
}

// FigureValue is the value of the figure with key among figs (nil when absent or not
// applicable).
func FigureValue(figs []Figure, key string) *float64 {
	for _, f := range figs {
		if f.Key == key {
			return f.Value
		}
	}
	return nil
}
