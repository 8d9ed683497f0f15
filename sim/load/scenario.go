package load

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/scalein-planner/scalein/sim"
)

// SessionsCount is the workload.sessions.count that lets the stages, not the count, end the
// arrivals: the expected sessions plus four standard deviations of a Poisson count (so a seeded
// run is cut short by the count with odds below 1 in 30,000), at least the count given.
func SessionsCount(c *Curve, current int) int {
	e := c.ExpectedSessions
	n := int(math.Ceil(e + 4*math.Sqrt(e)))
	return min(max(n, current, 1), sim.MaxSessionRequests)
}

// TurnsOf is the turns per session of a scenario (its sessions workload's, else the default 3).
func TurnsOf(s *sim.Scenario) int {
	if s != nil && s.Workload.Sessions != nil && s.Workload.Sessions.Turns > 0 {
		return s.Workload.Sessions.Turns
	}
	return 3
}

// Apply writes the curve into a scenario held as a JSON map (as the user wrote it: fields left
// out stay left out): workload.type becomes sessions, workload.sessions.rate_stages the stages
// and count large enough for them (SessionsCount of the parsed count). It returns what it
// changed besides the stages, for the user.
func Apply(doc map[string]any, c *Curve, parsedCount int) []string {
	var notes []string
	w, _ := doc["workload"].(map[string]any)
	if w == nil {
		w = map[string]any{}
	}
	if t, _ := w["type"].(string); t != "" && t != sim.WorkloadSessions {
		notes = append(notes, fmt.Sprintf("workload.type was %s: it is now sessions (the stages are session arrival rates); the sessions' other fields are the defaults or as written", t))
		delete(w, "requests")
		delete(w, "trace")
	}
	w["type"] = sim.WorkloadSessions
	s, _ := w["sessions"].(map[string]any)
	if s == nil {
		s = map[string]any{}
	}
	s["rate_stages"] = c.Stages
	if !c.Start.IsZero() {
		// What time 0 stands for: informative, the pages read the night's times as clock times.
		s["starts_at"] = c.Start.UTC().Format(time.RFC3339)
	}
	if n := SessionsCount(c, parsedCount); n != parsedCount {
		s["count"] = n
		notes = append(notes, fmt.Sprintf("workload.sessions.count %d → %d: the stages expect %.0f sessions, and the count would end the arrivals before the stages do", parsedCount, n, c.ExpectedSessions))
	}
	if n := SessionsCount(c, 0); n >= sim.MaxSessionRequests {
		notes = append(notes, fmt.Sprintf("the stages expect %.0f sessions, beyond the %d a scenario holds: arrivals stop at the count; read a shorter range", c.ExpectedSessions, sim.MaxSessionRequests))
	}
	w["sessions"] = s
	doc["workload"] = w
	if n := shapeNote(doc, s); n != "" {
		notes = append([]string{n}, notes...) // first: it holds for every load
	}
	return notes
}

// shapeFields are the fields of a request's shape that a Prometheus load does not set, each with
// where its value can be read (docs/manifests.md#prometheus-load).
var shapeFields = []struct{ path, from string }{
	{"workload.sessions.turns", "your clients' sessions (no vLLM metric counts turns)"},
	{"workload.sessions.new_input_tokens", "vllm:request_prompt_tokens (its _sum / _count, less the system prompt)"},
	{"workload.sessions.system_prompt_tokens", "the shared prefix (vllm:prefix_cache_hits over vllm:prefix_cache_queries shows how much is reused)"},
	{"workload.sessions.output_tokens", "vllm:request_generation_tokens (its _sum / _count)"},
	{"workload.sessions.think_time_ms", "your clients' pause between turns (no vLLM metric)"},
	{"fleet.timing", "scalein calibrate on Dynamo's forward-pass metrics, or vllm:time_to_first_token_seconds and vllm:time_per_output_token_seconds"},
}

// shapeNote says which fields of the request shape the scenario leaves at their defaults after
// a load (only the arrival rate comes from Prometheus), and which vLLM metrics set them; "" when
// the scenario writes them all.
func shapeNote(doc, sessions map[string]any) string {
	var left []string
	for _, f := range shapeFields {
		var set bool
		if f.path == "fleet.timing" {
			fleet, _ := doc["fleet"].(map[string]any)
			_, set = fleet["timing"]
		} else {
			_, set = sessions[f.path[len("workload.sessions."):]]
		}
		if !set {
			left = append(left, f.path+" from "+f.from)
		}
	}
	if len(left) == 0 {
		return ""
	}
	return "the load sets the arrival rate only; the request shape is still the default or as written in: " + strings.Join(left, "; ")
}

// ApplyJSON is Apply on a scenario's JSON text; parsed is that scenario as sim.Parse read it
// (for its count). The result is indented JSON.
func ApplyJSON(scenario []byte, parsed *sim.Scenario, c *Curve) ([]byte, []string, error) {
	var doc map[string]any
	dec := json.NewDecoder(bytes.NewReader(scenario))
	dec.UseNumber() // a seed keeps its digits
	if err := dec.Decode(&doc); err != nil || doc == nil {
		return nil, nil, fmt.Errorf("the scenario is not a JSON object")
	}
	count := 100 // the sessions workload's default count
	if parsed != nil && parsed.Workload.Sessions != nil {
		count = parsed.Workload.Sessions.Count
	}
	notes := Apply(doc, c, count)
	out, err := json.MarshalIndent(doc, "", "  ")
	return out, notes, err
}

// WithReplicas sets the scenario's fleet.workers, the replicas that ran at the start of the
// night (scalein load -replicas, the load API's "replicas"); n < 1 is refused.
func WithReplicas(scenario []byte, n int) ([]byte, error) {
	if n < 1 {
		return nil, fmt.Errorf("replicas %d: at least 1 (the replicas running when the night started)", n)
	}
	var doc map[string]any
	dec := json.NewDecoder(bytes.NewReader(scenario))
	dec.UseNumber()
	if err := dec.Decode(&doc); err != nil || doc == nil {
		return nil, fmt.Errorf("the scenario is not a JSON object")
	}
	fleet, _ := doc["fleet"].(map[string]any)
	if fleet == nil {
		fleet = map[string]any{}
	}
	fleet["workers"] = n
	doc["fleet"] = fleet
	return json.MarshalIndent(doc, "", "  ")
}
