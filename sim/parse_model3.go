package sim

// Parsing and validation of model 3's fields (SPEC §3.15): rate stages, the autoscaler,
// router.migration_limit and fleet.gpus_per_worker.

// Limits of model 3's fields.
const (
	MaxRateStages     = 1000
	maxGPUsPerWorker  = 1 << 20
	maxMigrationLimit = 1_000_000
)

// Autoscaler defaults (SPEC §3.15 table); max_workers defaults to fleet.workers.
const (
	DefaultAutoscalerIntervalMS  = 15000
	DefaultAutoscalerTarget      = 32
	DefaultAutoscalerTolerance   = 0.1
	DefaultScaleDownWindowMS     = 300000
	DefaultAutoscalerGraceMS     = 30000
	DefaultAutoscalerStartupMS   = 120000
	DefaultAutoscalerMinWorkers  = 1
	DefaultKVUsageTargetFraction = 0.7 // what a form proposes when the metric becomes kv_usage
)

func decodeRateStages(errs *fieldErrors, path string, n *jsonNode) []RateStage {
	if n.kind != kindArray {
		errs.add(path, `must be a list of stages like [{"duration_ms": 600000, "rate_per_s": 4}], not %s`, n.kind)
		return nil
	}
	if len(n.elems) == 0 {
		errs.add(path, `must list at least one stage like {"duration_ms": 600000, "rate_per_s": 4}, or be left out to use rate_per_s`)
		return nil
	}
	if len(n.elems) > MaxRateStages {
		errs.add(path, "has %d stages; the limit is %d", len(n.elems), MaxRateStages)
		return nil
	}
	stages := make([]RateStage, 0, len(n.elems))
	total := 0.0
	for i, e := range n.elems {
		p := indexPath(path, i)
		v := openObject(errs, p, e)
		st := RateStage{
			DurationMS: v.number("duration_ms", 0, floatRange{minExclusive: true, max: maxTimeMS}),
			RatePerS:   v.number("rate_per_s", 0, floatRange{max: maxRateLike}),
		}
		if v.node != nil {
			if !v.has("duration_ms") {
				errs.add(joinPath(p, "duration_ms"), "required: how long the stage lasts, in ms (> 0)")
			}
			if !v.has("rate_per_s") {
				errs.add(joinPath(p, "rate_per_s"), "required: the session arrival rate of the stage, per second (≥ 0)")
			}
		}
		total += st.DurationMS
		v.finish()
		stages = append(stages, st)
	}
	if total > maxTimeMS {
		errs.add(path, "the stages last %s ms in all; the limit is %s ms", fmtNum(total), fmtNum(maxTimeMS))
	}
	return stages
}

// decodeAutoscaler reads the autoscaler object with its defaults (SPEC §3.15 table). Rules that
// relate its fields to each other or to the rest of the scenario are in validateAutoscaler.
func decodeAutoscaler(errs *fieldErrors, n *jsonNode, fleetWorkers int) *Autoscaler {
	v := openObject(errs, "autoscaler", n)
	a := &Autoscaler{
		IntervalMS:        v.number("interval_ms", DefaultAutoscalerIntervalMS, floatRange{minExclusive: true, max: maxTimeMS}),
		Metric:            v.choice("metric", MetricRequestsPerWorker, MetricRequestsPerWorker, MetricKVUsage),
		Target:            v.number("target", DefaultAutoscalerTarget, floatRange{minExclusive: true, max: maxRateLike}),
		Tolerance:         v.number("tolerance", DefaultAutoscalerTolerance, floatRange{max: maxRateLike}),
		MetricDelayMS:     v.number("metric_delay_ms", 0, floatRange{max: maxTimeMS}),
		MinWorkers:        int(v.integer("min_workers", DefaultAutoscalerMinWorkers, intRange{1, MaxWorkers})),
		MaxWorkers:        int(v.integer("max_workers", int64(fleetWorkers), intRange{1, MaxWorkers})),
		ScaleDownWindowMS: v.number("scale_down_window_ms", DefaultScaleDownWindowMS, floatRange{max: maxTimeMS}),
		ScaleUpWindowMS:   v.number("scale_up_window_ms", 0, floatRange{max: maxTimeMS}),
		Select:            v.choice("select", SelectHighestID, SelectHighestID, SelectLeastLoaded, SelectLeastCached),
		StartupMS:         v.number("startup_ms", DefaultAutoscalerStartupMS, floatRange{max: maxTimeMS}),
		ReuseDraining:     v.boolean("reuse_draining", false),
	}
	a.MaxRemovePerTick = optionalIntPtr(v.optionalInteger("max_remove_per_tick", intRange{1, MaxWorkers}))
	a.MaxAddPerTick = optionalIntPtr(v.optionalInteger("max_add_per_tick", intRange{1, MaxWorkers}))
	if g := v.get("grace_ms"); g == nil {
		d := float64(DefaultAutoscalerGraceMS)
		a.GraceMS = &d
	} else {
		a.GraceMS = v.optionalNumber("grace_ms", floatRange{max: maxTimeMS})
	}
	v.finish()
	return a
}

func optionalIntPtr(p *int64) *int {
	if p == nil {
		return nil
	}
	i := int(*p)
	return &i
}

// validateAutoscaler checks the rules of SPEC §3.15 that relate several fields.
func validateAutoscaler(errs *fieldErrors, s *Scenario) {
	a := s.Autoscaler
	if a == nil {
		return
	}
	if len(s.ScaleIn) > 0 {
		errs.add("autoscaler", "a scenario has either an autoscaler or a scale_in schedule, not both: remove scale_in (or set it to []) or remove autoscaler")
	}
	if a.MinWorkers > a.MaxWorkers {
		errs.add("autoscaler.min_workers", "must be ≤ autoscaler.max_workers (%d) (got %d)", a.MaxWorkers, a.MinWorkers)
	}
	if !(a.MetricDelayMS < a.IntervalMS) {
		errs.add("autoscaler.metric_delay_ms", "must be < autoscaler.interval_ms (%s): a decision sees a sample taken since the previous one (got %s)", fmtNum(a.IntervalMS), fmtNum(a.MetricDelayMS))
	}
}
