package sim

// SimulationKey names what a scenario simulates: its ID with the name left out. The name is a
// label (a sweep point's or plan candidate's suffix, a user's title) that the engine never reads,
// so two scenarios with one SimulationKey have the same report but for its name, scenario_id
// and digest (Relabel makes one from the other).
func (s *Scenario) SimulationKey() string {
	c := *s
	c.Name = ""
	return c.ID()
}

// Relabel makes r the report of another scenario with the same SimulationKey: its name and
// scenario_id, and the digest over them.
func (r *Report) Relabel(name, scenarioID string) {
	r.Name, r.ScenarioID = name, scenarioID
	r.Digest = digest(r)
}
