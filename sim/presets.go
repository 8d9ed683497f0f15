package sim

import (
	"bytes"
	"embed"
)

//go:embed presets/*.json
var presetFiles embed.FS

// Preset is a ready-made scenario for the form and the command line.
type Preset struct {
	Key         string // stable, URL-safe: /?preset=KEY
	Title       string
	Description string
	JSON        []byte // the scenario, as a user would write it
	// Long is a preset that takes a while to simulate (a real-time day of 1.4 M requests, a
	// fleet of 2,048): the everyday tests leave it to SCALEIN_SLOW=1.
	Long bool
	// Pools is a preset with prefill and decode pools (docs/model.md#model-5); the web form
	// holds them in its Pools section.
	Pools bool
}

// presetCatalog orders the presets and describes them; the scenario itself is presets/KEY.json.
var presetCatalog = []struct {
	key, title, description string
	long                    bool
}{
	{
		"incident",
		"Queued hint during drain (the incident)",
		"A request queued with a hint before its source starts draining later pulls from that draining source. Compare guard on and off: with the guard, the source is removed as early as in the no-hint control.",
		false,
	},
	{
		"e2",
		"One partial pull (worked example E2)",
		"Two workers; a follow-up request is hinted to the peer that holds its prefix in host memory and pulls 8 blocks over KVCR before a short prefill (docs/model.md#worked-examples E2).",
		false,
	},
	{
		"mooncake-16to12",
		"16 → 12 workers on the Mooncake conversation trace",
		"The first 3,000 requests of the Mooncake FAST'25 conversation trace on 16 workers; at 480 s the 4 highest-id workers drain with a 30 s grace period.",
		false,
	},
	{
		"large-fleet",
		"2048 → 1792 workers, 100,000 session requests",
		"25,000 synthetic four-turn chat sessions on 2,048 workers; at 60 s the 256 least-loaded workers drain with a 30 s grace period. A test of scale: it takes a while to run.",
		true,
	},
	{
		"autoscaler-legacy",
		"An HPA without behavior",
		"What most clusters run: an HPA with no spec.behavior (Kubernetes' legacy rules) on the day in real time (24 hours, 1.4 M requests), target 8 requests per worker. It holds every scale-down for the 300 s downscale stabilisation and scales up at once, to at most max(2 × current, 4).",
		true,
	},
	{
		"autoscaler-defaults",
		"An HPA with Kubernetes' defaults (behavior: {})",
		"The same HPA with an empty behavior: Kubernetes fills its defaults (scale up at most 4 workers or 100 % per 15 s, no window; scale down 100 % per 15 s after the 300 s window), on the day in real time.",
		true,
	},
	{
		"autoscaler-day",
		"A day with an HPA (24 h in real time)",
		"Session load follows a day in real time (24 stages of an hour: a trough of 1 session/s at 04:00, a peak of 10 at 16:00; 475,000 sessions, 1.4 M requests, about 15 s of CPU to simulate) on 8 workers under an HPA with a 60 s scale-down window (behavior.scale_down.window_ms; Kubernetes' other defaults), target 8 requests per worker, 30 s cold start, 30 s grace: it drains workers as load falls and starts cold ones as it rises.",
		true,
	},
	{
		"autoscaler-hour",
		"The day in an hour: a start-up-time sweep",
		"The same day of load in one hour (24 stages of 150 s, 20,000 sessions, 60,000 requests) under the same HPA: the scenario of the start-up-time sweep, as Dynamo's planner replay runs one: scalein sweep -config sim/presets/autoscaler-hour.json -vary autoscaler.startup_ms=0,30000,60000,90000,120000,150000,180000,210000,240000,270000,300000,330000 gives the twelve replays, and shows how much a cold start costs in GPU-hours and latency.",
		false,
	},
	{
		"autoscaler-keda",
		"KEDA on num_requests_waiting",
		"The day in real time under a KEDA ScaledObject: an External metric, the sum of vllm:num_requests_waiting over the fleet, target 2 waiting requests per worker, no behavior (the legacy rules).",
		true,
	},
	{
		"autoscaler-dynamo",
		"Dynamo planner-like",
		"The evening of the day (22:00–24:00 in real time, 5.5 then 4.3 sessions/s) under a planner-like loop: KV-cache usage as the metric, Pods policies of one worker per 10 s interval each way, a 30 s window before scaling up and 60 s before scaling down, a 60 s cold start, least-loaded workers drained without a deadline.",
		false,
	},
	{
		"autoscaler-grace",
		"Grace too short",
		"The evening of the day (22:00–24:00 in real time) with long answers (512 tokens), a 30 s scale-down window and a 2 s grace: drains outlast the grace, forced removals would kill requests, and router.migration_limit 2 moves them to other workers instead (set it to 0 to see the kills).",
		false,
	},
	{
		"pd-night",
		"Prefill and decode pools: two prefill workers drained at 03:00",
		"A real-time night (02:00–04:00, 3 then 1.5 conversation sessions/s) on 4 prefill + 12 decode workers whose decode pool is nearly full (4 sequences each). At 03:00 the two highest prefill workers drain (prefill_drain wait, vLLM's heartbeat lease, 60 s grace): they hold prompts' KV until busy decode workers pull it. Try prefill_drain fixed (Dynamo's 30 s) or skip, and load_failure_policy recompute.",
		true,
	},
	{
		"pd-llmd-keda",
		"llm-d's P/D pair of ScaledObjects",
		"A real-time night (02:00–04:00, 1 then 0.5 conversation sessions/s) on 4 prefill + 8 decode workers under one KEDA ScaledObject per role, as llm-d ships them: prefill on its backlog (requests_waiting, External sum, target 2), decode on summed KV-cache usage (kv_usage, External sum, target 0.8); both with Pods policies of 1 worker per 180 s up and 1 per 300 s down after a 300 s scale-down window. Both pools shrink as the night empties; a draining prefill worker waits for its handoffs to be pulled.",
		false,
	},
	{
		"pd-dynamo-drain",
		"Dynamo's fixed 30 s prefill drain",
		"A real-time night (02:00–04:00, 2.5 then 1.5 conversation sessions/s) on 4 prefill + 4 busy decode workers (4 sequences each). At 03:00 the two highest prefill workers drain as Dynamo's planner drains one on vLLM: prefill_drain fixed, 30 s, then removed whatever they still hold. Handoffs the busy decode pool has not pulled by then fail (source_removed). Try prefill_drain wait, or load_failure_policy recompute to recompute those prompts instead.",
		false,
	},
	{
		"pd-vllm-lease",
		"vLLM before 0.22: a fixed 480 s hold",
		"The same busy night (4 prefill + 4 decode workers of 4 sequences) with vLLM's hold before 0.22: lease fixed, ttl 480 s, so a prompt's KV stays on its prefill worker until a decode worker pulls it or 480 s pass. The decode queue keeps prompts held for seconds, some for minutes; the two prefill workers drained at 03:00 (prefill_drain wait, 60 s grace) wait out the grace holding them and are forced. scalein sim -pair lease compares it with the heartbeat lease: on this night no hold waits 480 s unpulled, so the figures are the same; the old lease costs requests only when the decode queue leaves a prompt unpulled for 8 minutes.",
		false,
	},
}

// Presets returns the built-in scenarios in display order, as the form offers them: every
// preset, those with pools included (AllPresets). A preset whose file is missing is left out
// rather than failing, so the list still works while presets are being added.
func Presets() []Preset { return AllPresets() }

// AllPresets returns every built-in scenario in display order, the ones with prefill and
// decode pools included.
func AllPresets() []Preset {
	out := make([]Preset, 0, len(presetCatalog))
	for _, p := range presetCatalog {
		data, err := presetFiles.ReadFile("presets/" + p.key + ".json")
		if err != nil {
			continue
		}
		out = append(out, Preset{Key: p.key, Title: p.title, Description: p.description, JSON: data, Long: p.long,
			Pools: bytes.Contains(data, []byte(`"disaggregation"`))})
	}
	return out
}

// PresetByKey returns the preset with this key.
func PresetByKey(key string) (Preset, bool) {
	for _, p := range AllPresets() {
		if p.Key == key {
			return p, true
		}
	}
	return Preset{}, false
}
