package sim

import (
	"math"
	"strconv"
)

// Parsing and validation of model 3's fields (docs/model.md#model-3): rate stages, the autoscaler,
// router.migration_limit and fleet.gpus_per_worker.

// Limits of model 3's fields.
const (
	MaxRateStages = 1000
	// MaxStagesMS is the longest the rate stages may last in all, in ms; MaxStageRatePerS the
	// highest rate a stage may have.
	MaxStagesMS       = maxTimeMS
	MaxStageRatePerS  = maxRateLike
	maxGPUsPerWorker  = 1 << 20
	maxMigrationLimit = 1_000_000
)

// Autoscaler defaults (docs/model.md#model-3 table); max_workers defaults to fleet.workers.
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

// decodeAutoscaler reads the autoscaler object with its defaults (docs/model.md#model-3 table, amended by
// #autoscaler). Rules that relate its fields to each other or to the rest of the scenario are in
// validateAutoscaler.
func decodeAutoscaler(errs *fieldErrors, n *jsonNode, fleetWorkers int) *Autoscaler {
	return decodeAutoscalerAt(errs, "autoscaler", n, fleetWorkers)
}

// decodeAutoscalerAt reads an autoscaler object at path ("autoscaler", or a pool's
// "autoscaler.prefill" / "autoscaler.decode", docs/model.md#model-5).
func decodeAutoscalerAt(errs *fieldErrors, path string, n *jsonNode, fleetWorkers int) *Autoscaler {
	v := openObject(errs, path, n)
	a := &Autoscaler{
		IntervalMS:        v.number("interval_ms", DefaultAutoscalerIntervalMS, floatRange{minExclusive: true, max: maxTimeMS}),
		Metric:            v.choice("metric", MetricRequestsPerWorker, MetricRequestsPerWorker, MetricRequestsWaiting, MetricRequestsRunning, MetricKVUsage, MetricHandoffsHeld, MetricOfferedRate),
		Source:            v.choice("source", SourcePods, SourcePods, SourceExternal),
		Target:            v.number("target", DefaultAutoscalerTarget, floatRange{minExclusive: true, max: maxRateLike}),
		Tolerance:         v.number("tolerance", DefaultAutoscalerTolerance, floatRange{max: maxRateLike}),
		MetricDelayMS:     v.number("metric_delay_ms", 0, floatRange{max: maxTimeMS}),
		MinWorkers:        int(v.integer("min_workers", DefaultAutoscalerMinWorkers, intRange{1, MaxWorkers})),
		MaxWorkers:        int(v.integer("max_workers", int64(fleetWorkers), intRange{1, MaxWorkers})),
		DownscaleWindowMS: v.number("downscale_window_ms", DefaultScaleDownWindowMS, floatRange{max: maxTimeMS}),
		Select:            v.choice("select", SelectHighestID, SelectHighestID, SelectLeastLoaded, SelectLeastCached),
		StartupMS:         v.number("startup_ms", DefaultAutoscalerStartupMS, floatRange{max: maxTimeMS}),
		PendingMS:         v.number("pending_ms", 0, floatRange{max: maxTimeMS}),
		ReuseDraining:     v.boolean("reuse_draining", false),
	}
	if v.has("aggregate") {
		a.Aggregate = v.choice("aggregate", AggregateSum, AggregateSum, AggregateAvg, AggregateMax)
		if a.Source != SourceExternal {
			errs.add(joinPath(path, "aggregate"), "only with source external: a Pods metric is averaged over the pods by the controller; remove aggregate or set source to \"external\"")
		}
	} else if a.Source == SourceExternal {
		a.Aggregate = AggregateSum
	}
	// Model-3 shorthand: present (null included) or absent, never defaulted.
	a.ScaleDownWindowMS = shorthandWindow(v, "scale_down_window_ms")
	a.ScaleUpWindowMS = shorthandWindow(v, "scale_up_window_ms")
	a.MaxRemovePerTick = shorthandPerTick(v, "max_remove_per_tick")
	a.MaxAddPerTick = shorthandPerTick(v, "max_add_per_tick")
	if b := v.get("behavior"); b != nil && b.kind != kindNull {
		a.Behavior = decodeBehavior(errs, joinPath(path, "behavior"), b)
		if a.Behavior != nil {
			for _, k := range []string{"scale_down_window_ms", "scale_up_window_ms", "max_remove_per_tick", "max_add_per_tick"} {
				if v.has(k) {
					errs.add(joinPath(path, "behavior"), "not together with the shorthand field %s: write the window or the limit inside behavior (scale_down / scale_up), or remove behavior", k)
				}
			}
		}
	}
	if g := v.get("grace_ms"); g == nil {
		d := float64(DefaultAutoscalerGraceMS)
		a.GraceMS = &d
	} else {
		a.GraceMS = v.optionalNumber("grace_ms", floatRange{max: maxTimeMS})
	}
	v.finish()
	return a
}

// shorthandWindow reads scale_{down,up}_window_ms: present (≥ 0) or absent (nil).
func shorthandWindow(v *objectView, key string) *float64 {
	n := v.get(key)
	if n == nil {
		return nil
	}
	if n.kind == kindNull {
		v.errs.add(v.child(key), "must be a number of ms ≥ 0, or be left out (null is not a window)")
		return nil
	}
	w := v.number(key, 0, floatRange{max: maxTimeMS})
	return &w
}

// shorthandPerTick reads max_{remove,add}_per_tick: absent, null (no limit) or a count ≥ 1.
func shorthandPerTick(v *objectView, key string) PerTick {
	n := v.get(key)
	if n == nil {
		return PerTick{}
	}
	return PerTickPtr(optionalIntPtr(v.optionalInteger(key, intRange{1, MaxWorkers})))
}

// Bounds of a behavior, as Kubernetes validates them (in ms where Kubernetes counts seconds).
const (
	MaxBehaviorWindowMS = 3_600_000
	MaxPolicyPeriodMS   = 1_800_000
	MaxPolicies         = 10
)

// decodeBehavior reads autoscaler.behavior (docs/model.md#autoscaler): each direction optional, every field
// optional; defaults are filled when the controller is built, not here, so a stored scenario
// keeps what was written.
func decodeBehavior(errs *fieldErrors, path string, n *jsonNode) *Behavior {
	if n.kind != kindObject {
		errs.add(path, "must be an object like {\"scale_down\": {\"window_ms\": 300000}} (or null for no behavior), not %s", n.kind)
		return nil
	}
	v := openObject(errs, path, n)
	b := &Behavior{}
	for _, dir := range []struct {
		key string
		dst **ScalingRules
	}{{"scale_up", &b.ScaleUp}, {"scale_down", &b.ScaleDown}} {
		m := v.get(dir.key)
		if m == nil || m.kind == kindNull {
			continue
		}
		*dir.dst = decodeRules(errs, joinPath(path, dir.key), m)
	}
	v.finish()
	return b
}

func decodeRules(errs *fieldErrors, path string, n *jsonNode) *ScalingRules {
	v := openObject(errs, path, n)
	if v.node == nil {
		return nil
	}
	r := &ScalingRules{}
	if w := v.get("window_ms"); w != nil && w.kind != kindNull {
		if got, ok := strictInteger(errs, v.child("window_ms"), w, 0, MaxBehaviorWindowMS); ok {
			r.WindowMS = &got
		}
	}
	if sn := v.get("select"); sn != nil && sn.kind != kindNull {
		got := v.str("select", "")
		switch got {
		case SelectPolicyMax, SelectPolicyMin, SelectPolicyDisabled:
			r.Select = got
		default:
			if sn.kind == kindString {
				errs.add(v.child("select"), "must be max, min or disabled (got %q): Kubernetes' selectPolicy Max, Min or Disabled", got)
			}
		}
	}
	if t := v.get("tolerance"); t != nil && t.kind != kindNull {
		r.Tolerance = v.optionalNumber("tolerance", floatRange{max: maxRateLike})
	}
	if pn := v.get("policies"); pn != nil && pn.kind != kindNull {
		pp := v.child("policies")
		if pn.kind != kindArray || len(pn.elems) == 0 || len(pn.elems) > MaxPolicies {
			errs.add(pp, `must be a list of 1 to %d policies like [{"type": "pods", "value": 1, "period_ms": 60000}] (or be left out for Kubernetes' defaults)`, MaxPolicies)
		} else {
			for i, e := range pn.elems {
				ep := indexPath(pp, i)
				ev := openObject(errs, ep, e)
				if ev.node == nil {
					if e.kind == kindNull {
						errs.add(ep, `must be a policy like {"type": "pods", "value": 1, "period_ms": 60000}, not null`)
					}
					continue
				}
				pol := ScalingPolicy{Type: ev.choice("type", "", PolicyTypePods, PolicyTypePercent)}
				if !ev.has("type") {
					errs.add(joinPath(ep, "type"), `required: "pods" (workers per period) or "percent" (percent of the workers per period)`)
				}
				if vn := ev.get("value"); vn == nil {
					errs.add(joinPath(ep, "value"), "required: an integer ≥ 1")
				} else if got, ok := strictInteger(errs, joinPath(ep, "value"), vn, 1, math.MaxInt32); ok {
					pol.Value = int(got)
				}
				if pn := ev.get("period_ms"); pn == nil {
					errs.add(joinPath(ep, "period_ms"), "required: an integer in [1, %d] (ms; Kubernetes' periodSeconds × 1000)", MaxPolicyPeriodMS)
				} else if got, ok := strictInteger(errs, joinPath(ep, "period_ms"), pn, 1, MaxPolicyPeriodMS); ok {
					pol.PeriodMS = got
				}
				ev.finish()
				r.Policies = append(r.Policies, pol)
			}
		}
	}
	v.finish()
	return r
}

// strictInteger reads an integer in [lo, hi] with one message for every way it can be wrong;
// with a bound as large as an int32's the message names only the lower one, unless the value
// is above it.
func strictInteger(errs *fieldErrors, path string, n *jsonNode, lo, hi int64) (int64, bool) {
	if n.kind == kindNumber {
		f, err := strconv.ParseFloat(n.text, 64) // 1e400 reads as +Inf, with an error
		if err == nil && f == math.Trunc(f) && f >= float64(lo) && f <= float64(hi) {
			return int64(f), true
		}
		if f > float64(hi) {
			errs.add(path, "must be an integer in [%d, %d]%s", lo, hi, gotSuffix(n))
			return 0, false
		}
	}
	if hi >= math.MaxInt32 {
		errs.add(path, "must be an integer >= %d%s", lo, gotSuffix(n))
	} else {
		errs.add(path, "must be an integer in [%d, %d]%s", lo, hi, gotSuffix(n))
	}
	return 0, false
}

func optionalIntPtr(p *int64) *int {
	if p == nil {
		return nil
	}
	i := int(*p)
	return &i
}

// validateAutoscaler checks the rules of docs/model.md#model-3 that relate several fields.
func validateAutoscaler(errs *fieldErrors, s *Scenario) {
	if s.Disaggregation != nil {
		validatePoolAutoscalers(errs, s)
		return
	}
	a := s.Autoscaler
	if a == nil {
		return
	}
	if len(s.ScaleIn) > 0 {
		errs.add("autoscaler", "a scenario has either an autoscaler or a scale_in schedule, not both: remove scale_in (or set it to []) or remove autoscaler")
	}
	if a.Metric == MetricHandoffsHeld {
		errs.add("autoscaler.metric", "handoffs_held counts a prefill worker's outstanding KV handoffs: it needs disaggregation (prefill and decode pools) and an autoscaler per pool, {\"prefill\": {…}, \"decode\": {…}}")
	}
	validateAutoscalerAt(errs, "autoscaler", a)
}

// validateAutoscalerAt checks the rules between one autoscaler's own fields.
func validateAutoscalerAt(errs *fieldErrors, path string, a *Autoscaler) {
	if a.MinWorkers > a.MaxWorkers {
		errs.add(joinPath(path, "min_workers"), "must be ≤ %s.max_workers (%d) (got %d)", path, a.MaxWorkers, a.MinWorkers)
	}
	if milli := a.Target * 1000; math.Abs(milli-math.Round(milli)) > 1e-9 || math.Round(milli) < 1 {
		errs.add(joinPath(path, "target"), "must be a multiple of 0.001 (the controller reads targets in milli-units; got %s)", fmtNum(a.Target))
	} else if a.Metric == MetricKVUsage && a.Target > 1 {
		errs.add(joinPath(path, "target"), "a kv_usage target is a fraction: 70 %% is 0.7 (got %s)", fmtNum(a.Target))
	}
	if a.Metric == MetricOfferedRate && a.Source != SourceExternal {
		errs.add("autoscaler.source", "offered_rate is one value for the whole workload, an External metric: set source to \"external\" (got %q)", a.Source)
	}
	if a.PendingMS > a.StartupMS {
		errs.add(joinPath(path, "pending_ms"), "must be <= %s.startup_ms (%s): a worker is Pending for the first part of its start-up (got %s)", path, fmtNum(a.StartupMS), fmtNum(a.PendingMS))
	}
	if !(a.MetricDelayMS < a.IntervalMS) {
		errs.add(joinPath(path, "metric_delay_ms"), "must be < %s.interval_ms (%s): a decision sees a sample taken since the previous one (got %s)", path, fmtNum(a.IntervalMS), fmtNum(a.MetricDelayMS))
	}
}
