package form

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/scalein-planner/scalein/sim"
)

// Model 3 in the form (docs/model.md#model-3): the scale-in section is a choice between the scripted
// schedule and an autoscaler, the sessions workload takes rate stages, and the router takes a
// migration limit.

// ScaleInModePath is the choice of the scale-in section. It is the form's own field, not a
// scenario path: the scenario has either a scale_in schedule or an autoscaler.
const ScaleInModePath = "scale_in_mode"

// The two scale-in modes.
const (
	ModeSchedule   = "schedule"
	ModeAutoscaler = "autoscaler"
)

var scaleInModeField = fieldSpec{Path: ScaleInModePath, Label: "Scale-in", Kind: kindSelect, Start: ModeSchedule,
	Help: "A scripted schedule drains the workers you name at the instants you give; an autoscaler drains and starts workers from a metric, as a Kubernetes HPA or Dynamo's planner does. Only the chosen one is used.",
	Options: [][2]string{
		{ModeSchedule, "Scripted schedule (the actions below)"},
		{ModeAutoscaler, "Autoscaler (HPA-style, the fields below)"},
	}}

// RateStagesPath is the sessions' rate stages, one stage per line in the form.
const RateStagesPath = "workload.sessions.rate_stages"

var rateStagesField = fieldSpec{Path: RateStagesPath, Label: "Rate stages", Kind: kindStages,
	Help: "Load that falls and rises: one stage per line, duration_ms and rate_per_s separated by a comma (\"30000, 4\"). Replaces the arrival rate above; no session starts after the last stage. Empty = the constant rate. The day helper below fills it."}

// MigrationLimitPath is the router's migration limit.
const MigrationLimitPath = "router.migration_limit"

var migrationLimitField = fieldSpec{Path: MigrationLimitPath, Label: "Migration limit", Unit: "moves", Kind: kindInt,
	Help: "How often a request a forced removal would kill is routed to another worker instead, recomputing what it had (Dynamo's DYN_MIGRATION_LIMIT); 0 = off: such requests are killed."}

var gpusPerWorkerField = fieldSpec{Path: "fleet.gpus_per_worker", Label: "GPUs per worker", Unit: "GPUs", Kind: kindInt,
	Help: "Turns worker-seconds into GPU-hours (a tensor-parallel worker holds several); changes nothing else."}

// autoscalerGroup lists the autoscaler's fields with the HPA field each maps to (docs/model.md#autoscaler);
// the behavior has its own editor (behavior.go).
var autoscalerGroup = fieldGroup{Legend: "Autoscaler",
	Note: "The Kubernetes HPA controller, rule for rule: every interval it reads the metric of the ready workers, recommends ceil(usage ÷ target × ready) workers (none within the tolerance), holds the recommendation through the stabilisation windows and the behavior's policies, then drains (cancelling starting workers first) or starts workers. Starting workers hold GPUs but take no requests until their cold start ends. Every decision is recorded on the run page.",
	Fields: []fieldSpec{
		{Path: "autoscaler.interval_ms", Label: "Interval", Unit: "ms", Kind: kindFloat, Help: "Time between decisions (the HPA controller's sync period, 15 s)."},
		{Path: "autoscaler.metric", Label: "Metric", Kind: kindSelect,
			Help: "The per-worker value the HPA scales on; kv_usage is a fraction: set a target such as 0.7. offered_rate is the load itself (requests per second, with an external source): the target is one worker's capacity.",
			Options: [][2]string{
				{sim.MetricRequestsPerWorker, "requests_per_worker (vllm:num_requests_running + num_requests_waiting)"},
				{sim.MetricRequestsWaiting, "requests_waiting (vllm:num_requests_waiting)"},
				{sim.MetricRequestsRunning, "requests_running (vllm:num_requests_running)"},
				{sim.MetricKVUsage, "kv_usage (vllm:gpu_cache_usage_perc, a fraction)"},
				{sim.MetricOfferedRate, "offered_rate (the workload's request rate, known from the scenario; external only)"},
			}},
		{Path: SourcePath, Label: "Metric source", Kind: kindSelect,
			Help:    "pods: a Pods metric averaged over the ready workers (a Prometheus adapter); external: one value over the fleet, as a KEDA ScaledObject creates, compared with target × current workers.",
			Options: [][2]string{{sim.SourcePods, "pods (Pods metric, AverageValue)"}, {sim.SourceExternal, "external (KEDA / External metric)"}}},
		{Path: AggregatePath, Label: "Aggregate", Kind: kindSelect,
			Help:    "Only with an external source: how the workers' values make the one metric (a PromQL sum, avg or max). With avg KEDA divides an average by the replicas: the ratio falls as the fleet grows, whatever the load.",
			Options: [][2]string{{sim.AggregateSum, "sum"}, {sim.AggregateAvg, "avg"}, {sim.AggregateMax, "max"}}},
		{Path: TargetPath, Label: "Target per worker", Kind: kindFloat, Help: "target.averageValue: the metric value wanted per worker, a multiple of 0.001; for kv_usage a fraction such as 0.7."},
		{Path: "autoscaler.tolerance", Label: "Tolerance", Kind: kindFloat, Help: "No change while usage ÷ target is within 1 ± tolerance (--horizontal-pod-autoscaler-tolerance)."},
		{Path: "autoscaler.metric_delay_ms", Label: "Metric delay", Unit: "ms", Kind: kindFloat, Help: "A decision sees the sample taken this long before it (scrape and pipeline lag); below the interval."},
		{Path: "autoscaler.min_workers", Label: "Min workers", Unit: "workers", Kind: kindInt, Help: "minReplicas: bound on active + starting workers."},
		{Path: "autoscaler.max_workers", Label: "Max workers", Unit: "workers", Kind: kindInt, Help: "maxReplicas; empty = the fleet's workers."},
		{Path: DownscaleWindowPath, Label: "Downscale stabilisation", Unit: "ms", Kind: kindFloat, Help: "--horizontal-pod-autoscaler-downscale-stabilization (in ms): the window without a behavior, and a behavior's default scale-down window."},
		{Path: "autoscaler.select", Label: "Drain", Kind: kindSelect, Help: "Which active workers it drains: highest_id (the newest, as a ReplicaSet deletes), least_loaded or least_cached.",
			Options: [][2]string{{sim.SelectHighestID, sim.SelectHighestID}, {sim.SelectLeastLoaded, sim.SelectLeastLoaded}, {sim.SelectLeastCached, sim.SelectLeastCached}}},
		{Path: "autoscaler.grace_ms", Label: "Grace", Unit: "ms", Kind: kindNullableFloat, Help: "terminationGracePeriodSeconds (in ms): a drain still running then is forced and its requests killed (or migrated); none = wait for the drain."},
		{Path: "autoscaler.startup_ms", Label: "Cold start", Unit: "ms", Kind: kindFloat, Help: "From starting a worker to its readiness: scheduling, image pull, model load."},
		{Path: "autoscaler.pending_ms", Label: "Pending", Unit: "ms", Kind: kindFloat, Help: "The first part of the cold start a new worker is Pending (scheduling, image pull); then Running without a sample until ready. At most the cold start."},
		{Path: "autoscaler.reuse_draining", Label: "Reuse draining workers", Kind: kindBool, Help: "On scale-up, make draining workers active again (with their caches) before starting cold ones. No autoscaler does this today."},
	}}

// Autoscaler paths the form treats specially.
const (
	SourcePath          = "autoscaler.source"
	AggregatePath       = "autoscaler.aggregate"
	TargetPath          = "autoscaler.target"
	MetricPath          = "autoscaler.metric"
	DownscaleWindowPath = "autoscaler.downscale_window_ms"
)

// shorthandGroup is the model-3 shorthand (docs/model.md#autoscaler "Fields"). A scenario's shorthand is
// converted to the behavior it stands for when it prefills the form (shorthandAsBehavior); these
// fields are shown only for a shorthand the behavior cannot hold exactly (a window of a
// fraction of a ms, an interval that is not a whole ms), so that such a scenario still submits
// to the same controller.
var shorthandGroup = fieldGroup{Legend: "Model-3 shorthand",
	Note: "This scenario writes its behavior in model 3's fields, which a behavior cannot hold exactly. They stand for a behavior (and are refused together with one): clear them to use the behavior editor.",
	Fields: []fieldSpec{
		{Path: "autoscaler.scale_down_window_ms", Label: "Scale-down window", Unit: "ms", Kind: kindFloat, Help: "behavior.scale_down.window_ms."},
		{Path: "autoscaler.scale_up_window_ms", Label: "Scale-up window", Unit: "ms", Kind: kindFloat, Help: "behavior.scale_up.window_ms."},
		{Path: "autoscaler.max_remove_per_tick", Label: "Max removed per decision", Unit: "workers", Kind: kindNullableInt, Help: "A scale-down Pods policy per interval; none = 100 % per interval."},
		{Path: "autoscaler.max_add_per_tick", Label: "Max added per decision", Unit: "workers", Kind: kindNullableInt, Help: "A scale-up Pods policy per interval; none = no limit."},
	}}

// model3Fields calls fn for the single fields model 3 adds outside the general groups.
func model3Fields(fn func(fieldSpec)) {
	fn(scaleInModeField)
	for _, fs := range autoscalerGroup.Fields {
		fn(fs)
	}
	for _, fs := range shorthandGroup.Fields {
		fn(fs)
	}
	fn(behaviorModeField)
	for _, fs := range behaviorFields() {
		fn(fs)
	}
}

// autoscalerDefaults are the texts of the autoscaler's defaults, from the simulator, and of the
// other model-3 fields without a value in the default scenario.
func autoscalerDefaults(defaults map[string]string) {
	sc, err := sim.Parse([]byte(`{"autoscaler": {}, "workload": {"type": "sessions"}}`), sim.ParseEnv{})
	if err != nil {
		panic("form: the default autoscaler does not parse: " + err.Error())
	}
	tree := scenarioTree(sc)
	for _, fs := range autoscalerGroup.Fields {
		if v, ok := lookup(tree, fs.Path); ok {
			defaults[fs.Path] = fieldText(fs, v)
		}
	}
	// max_workers defaults to fleet.workers: an empty field follows the fleet.
	delete(defaults, "autoscaler.max_workers")
	// The aggregate's default is filled in only with an external source.
	defaults[AggregatePath] = sim.AggregateSum
	defaults[RateStagesPath] = ""
}

// autoscalerJSON puts the autoscaler's fields into the scenario when the mode is autoscaler.
func (f *Form) autoscalerJSON(root map[string]any, put func(fs fieldSpec, name, text string, into map[string]any, key string)) bool {
	if strings.TrimSpace(f.values[ScaleInModePath]) != ModeAutoscaler {
		return false
	}
	if strings.TrimSpace(f.values[PoolsModePath]) == PoolsPD {
		// An autoscaler per pool; the fleet's autoscaler fields stay in the form, unsent.
		f.poolAutoscalersJSON(root, put)
		return true
	}
	a := map[string]any{}
	for _, fs := range autoscalerGroup.Fields {
		if fs.Path == AggregatePath && strings.TrimSpace(f.values[SourcePath]) != sim.SourceExternal {
			continue // refused with a pods source; the choice stays in the form
		}
		_, key := mapAt(map[string]any{}, fs.Path)
		put(fs, fs.Path, f.values[fs.Path], a, key)
	}
	for _, fs := range shorthandGroup.Fields {
		_, key := mapAt(map[string]any{}, fs.Path)
		put(fs, fs.Path, f.values[fs.Path], a, key)
	}
	f.behaviorJSON(a, put)
	root["autoscaler"] = a
	return true
}

// convertStages reads one stage per line, "duration_ms, rate_per_s".
func convertStages(text string) (any, string) {
	var stages []map[string]float64
	for i, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		parts := strings.FieldsFunc(line, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' || r == ';' })
		if len(parts) != 2 {
			return nil, fmt.Sprintf("line %d: write a stage as duration_ms, rate_per_s, like 30000, 4 (got %q)", i+1, line)
		}
		var vals [2]float64
		for j, p := range parts {
			x, err := strconv.ParseFloat(strings.ReplaceAll(p, "_", ""), 64)
			if err != nil || math.IsNaN(x) || math.IsInf(x, 0) {
				return nil, fmt.Sprintf("line %d: %q is not a number", i+1, p)
			}
			vals[j] = x
		}
		stages = append(stages, map[string]float64{"duration_ms": vals[0], "rate_per_s": vals[1]})
	}
	if len(stages) == 0 {
		return nil, ""
	}
	return stages, ""
}

// stagesText shows rate stages one per line.
func stagesText(v any) string {
	list, _ := v.([]any)
	lines := make([]string, 0, len(list))
	for _, el := range list {
		m, _ := el.(map[string]any)
		lines = append(lines, jsonText(m["duration_ms"])+", "+jsonText(m["rate_per_s"]))
	}
	return strings.Join(lines, "\n")
}

// The day helper's inputs: form fields that are not part of the scenario.
const (
	DayTroughField  = "day_trough_per_s"
	DayPeakField    = "day_peak_per_s"
	DayStageMSField = "day_stage_ms"
	DayStagesField  = "day_stages"
	// DayStageMS is the helper's default stage: an hour, so 24 stages are a day in real time and
	// the autoscaler's windows, intervals and cold starts keep their meaning.
	DayStageMS = 3_600_000
)

// SessionsCountPath is the sessions' count: the load ends when it is used up, whatever the stages.
const SessionsCountPath = "workload.sessions.count"

// SessionsForStages is the session count that lets arrivals last through every stage: the
// expected arrivals Σ rate × duration plus four standard deviations of the Poisson count (a
// day cut short by chance about once in 30,000 runs), rounded up.
func SessionsForStages(stages []sim.RateStage) int {
	e := ExpectedSessions(stages)
	return int(math.Ceil(e + 4*math.Sqrt(e) + 4))
}

// ExpectedSessions is the expected number of first-turn arrivals over the stages.
func ExpectedSessions(stages []sim.RateStage) float64 {
	e := 0.0
	for _, st := range stages {
		e += st.RatePerS * st.DurationMS / 1000
	}
	return e
}

// CountEndsAtMS is when, on average, count sessions have arrived: before the stages end the
// count cuts the load short; ok is false when the count lasts through every stage.
func CountEndsAtMS(stages []sim.RateStage, count int) (atMS float64, ok bool) {
	left, t := float64(count), 0.0
	for _, st := range stages {
		n := st.RatePerS * st.DurationMS / 1000
		if n >= left && st.RatePerS > 0 {
			return t + left/st.RatePerS*1000, true
		}
		left -= n
		t += st.DurationMS
	}
	return 0, false
}

// DayStages builds a day-shaped load: n stages of stageMS each, the rate following a cosine
// from trough (at a sixth of the day: 04:00) to peak (half a day later: 16:00).
func DayStages(trough, peak, stageMS float64, n int) []sim.RateStage {
	out := make([]sim.RateStage, n)
	for i := range out {
		x := (1 - math.Cos(2*math.Pi*(float64(i)-float64(n)/6)/float64(n))) / 2
		out[i] = sim.RateStage{DurationMS: stageMS, RatePerS: math.Round((trough+(peak-trough)*x)*100) / 100}
	}
	return out
}

// FillDay replaces the rate stages by a day-shaped curve from the helper's fields (the
// no-JavaScript "Fill with a day"); a helper value that is not a number keeps its default.
func (f *Form) FillDay() {
	num := func(name string, def float64) float64 {
		x, err := strconv.ParseFloat(strings.TrimSpace(f.values[name]), 64)
		if err != nil || math.IsNaN(x) || math.IsInf(x, 0) || x < 0 {
			return def
		}
		return x
	}
	n := int(math.Min(math.Max(num(DayStagesField, 24), 1), sim.MaxRateStages))
	stages := DayStages(num(DayTroughField, 1), num(DayPeakField, 10), math.Max(num(DayStageMSField, DayStageMS), 1), n)
	// The count ends the load when it is used up: set it so arrivals last the whole day.
	f.values[SessionsCountPath] = strconv.Itoa(SessionsForStages(stages))
	f.SetRateStages(stages)
}

// SetRateStages replaces the rate stages and makes the workload sessions (the count is the
// caller's: FillDay sets it for a day, Load from Prometheus raises it to cover the stages).
func (f *Form) SetRateStages(stages []sim.RateStage) {
	b, _ := json.Marshal(stages)
	var v any
	_ = json.Unmarshal(b, &v)
	f.values[RateStagesPath] = stagesText(v)
	f.values[WorkloadTypePath] = sim.WorkloadSessions
}
