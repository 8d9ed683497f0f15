package runs

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"

	"github.com/scalein-planner/scalein/sim"
)

// Every kind of job (a sweep, a plan) has one shape here: Create<Kind> takes the raw request,
// as the API decodes it and the form builds it, and does every check (the name, the base
// scenario, the request's own fields, the memory budget) before anything is stored; <Kind>(id)
// returns the view pages and the API show, with its status; Cancel<Kind> cancels it. The web
// server only decodes and renders.

// Created is what creating a job answers.
type Created struct {
	ID string
	// Status is the job's status now: a plan asked for again may be done already.
	Status string
	// Points is how many runs a sweep has.
	Points int
	// Done says the job has nothing left to do (every run it needs was already done), so the
	// API answers 200 rather than 202.
	Done bool
}

// jobBase reads what every job starts from: its name (trimmed, under the scenario name rules)
// and its base scenario, parsed with the stored traces and within the per-run memory budget.
// kind names the job in errors; needScenario is the message for a request without one.
func (s *Service) jobBase(kind, name string, scenario json.RawMessage, needScenario string) (string, *sim.Scenario, error) {
	if len(bytes.TrimSpace(scenario)) == 0 {
		return "", nil, InvalidRequest(kind, &sim.ValidationError{Errors: []sim.FieldError{{Path: "scenario", Message: needScenario}}})
	}
	name = strings.TrimSpace(name)
	if msg := sim.NameProblem(name); msg != "" { // the scenario name rules (issue 19 L1)
		return "", nil, InvalidRequest(kind, &sim.ValidationError{Errors: []sim.FieldError{{Path: "name", Message: msg}}})
	}
	base, err := sim.Parse(scenario, sim.ParseEnv{Traces: s.store})
	if err != nil {
		if _, ok := errors.AsType[*sim.ValidationError](err); ok {
			return "", nil, err
		}
		return "", nil, &UnreadableScenarioError{Err: err}
	}
	if err := s.Admit(base); err != nil {
		return "", nil, err
	}
	return name, base, nil
}
