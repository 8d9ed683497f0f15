package runs

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/scalein-planner/scalein/store"
)

// A database outage (a PostgreSQL restart, a failover, a network cut) must not cost a run an
// attempt (issue 19 M9): -max-attempts counts worker deaths, and a run that reached it through
// database blips would be failed for nothing. So a job that cannot read its run is snoozed (not
// an attempt, for River or the run), the end of a run is recorded again while the database is
// away, and an attempt whose end could not be recorded at all is given back before the run's
// next start in this process.

const (
	// outageSnooze is how long a job put aside by an outage waits before trying again.
	outageSnooze = 5 * time.Second
	// recordRetryFor is how long the end of a run is retried while the database is unavailable;
	// a simulation's outcome is worth keeping through a restart or failover.
	recordRetryFor   = 2 * time.Minute
	recordRetryEvery = time.Second
	// outagePauseFirst and outagePauseMax bound the pauses of a plan's driver waiting for the
	// database: the pause doubles from the first to the longest.
	outagePauseFirst = 500 * time.Millisecond
	outagePauseMax   = 15 * time.Second
)

// throughOutage calls fn again, after a pause that doubles each time, for as long as it fails
// because the database is unavailable (store.IsUnavailable), until ctx ends; it returns fn's
// last error (nil once it succeeds), or the error ctx ended with. A plan's driver goes through
// an outage this way rather than failing the plan (the soak test of issue 29: a 10 s outage
// failed six plans): what it does again is idempotent.
func (s *Service) throughOutage(ctx context.Context, what string, fn func() error) error {
	pause := outagePauseFirst
	for {
		err := fn()
		if !store.IsUnavailable(err) {
			return err
		}
		s.log.Warn(what+" waits for the database", "err", err, "retry_in", pause)
		select {
		case <-ctx.Done():
			return errors.Join(err, context.Cause(ctx))
		case <-time.After(pause):
		}
		pause = min(2*pause, outagePauseMax)
	}
}

// recordThroughOutage is record, tried again while the store reports the database unavailable,
// for up to recordRetryFor (or until the process shuts down).
func (s *Service) recordThroughOutage(id string, attempt int, r Result) (result, err error) {
	deadline := s.now().Add(recordRetryFor)
	for {
		result, err = s.record(id, attempt, r)
		if !store.IsUnavailable(err) || s.now().After(deadline) {
			return result, err
		}
		select {
		case <-s.runsCtx.Done():
			return result, err
		case <-time.After(recordRetryEvery):
		}
	}
}

// refundLostAttempt gives back the attempt of run id whose end this process could not record,
// so that starting it again does not count twice.
func (s *Service) refundLostAttempt(ctx context.Context, id string) {
	attempt, ok := s.lostAttempts.take(id)
	if !ok {
		return
	}
	if err := s.store.RefundAttempt(ctx, id, attempt); err != nil {
		s.log.Warn("giving back an attempt lost to a database outage failed", "run", id, "attempt", attempt, "err", err)
		s.lostAttempts.add(id, attempt)
	}
}

// lostAttempts are the attempts, by run id, whose end could not be recorded in an outage.
type lostAttempts struct {
	mu sync.Mutex
	m  map[string]int
}

func (l *lostAttempts) add(id string, attempt int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.m == nil {
		l.m = map[string]int{}
	}
	l.m[id] = attempt
}

func (l *lostAttempts) take(id string) (int, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	a, ok := l.m[id]
	delete(l.m, id)
	return a, ok
}
