package runs

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
