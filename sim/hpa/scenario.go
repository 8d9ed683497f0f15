package hpa

import (
	"bytes"
	"encoding/json"
	"errors"

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
	if doc["autoscaler"] == nil {
		doc["autoscaler"] = map[string]any{}
	}
	base, err := parseDoc(doc, env)
	if err != nil {
		return nil, nil, false, err
	}
	im, err = ImportWith(manifest, *base.Autoscaler, opt)
	if err != nil {
		return nil, nil, false, err
	}
	doc["autoscaler"] = im.Autoscaler
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
