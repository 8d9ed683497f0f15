package runs

import (
	"errors"
	"fmt"

	"github.com/scalein-planner/scalein/sim"
	"github.com/scalein-planner/scalein/store"
)

// The service's errors are domain errors: the web server maps them to statuses in one place
// (web/errors.go), the worker process only logs them.

// ErrQueueFull refuses a submission while more than Config.QueueSize runs wait for a worker.
var ErrQueueFull = errors.New("run queue is full")

// Causes a run's context can be cancelled with; the worker turns each into the run's final state.
var (
	errShuttingDown    = errors.New("the server is shutting down")
	errCancelledByUser = errors.New("cancelled by a user")
)

// RequestError is a sweep's axes or a plan's goal that do not validate (the scenario itself
// was valid). Invalid lists every problem with its path.
type RequestError struct {
	What    string // "sweep" or "plan"
	Invalid *sim.ValidationError
}

func (e *RequestError) Error() string {
	return fmt.Sprintf("the %s is invalid: %v", e.What, e.Invalid)
}

func (e *RequestError) Unwrap() error { return e.Invalid }

// InvalidRequest presents the field errors of a sweep's or plan's request as a *RequestError
// about it; any other error is returned as it is.
func InvalidRequest(what string, err error) error {
	invalid, ok := errors.AsType[*sim.ValidationError](err)
	if !ok {
		return err
	}
	return &RequestError{What: what, Invalid: invalid}
}

// NotFoundError says no sweep or plan has the id asked for.
type NotFoundError struct {
	Kind string // "sweep" or "plan"
}

func (e *NotFoundError) Error() string { return "no " + e.Kind + " has this id; check the link" }

func (e *NotFoundError) Unwrap() error { return store.ErrNotFound }

// notFoundAs turns the store's not-found into a *NotFoundError about kind.
func notFoundAs(kind string, err error) error {
	if errors.Is(err, store.ErrNotFound) {
		return &NotFoundError{Kind: kind}
	}
	return err
}

// UnreadableScenarioError is a job's scenario that is not a document sim.Parse can read at all
// (not JSON, or not an object): there are no fields to point at.
type UnreadableScenarioError struct {
	Err error
}

func (e *UnreadableScenarioError) Error() string {
	return "the scenario could not be read: " + e.Err.Error()
}

func (e *UnreadableScenarioError) Unwrap() error { return e.Err }
