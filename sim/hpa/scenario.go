package hpa

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/scalein-planner/scalein/sim"
)

// ScenarioError is a problem of the scenario an import fills, not of the manifest.
type ScenarioError struct{ Err error }

func (e *ScenarioError) Error() string { return e.Err.Error() }
func (e *ScenarioError) Unwrap() error { return e.Err }

// IntoScenario fills a scenario's autoscaler (and router.migration_limit) from a manifest, the
// way every front end imports (the forms, the API and scalein import). The scenario stays as
// the user wrote it (fields left out stay left out); one without an autoscaler gets one at the
// model's defaults first, and its scale_in is dropped (dropped says so), since a scenario has an
// autoscaler or a schedule, not both. Problems of the scenario come back as *ScenarioError
// (wrapping sim.Parse's error), problems of the manifest as Import's error.
func IntoScenario(scenario, manifest []byte, env sim.ParseEnv) (out []byte, im *Imported, dropped bool, err error) {
	return IntoScenarioWith(scenario, manifest, env, ImportOptions{})
}

// IntoScenarioWith is IntoScenario choosing the autoscaler by opt (ImportWith).
func IntoScenarioWith(scenario, manifest []byte, env sim.ParseEnv, opt ImportOptions) (out []byte, im *Imported, dropped bool, err error) {
	var doc map[string]any
	dec := json.NewDecoder(bytes.NewReader(scenario))
	dec.UseNumber()
	if err := dec.Decode(&doc); err != nil || doc == nil {
		return nil, nil, false, &ScenarioError{errors.New("scenario: not a JSON object; paste a scenario (or leave the preset) before importing an HPA")}
	}
	if sa, ok := doc["scale_in"].([]any); ok && len(sa) > 0 {
		dropped = true
	}
	doc["scale_in"] = []any{}
	pd := doc["disaggregation"] != nil
	switch a, _ := doc["autoscaler"].(map[string]any); {
	case pd:
		// One autoscaler per pool, each at the model's defaults where the scenario has none.
		if a == nil {
			a = map[string]any{}
		}
		for _, role := range roles {
			if a[role] == nil {
				a[role] = map[string]any{}
			}
		}
		doc["autoscaler"] = a
	case doc["autoscaler"] == nil:
		doc["autoscaler"] = map[string]any{}
	}
	base, err := parseDoc(doc, env)
	if err != nil {
		return nil, nil, false, err
	}
	var a0 sim.Autoscaler
	switch {
	case base.Autoscaler != nil:
		a0 = *base.Autoscaler
	case base.PoolAutoscalers != nil && base.PoolAutoscalers.Decode != nil:
		a0 = *base.PoolAutoscalers.Decode
		opt.Prefill, opt.Decode = base.PoolAutoscalers.Prefill, base.PoolAutoscalers.Decode
	}
	im, err = ImportWith(manifest, a0, opt)
	if err != nil {
		return nil, nil, false, err
	}
	if im.Pools != nil {
		im.intoPools(doc)
	} else {
		if pd {
			return nil, nil, false, errors.New("the scenario has prefill and decode pools (disaggregation), but the manifest's autoscaler scales one fleet: import a file with an autoscaler per role (llm-d's prefill and decode ScaledObjects, or HPAs whose targets are labelled " + RoleLabel + ": prefill / decode), or remove disaggregation from the scenario")
		}
		doc["autoscaler"] = im.Autoscaler
		im.startingFleet(doc, base.Fleet.Workers)
	}
	if im.MigrationLimit != nil {
		router, _ := doc["router"].(map[string]any)
		if router == nil {
			router = map[string]any{}
		}
		router["migration_limit"] = *im.MigrationLimit
		doc["router"] = router
	}
	if _, err := parseDoc(doc, env); err != nil {
		return nil, nil, false, err
	}
	out, err = json.MarshalIndent(doc, "", "  ")
	return out, im, dropped, err
}

func parseDoc(doc map[string]any, env sim.ParseEnv) (*sim.Scenario, error) {
	b, err := json.Marshal(doc)
	if err != nil {
		return nil, err
	}
	sc, err := sim.Parse(b, env)
	if err != nil {
		return nil, &ScenarioError{err}
	}
	return sc, nil
}

// startingFleet sets fleet.workers to the replicas the operator runs (Imported.Workers) or, when
// the manifest does not say, to the scenario's own value clamped into the autoscaler's bounds,
// with a note either way that says where the number came from.
func (im *Imported) startingFleet(doc map[string]any, scenarioWorkers int) {
	a := im.Autoscaler
	fleet, _ := doc["fleet"].(map[string]any)
	if fleet == nil {
		fleet = map[string]any{}
	}
	n := 0
	switch {
	case im.Workers != nil:
		n = *im.Workers
		im.fill("fleet.workers")
		if n < a.MinWorkers || n > a.MaxWorkers {
			im.problem("fleet.workers", "%d from %s lies outside the autoscaler's bounds [%d, %d]: the first decision brings it to %d", n, im.WorkersFrom, a.MinWorkers, a.MaxWorkers, min(max(n, a.MinWorkers), a.MaxWorkers))
		}
		if n < 1 {
			im.problem("fleet.workers", "%d from %s: the model starts with at least 1 worker; the night starts at %d", n, im.WorkersFrom, max(1, a.MinWorkers))
			n = max(1, a.MinWorkers)
		}
	default:
		n = min(max(scenarioWorkers, a.MinWorkers), a.MaxWorkers)
		if n != scenarioWorkers {
			im.problem("fleet.workers", "the manifest does not say how many replicas run (no replicas in the scaled workload, no status.currentReplicas): the scenario's %d workers lie outside [%d, %d], so the night starts at %d; set fleet.workers to the replicas you run", scenarioWorkers, a.MinWorkers, a.MaxWorkers, n)
		} else {
			im.problem("fleet.workers", "the manifest does not say how many replicas run (no replicas in the scaled workload, no status.currentReplicas): the night starts at the scenario's %d workers; set fleet.workers to the replicas you run", n)
		}
	}
	if cur, ok := fleet["workers"]; ok && fmt.Sprint(cur) == fmt.Sprint(n) {
		return
	}
	fleet["workers"] = n
	doc["fleet"] = fleet
}
