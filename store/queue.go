package store

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"time"
)

// ErrQueueFull: a submission would take the number of queued runs past the bound.
var ErrQueueFull = errors.New("run queue is full")

// ErrAttemptsExhausted: a run was started its maximum number of times without finishing; it is
// now failed.
var ErrAttemptsExhausted = errors.New("attempts exhausted")

// NewRun is one scenario to store as a run. Direct says a user asked for it (the form, the
// API, a pair) rather than a sweep or plan; a cancelled sweep or plan leaves such a run alone
// while it is unfinished (RunsWaitedOnElsewhere).
type NewRun struct {
	ID, Name     string
	ScenarioJSON []byte
	Direct       bool
	// SimKey names what the run simulates, its scenario without the name
	// (sim.Scenario.SimulationKey): runs with one key share a report but for its labels.
	SimKey string
}

// Submitted is one run after SubmitRuns: its record, and whether it was queued now (false: an
// identical scenario was stored before and its run is reused).
type Submitted struct {
	Run     Run
	Created bool
}

// EnqueueFunc adds the job that will work run id, inside the store's write transaction tx,
// and returns the job's id.
type EnqueueFunc func(ctx context.Context, tx *sql.Tx, id string) (jobID int64, err error)

// SubmitRuns stores runs and queues those that need running, all or none, in one transaction:
// a new run is inserted queued; an existing one is reused as it is unless it failed or was
// cancelled, in which case it is queued again. For every run queued, enqueue is called inside
// the same transaction (so a run's row and its job are committed together) and the job id is
// recorded on the run. When capacity > 0 and the runs already queued plus those queued now would
// exceed it, nothing is written and ErrQueueFull is returned.
func (s *Store) SubmitRuns(ctx context.Context, runs []NewRun, capacity int, now time.Time, enqueue EnqueueFunc) ([]Submitted, error) {
	for _, r := range runs {
		if r.ID == "" || len(r.ScenarioJSON) == 0 {
			return nil, fmt.Errorf("store: submit runs: run %q: empty id or scenario: %w", r.ID, ErrInvalid)
		}
	}
	if now.IsZero() {
		return nil, fmt.Errorf("store: submit runs: zero creation time: %w", ErrInvalid)
	}
	// The queue's bound counts every owner's runs, so submissions take the queue's lock and are
	// one at a time, as on SQLite; without a bound, only the owner's quota needs a lock.
	locks := quotaLocks(ctx, func(q Quota) bool { return q.QueuedRuns > 0 })
	if capacity > 0 {
		locks = []writeLock{queueLock}
	}
	lockRows := s.dialect == DialectPostgres
	var out []Submitted
	err := s.writeLocked(ctx, locks, func(tx *sql.Tx) error {
		out = make([]Submitted, 0, len(runs)) // reset: the transaction may run again
		ids := make([]string, len(runs))
		for i, r := range runs {
			ids[i] = r.ID
		}
		if err := checkQueueRoom(ctx, tx, ids, capacity); err != nil {
			return err
		}
		added := 0
		for _, r := range runs {
			run, created, err := submitOne(ctx, tx, r, now, lockRows)
			if err != nil {
				return err
			}
			if created {
				added++
			}
			if created && enqueue != nil {
				jobID, err := enqueue(ctx, tx, r.ID)
				if err != nil {
					return fmt.Errorf("queue run %s: %w", r.ID, err)
				}
				if _, err := tx.ExecContext(ctx, `UPDATE runs SET job_id = ? WHERE id = ?`, jobID, r.ID); err != nil {
					return err
				}
				run.JobID = jobID
			}
			out = append(out, Submitted{Run: run, Created: created})
		}
		return checkRunQuota(ctx, tx, added)
	})
	if err != nil {
		return nil, fmt.Errorf("store: submit runs: %w", err)
	}
	return out, nil
}

// submitOne stores or reuses one run. lockRow (PostgreSQL, where SubmitRuns runs at READ
// COMMITTED) locks the run's row before reading it, so a worker or a cancel cannot change it
// between the read and what is decided from it.
func submitOne(ctx context.Context, tx *sql.Tx, r NewRun, now time.Time, lockRow bool) (run Run, created bool, err error) {
	defer func() {
		if err == nil && r.SimKey != "" {
			_, err = tx.ExecContext(ctx, `UPDATE runs SET sim_key = ? WHERE id = ? AND sim_key = ''`, r.SimKey, r.ID)
		}
	}()
	if lockRow {
		if _, err := tx.ExecContext(ctx, `SELECT 1 FROM runs WHERE id = ? FOR UPDATE`, r.ID); err != nil {
			return Run{}, false, err
		}
	}
	existing, err := findRun(ctx, tx, r.ID, true)
	switch {
	case errors.Is(err, ErrNotFound):
		if err := insertRun(ctx, tx, r.ID, r.Name, r.ScenarioJSON, now); err != nil {
			return Run{}, false, err
		}
		if err := setWantedDirectly(ctx, tx, r.ID, r.Direct); err != nil {
			return Run{}, false, err
		}
		run, err = findRun(ctx, tx, r.ID, false)
		return run, true, err
	case err != nil:
		return Run{}, false, err
	}
	if !bytes.Equal(existing.ScenarioJSON, r.ScenarioJSON) {
		return Run{}, false, fmt.Errorf("run %q exists with a different scenario: %w", r.ID, ErrConflict)
	}
	if existing.Status != StatusFailed && existing.Status != StatusCancelled {
		if r.Direct && existing.Status != StatusDone {
			if err := setWantedDirectly(ctx, tx, r.ID, true); err != nil {
				return Run{}, false, err
			}
		}
		existing.ScenarioJSON, existing.SummaryJSON, existing.HeadlineJSON = nil, nil, nil
		return existing, false, nil
	}
	if err := requeueRun(ctx, tx, r.ID); err != nil {
		return Run{}, false, err
	}
	// Whoever waited on the run before it ended waits no more: only this submission counts.
	if err := setWantedDirectly(ctx, tx, r.ID, r.Direct); err != nil {
		return Run{}, false, err
	}
	run, err = findRun(ctx, tx, r.ID, false)
	return run, true, err
}

func setWantedDirectly(ctx context.Context, tx *sql.Tx, id string, direct bool) error {
	v := 0
	if direct {
		v = 1
	}
	_, err := tx.ExecContext(ctx, `UPDATE runs SET wanted_directly = ? WHERE id = ?`, v, id)
	return err
}

// ClaimRun starts an attempt at a run for worker ("host:pid"): a queued run, or one left
// running by a worker that died, becomes running with its attempt count raised. It returns the
// run with its scenario; run.Attempts identifies this attempt in the *Claimed methods, which
// fail with ErrConflict once another attempt has taken the run over. A run that has ended
// (done, failed, cancelled) returns ErrConflict. A run already started maxAttempts times
// (maxAttempts > 0) is ended as failed and ErrAttemptsExhausted returned.
func (s *Store) ClaimRun(ctx context.Context, id, worker string, maxAttempts int, now time.Time) (Run, error) {
	var (
		run       Run
		exhausted bool
	)
	err := s.write(ctx, func(tx *sql.Tx) error {
		exhausted = false
		existing, err := findRun(ctx, tx, id, false)
		if err != nil {
			return err
		}
		if existing.Status != StatusQueued && existing.Status != StatusRunning {
			return fmt.Errorf("cannot claim: run is %s: %w", existing.Status, ErrConflict)
		}
		if maxAttempts > 0 && existing.Attempts >= maxAttempts {
			msg := fmt.Sprintf("interrupted %d times: the run was started %d times and never finished (its worker stopped each time, for example out of memory), so it is not started again; shrink the workload or the fleet, or give the workers more memory", existing.Attempts, existing.Attempts)
			if _, err := tx.ExecContext(ctx, `UPDATE runs SET status = ?, error = ?, finished_at = ? WHERE id = ?`,
				StatusFailed, msg, toUnixMS(now), id); err != nil {
				return err
			}
			exhausted = true // returned after the commit: the run must end failed
			return nil
		}
		if _, err := tx.ExecContext(ctx, `
			UPDATE runs SET status = ?, progress = 0, error = '', started_at = ?, finished_at = NULL,
				attempts = attempts + 1, worker = ?
			WHERE id = ?`, StatusRunning, toUnixMS(now), worker, id); err != nil {
			return err
		}
		run, err = findRun(ctx, tx, id, true)
		return err
	})
	if err == nil && exhausted {
		return Run{}, fmt.Errorf("store: claim run %q: %w", id, ErrAttemptsExhausted)
	}
	if err != nil {
		return Run{}, fmt.Errorf("store: claim run %q: %w", id, err)
	}
	return run, nil
}

// requireClaim returns ErrConflict unless the run is running attempt number attempt.
func requireClaim(ctx context.Context, tx *sql.Tx, id string, attempt int) error {
	var (
		status   string
		attempts int
	)
	err := tx.QueryRowContext(ctx, `SELECT status, attempts FROM runs WHERE id = ?`, id).Scan(&status, &attempts)
	if errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("no run with id %q: %w", id, ErrNotFound)
	}
	if err != nil {
		return err
	}
	if status != StatusRunning || attempts != attempt {
		return fmt.Errorf("run is %s at attempt %d, not running attempt %d: %w", status, attempts, attempt, ErrConflict)
	}
	return nil
}

// SetProgressClaimed records the progress (0…1) of attempt attempt of a run.
func (s *Store) SetProgressClaimed(ctx context.Context, id string, attempt int, p float64) error {
	if math.IsNaN(p) || p < 0 || p > 1 {
		return fmt.Errorf("store: set progress of run %q to %v: progress must be within 0…1: %w", id, p, ErrInvalid)
	}
	err := s.write(ctx, func(tx *sql.Tx) error {
		if err := requireClaim(ctx, tx, id, attempt); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `UPDATE runs SET progress = ? WHERE id = ?`, p, id)
		return err
	})
	if err != nil {
		return fmt.Errorf("store: set progress of run %q: %w", id, err)
	}
	return nil
}

// FinishClaimed stores the report of attempt attempt, its summary (the report without its
// per-request rows, which pages read) and headline, and marks the run done. Only the attempt
// that holds the run can: a report is never stored twice.
func (s *Store) FinishClaimed(ctx context.Context, id string, attempt int, reportJSON, summaryJSON, headlineJSON []byte, now time.Time) error {
	w := NewReportWriter()
	if _, err := w.Write(reportJSON); err != nil {
		return fmt.Errorf("store: finish run %q: compress the report: %w", id, err)
	}
	return s.FinishClaimedReport(ctx, id, attempt, w, summaryJSON, headlineJSON, now)
}

// FinishClaimedReport is FinishClaimed with the report written into report (which it finishes),
// so the caller never holds the report's JSON whole.
func (s *Store) FinishClaimedReport(ctx context.Context, id string, attempt int, report *ReportWriter, summaryJSON, headlineJSON []byte, now time.Time) error {
	if report == nil || report.JSONBytes() == 0 {
		return fmt.Errorf("store: finish run %q: empty report: %w", id, ErrInvalid)
	}
	if len(summaryJSON) == 0 {
		return fmt.Errorf("store: finish run %q: empty summary: %w", id, ErrInvalid)
	}
	rep, err := report.compressed()
	if err != nil {
		return fmt.Errorf("store: finish run %q: compress the report: %w", id, err)
	}
	err = s.write(ctx, func(tx *sql.Tx) error {
		if err := requireClaim(ctx, tx, id, attempt); err != nil {
			return err
		}
		if err := storeReportChunks(ctx, tx, id, rep); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `
			UPDATE runs SET status = ?, progress = 1, error = '', summary_json = ?,
				headline_json = ?, finished_at = ?
			WHERE id = ?`, StatusDone, summaryJSON, headlineJSON, toUnixMS(now), id)
		return err
	})
	if err != nil {
		return fmt.Errorf("store: finish run %q: %w", id, err)
	}
	return nil
}

// EndClaimed ends attempt attempt as failed or cancelled, with a message saying why.
func (s *Store) EndClaimed(ctx context.Context, id string, attempt int, status, msg string, now time.Time) error {
	if status != StatusFailed && status != StatusCancelled {
		return fmt.Errorf("store: end run %q as %q: status must be %q or %q: %w", id, status, StatusFailed, StatusCancelled, ErrInvalid)
	}
	err := s.write(ctx, func(tx *sql.Tx) error {
		if err := requireClaim(ctx, tx, id, attempt); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `UPDATE runs SET status = ?, error = ?, finished_at = ? WHERE id = ?`,
			status, msg, toUnixMS(now), id)
		return err
	})
	if err != nil {
		return fmt.Errorf("store: end run %q as %s: %w", id, status, err)
	}
	return nil
}

// RequeueClaimed puts the run back to queued when attempt attempt stops without an outcome
// (its process is shutting down).
func (s *Store) RequeueClaimed(ctx context.Context, id string, attempt int) error {
	err := s.write(ctx, func(tx *sql.Tx) error {
		if err := requireClaim(ctx, tx, id, attempt); err != nil {
			return err
		}
		return requeueRun(ctx, tx, id)
	})
	if err != nil {
		return fmt.Errorf("store: requeue run %q: %w", id, err)
	}
	return nil
}

// RequeueOrphans queues again, through enqueue, every queued or running run that has no job
// (runs stored before the job queue existed), in one transaction; it returns how many.
func (s *Store) RequeueOrphans(ctx context.Context, enqueue EnqueueFunc) (int, error) {
	var n int
	err := s.write(ctx, func(tx *sql.Tx) error {
		n = 0
		rows, err := tx.QueryContext(ctx, `SELECT id FROM runs WHERE status IN ('queued', 'running') AND job_id IS NULL ORDER BY created_at, id`)
		if err != nil {
			return err
		}
		var ids []string
		for rows.Next() {
			var id string
			if err := rows.Scan(&id); err != nil {
				_ = rows.Close()
				return err
			}
			ids = append(ids, id)
		}
		if err := errors.Join(rows.Err(), rows.Close()); err != nil {
			return err
		}
		for _, id := range ids {
			if err := requeueRun(ctx, tx, id); err != nil {
				return err
			}
			jobID, err := enqueue(ctx, tx, id)
			if err != nil {
				return err
			}
			if _, err := tx.ExecContext(ctx, `UPDATE runs SET job_id = ? WHERE id = ?`, jobID, id); err != nil {
				return err
			}
			n++
		}
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("store: requeue runs without a job: %w", err)
	}
	return n, nil
}

// QueueState is what the operations page shows: runs by status, and running runs by worker.
type QueueState struct {
	ByStatus map[string]int
	// Running maps "host:pid" to the number of runs it is running.
	Running map[string]int
}

// QueueState counts runs by status and running runs by worker.
func (s *Store) QueueState(ctx context.Context) (QueueState, error) {
	st := QueueState{ByStatus: map[string]int{}, Running: map[string]int{}}
	err := s.read(ctx, func(tx *sql.Tx) error {
		for _, q := range []struct {
			sql  string
			into map[string]int
		}{
			{`SELECT status, count(*) FROM runs GROUP BY status`, st.ByStatus},
			{`SELECT worker, count(*) FROM runs WHERE status = 'running' GROUP BY worker`, st.Running},
		} {
			rows, err := tx.QueryContext(ctx, q.sql)
			if err != nil {
				return err
			}
			for rows.Next() {
				var (
					k string
					n int
				)
				if err := rows.Scan(&k, &n); err != nil {
					_ = rows.Close()
					return err
				}
				q.into[k] = n
			}
			if err := errors.Join(rows.Err(), rows.Close()); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return QueueState{}, fmt.Errorf("store: queue state: %w", err)
	}
	return st, nil
}

// WithLock runs fn while holding the database's migration lock (a PostgreSQL advisory lock), so
// processes starting together on one database migrate one at a time. On SQLite it just runs fn.
func (s *Store) WithLock(ctx context.Context, fn func() error) error {
	if s.dialect != DialectPostgres {
		return fn()
	}
	conn, err := s.writer.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	const key = 7_236_512_001 // arbitrary, fixed: "scalein migrations"
	if _, err := conn.ExecContext(ctx, `SELECT pg_advisory_lock($1)`, int64(key)); err != nil {
		return fmt.Errorf("store: take the migration lock: %w", err)
	}
	defer func() {
		_, _ = conn.ExecContext(context.WithoutCancel(ctx), `SELECT pg_advisory_unlock($1)`, int64(key))
	}()
	return fn()
}

// RefundAttempt gives back attempt attempt of run id, whose outcome was lost to a database
// outage rather than to its worker: the next ClaimRun counts the same attempt number again. A
// run that has ended or been claimed by another attempt since is left as it is.
func (s *Store) RefundAttempt(ctx context.Context, id string, attempt int) error {
	err := s.write(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `UPDATE runs SET attempts = attempts - 1 WHERE id = ? AND attempts = ? AND attempts > 0 AND status = ?`,
			id, attempt, StatusRunning)
		return err
	})
	if err != nil {
		return fmt.Errorf("store: refund attempt %d of run %q: %w", attempt, id, err)
	}
	return nil
}

// FindDoneRunBySimKey returns the id of a done run, other than id, that simulates the same as a
// run with SimKey key (ErrNotFound when there is none), so its report can be reused under
// another name instead of simulating again. Only the points of sweeps and plans reuse: a run
// that a user asked for directly (wanted_directly) is simulated itself.
func (s *Store) FindDoneRunBySimKey(ctx context.Context, key, id string) (string, error) {
	var found string
	err := s.read(ctx, func(tx *sql.Tx) error {
		err := tx.QueryRowContext(ctx, `SELECT id FROM runs WHERE sim_key = ? AND id <> ? AND status = ?
			AND EXISTS (SELECT 1 FROM runs asking WHERE asking.id = ? AND asking.wanted_directly = 0)
			ORDER BY finished_at, id LIMIT 1`, key, id, StatusDone, id).Scan(&found)
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("no done run simulates %s: %w", key, ErrNotFound)
		}
		return err
	})
	if err != nil {
		return "", fmt.Errorf("store: find run by simulation key: %w", err)
	}
	return found, nil
}

// QueueRoom reports, without writing, whether submitting the runs of these ids would pass the
// queue bound: it answers an error wrapping ErrQueueFull when more than capacity runs would
// wait. Runs already stored and not failed or cancelled need no room (a resubmission reuses
// them). It lets a caller refuse a submission before costly work on its scenarios (issue 19
// M8: the memory estimates came before the queue-full check); SubmitRuns checks again in its
// transaction, so this answer is advice, not a reservation.
func (s *Store) QueueRoom(ctx context.Context, ids []string, capacity int) error {
	err := s.read(ctx, func(tx *sql.Tx) error { return checkQueueRoom(ctx, tx, ids, capacity) })
	if err != nil {
		return fmt.Errorf("store: queue room: %w", err)
	}
	return nil
}

// checkQueueRoom counts the runs of ids that would be queued (missing, failed or cancelled) and
// refuses with ErrQueueFull when they and the runs already queued pass capacity (0: no bound).
func checkQueueRoom(ctx context.Context, tx *sql.Tx, ids []string, capacity int) error {
	if capacity <= 0 {
		return nil
	}
	need := 0
	seen := map[string]bool{}
	for _, id := range ids {
		if seen[id] {
			continue
		}
		seen[id] = true
		existing, err := findRun(ctx, tx, id, false)
		switch {
		case errors.Is(err, ErrNotFound):
			need++
		case err != nil:
			return err
		case existing.Status == StatusFailed || existing.Status == StatusCancelled:
			need++
		}
	}
	if need == 0 {
		return nil
	}
	var queued int
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM runs WHERE status = ?`, StatusQueued).Scan(&queued); err != nil {
		return err
	}
	if queued+need > capacity {
		return fmt.Errorf("%d runs queued, %d more would pass the bound of %d: %w", queued, need, capacity, ErrQueueFull)
	}
	return nil
}
