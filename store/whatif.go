package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// Sweep is a what-if sweep: a base scenario and its axes. Its points are ordinary runs.
type Sweep struct {
	ID           string
	Name         string
	ScenarioJSON []byte
	AxesJSON     []byte
	Cancelled    bool
	CreatedAt    time.Time
}

// SweepPoint is one point of a sweep with its run's current state.
type SweepPoint struct {
	Index      int
	ValuesJSON []byte
	RunID      string
	// From the run:
	Status       string
	Error        string
	Progress     float64
	HeadlineJSON []byte
}

// CreateSweep stores a sweep and its points (whose runs must exist), or, when the sweep exists,
// clears its cancelled mark and returns created=false: asking again resumes it.
func (s *Store) CreateSweep(ctx context.Context, sw Sweep, points []SweepPoint, now time.Time) (created bool, err error) {
	if sw.ID == "" || len(sw.ScenarioJSON) == 0 || len(sw.AxesJSON) == 0 || now.IsZero() {
		return false, fmt.Errorf("store: create sweep %q: id, scenario, axes and time are required: %w", sw.ID, ErrInvalid)
	}
	locks := quotaLocks(ctx, func(q Quota) bool { return q.SweepPoints > 0 && q.PointsOf != nil })
	err = s.writeLocked(ctx, locks, func(tx *sql.Tx) error {
		var exists int
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM sweeps WHERE id = ?`, sw.ID).Scan(&exists); err != nil {
			return err
		}
		if exists > 0 {
			_, err := tx.ExecContext(ctx, `UPDATE sweeps SET cancelled = 0 WHERE id = ?`, sw.ID)
			return err
		}
		if err := checkSweepQuota(ctx, tx, sw.AxesJSON); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `
			INSERT INTO sweeps (id, name, scenario_json, axes_json, cancelled, created_at, owner)
			VALUES (?, ?, ?, ?, 0, ?, ?)`, sw.ID, sw.Name, sw.ScenarioJSON, sw.AxesJSON, toUnixMS(now), OwnerFrom(ctx)); err != nil {
			return err
		}
		for i, p := range points {
			if _, err := tx.ExecContext(ctx, `
				INSERT INTO sweep_points (sweep_id, idx, values_json, run_id) VALUES (?, ?, ?, ?)`,
				sw.ID, i, p.ValuesJSON, p.RunID); err != nil {
				return fmt.Errorf("point %d (run %s): %w", i, p.RunID, err)
			}
		}
		created = true
		return nil
	})
	if err != nil {
		return false, fmt.Errorf("store: create sweep %q: %w", sw.ID, err)
	}
	return created, nil
}

// GetSweep returns the sweep and its points in order, each with its run's state.
func (s *Store) GetSweep(ctx context.Context, id string) (Sweep, []SweepPoint, error) {
	var (
		sw     Sweep
		points []SweepPoint
	)
	err := s.read(ctx, func(tx *sql.Tx) error {
		var created sql.NullInt64
		var cancelled int
		err := tx.QueryRowContext(ctx, `
			SELECT id, name, scenario_json, axes_json, cancelled, created_at FROM sweeps WHERE id = ?`, id).
			Scan(&sw.ID, &sw.Name, &sw.ScenarioJSON, &sw.AxesJSON, &cancelled, &created)
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("no sweep with id %q: %w", id, ErrNotFound)
		}
		if err != nil {
			return err
		}
		sw.Cancelled, sw.CreatedAt = cancelled == 1, fromNullUnixMS(created)
		rows, err := tx.QueryContext(ctx, `
			SELECT p.idx, p.values_json, p.run_id, r.status, r.error, r.progress, r.headline_json
			FROM sweep_points p JOIN runs r ON r.id = p.run_id
			WHERE p.sweep_id = ? ORDER BY p.idx`, id)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var p SweepPoint
			if err := rows.Scan(&p.Index, &p.ValuesJSON, &p.RunID, &p.Status, &p.Error, &p.Progress, &p.HeadlineJSON); err != nil {
				return err
			}
			points = append(points, p)
		}
		return rows.Err()
	})
	if err != nil {
		return Sweep{}, nil, fmt.Errorf("store: get sweep %q: %w", id, err)
	}
	return sw, points, nil
}

// AddSweepPoints records points of a sweep whose runs were just submitted (they must exist):
// points[i] becomes point from+i. A point the sweep already has is left as it is, so feeding
// the same points again (a resumed or re-asked sweep) is harmless.
func (s *Store) AddSweepPoints(ctx context.Context, sweepID string, from int, points []SweepPoint) error {
	if from < 0 {
		return fmt.Errorf("store: add sweep points %q: negative index %d: %w", sweepID, from, ErrInvalid)
	}
	err := s.write(ctx, func(tx *sql.Tx) error {
		for i, p := range points {
			if _, err := tx.ExecContext(ctx, `
				INSERT INTO sweep_points (sweep_id, idx, values_json, run_id) VALUES (?, ?, ?, ?)
				ON CONFLICT (sweep_id, idx) DO NOTHING`,
				sweepID, from+i, p.ValuesJSON, p.RunID); err != nil {
				return fmt.Errorf("point %d (run %s): %w", from+i, p.RunID, err)
			}
		}
		return claimPointOwners(ctx, tx, OwnedSweep, sweepID, sweepRunIDs(points))
	})
	if err != nil {
		return fmt.Errorf("store: add sweep points %q: %w", sweepID, err)
	}
	return nil
}

// SweepFeed is a sweep that is not cancelled, with how many of its points are recorded (the
// server compares that with the axes to find sweeps it still has to feed).
type SweepFeed struct {
	ID           string
	ScenarioJSON []byte
	AxesJSON     []byte
	Recorded     int
}

// ActiveSweeps lists the sweeps not cancelled, oldest first, each with its recorded points.
func (s *Store) ActiveSweeps(ctx context.Context) ([]SweepFeed, error) {
	var out []SweepFeed
	err := s.read(ctx, func(tx *sql.Tx) error {
		out = nil
		rows, err := tx.QueryContext(ctx, `
			SELECT s.id, s.scenario_json, s.axes_json,
				(SELECT count(*) FROM sweep_points p WHERE p.sweep_id = s.id)
			FROM sweeps s WHERE s.cancelled = 0 ORDER BY s.created_at, s.id`)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var f SweepFeed
			if err := rows.Scan(&f.ID, &f.ScenarioJSON, &f.AxesJSON, &f.Recorded); err != nil {
				return err
			}
			out = append(out, f)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, fmt.Errorf("store: list active sweeps: %w", err)
	}
	return out, nil
}

// CancelSweep marks the sweep cancelled (its runs are cancelled by the caller).
func (s *Store) CancelSweep(ctx context.Context, id string) error {
	err := s.write(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE sweeps SET cancelled = 1 WHERE id = ?`, id)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return fmt.Errorf("no sweep with id %q: %w", id, ErrNotFound)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("store: cancel sweep %q: %w", id, err)
	}
	return nil
}

// Plan is a scale-in planning request and, once done, its result.
type Plan struct {
	ID           string
	Name         string
	Status       string
	Error        string
	ScenarioJSON []byte
	RequestJSON  []byte
	ResultJSON   []byte
	CreatedAt    time.Time
	FinishedAt   time.Time
}

// PlanPoint is one run a plan submitted, with the run's current state.
type PlanPoint struct {
	Index        int
	Label        string
	RunID        string
	Status       string
	HeadlineJSON []byte
}

// CreatePlan stores a queued plan, or returns the existing one with created=false. A plan that
// failed or was cancelled is queued again (created=true), keeping the runs it already has.
func (s *Store) CreatePlan(ctx context.Context, p Plan, now time.Time) (plan Plan, created bool, err error) {
	if p.ID == "" || len(p.ScenarioJSON) == 0 || len(p.RequestJSON) == 0 || now.IsZero() {
		return Plan{}, false, fmt.Errorf("store: create plan %q: id, scenario, request and time are required: %w", p.ID, ErrInvalid)
	}
	err = s.write(ctx, func(tx *sql.Tx) error {
		existing, err := findPlan(ctx, tx, p.ID)
		switch {
		case errors.Is(err, ErrNotFound):
			if _, err := tx.ExecContext(ctx, `
				INSERT INTO plans (id, name, status, scenario_json, request_json, created_at, owner)
				VALUES (?, ?, ?, ?, ?, ?, ?)`, p.ID, p.Name, StatusQueued, p.ScenarioJSON, p.RequestJSON, toUnixMS(now), OwnerFrom(ctx)); err != nil {
				return err
			}
			created = true
		case err != nil:
			return err
		case existing.Status == StatusFailed || existing.Status == StatusCancelled:
			if _, err := tx.ExecContext(ctx, `
				UPDATE plans SET status = ?, error = '', result_json = NULL, finished_at = NULL WHERE id = ?`,
				StatusQueued, p.ID); err != nil {
				return err
			}
			created = true
		}
		plan, err = findPlan(ctx, tx, p.ID)
		return err
	})
	if err != nil {
		return Plan{}, false, fmt.Errorf("store: create plan %q: %w", p.ID, err)
	}
	return plan, created, nil
}

// GetPlan returns the plan and the runs it submitted so far, in order.
func (s *Store) GetPlan(ctx context.Context, id string) (Plan, []PlanPoint, error) {
	var (
		plan   Plan
		points []PlanPoint
	)
	err := s.read(ctx, func(tx *sql.Tx) (err error) {
		if plan, err = findPlan(ctx, tx, id); err != nil {
			return err
		}
		rows, err := tx.QueryContext(ctx, `
			SELECT p.idx, p.label, p.run_id, r.status, r.headline_json
			FROM plan_points p JOIN runs r ON r.id = p.run_id
			WHERE p.plan_id = ? ORDER BY p.idx`, id)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var p PlanPoint
			if err := rows.Scan(&p.Index, &p.Label, &p.RunID, &p.Status, &p.HeadlineJSON); err != nil {
				return err
			}
			points = append(points, p)
		}
		return rows.Err()
	})
	if err != nil {
		return Plan{}, nil, fmt.Errorf("store: get plan %q: %w", id, err)
	}
	return plan, points, nil
}

// AddPlanPoints records runs a plan submitted; a run the plan already lists is skipped.
func (s *Store) AddPlanPoints(ctx context.Context, planID string, labels, runIDs []string) error {
	if len(labels) != len(runIDs) {
		return fmt.Errorf("store: add plan points %q: %d labels for %d runs: %w", planID, len(labels), len(runIDs), ErrInvalid)
	}
	err := s.write(ctx, func(tx *sql.Tx) error {
		var n int
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM plan_points WHERE plan_id = ?`, planID).Scan(&n); err != nil {
			return err
		}
		for i, id := range runIDs {
			var dup int
			if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM plan_points WHERE plan_id = ? AND run_id = ?`, planID, id).Scan(&dup); err != nil {
				return err
			}
			if dup > 0 {
				continue
			}
			if _, err := tx.ExecContext(ctx, `INSERT INTO plan_points (plan_id, idx, label, run_id) VALUES (?, ?, ?, ?)`,
				planID, n, labels[i], id); err != nil {
				return err
			}
			n++
		}
		return claimPointOwners(ctx, tx, OwnedPlan, planID, runIDs)
	})
	if err != nil {
		return fmt.Errorf("store: add plan points %q: %w", planID, err)
	}
	return nil
}

// SetPlanStatus records a plan's state; a final state (done, failed, cancelled) sets its finish
// time, and done stores the result. A cancelled plan stays cancelled (ErrConflict) until
// CreatePlan queues it again: a planner finishing in one process cannot overwrite a cancel made
// in another.
func (s *Store) SetPlanStatus(ctx context.Context, id, status, msg string, resultJSON []byte, now time.Time) error {
	switch status {
	case StatusQueued, StatusRunning, StatusDone, StatusFailed, StatusCancelled:
	default:
		return fmt.Errorf("store: set plan %q status: unknown status %q: %w", id, status, ErrInvalid)
	}
	final := status == StatusDone || status == StatusFailed || status == StatusCancelled
	var finished any
	if final {
		finished = toUnixMS(now)
	}
	err := s.write(ctx, func(tx *sql.Tx) error {
		current, err := findPlan(ctx, tx, id)
		if err != nil {
			return err
		}
		if current.Status == StatusCancelled && status != StatusCancelled {
			return fmt.Errorf("plan %q was cancelled: %w", id, ErrConflict)
		}
		_, err = tx.ExecContext(ctx, `UPDATE plans SET status = ?, error = ?, result_json = ?, finished_at = ? WHERE id = ?`,
			status, msg, resultJSON, finished, id)
		return err
	})
	if err != nil {
		return fmt.Errorf("store: set plan %q status: %w", id, err)
	}
	return nil
}

// UnfinishedPlans lists the plans left queued or running, oldest first, for restart recovery.
func (s *Store) UnfinishedPlans(ctx context.Context) ([]Plan, error) {
	var plans []Plan
	err := s.read(ctx, func(tx *sql.Tx) error {
		rows, err := tx.QueryContext(ctx, `SELECT id FROM plans WHERE status IN ('queued', 'running') ORDER BY created_at, id`)
		if err != nil {
			return err
		}
		var ids []string
		for rows.Next() {
			var id string
			if err := rows.Scan(&id); err != nil {
				rows.Close()
				return err
			}
			ids = append(ids, id)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		for _, id := range ids {
			p, err := findPlan(ctx, tx, id)
			if err != nil {
				return err
			}
			plans = append(plans, p)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("store: list unfinished plans: %w", err)
	}
	return plans, nil
}

func findPlan(ctx context.Context, tx *sql.Tx, id string) (Plan, error) {
	var (
		p                 Plan
		created, finished sql.NullInt64
	)
	err := tx.QueryRowContext(ctx, `
		SELECT id, name, status, error, scenario_json, request_json, result_json, created_at, finished_at
		FROM plans WHERE id = ?`, id).
		Scan(&p.ID, &p.Name, &p.Status, &p.Error, &p.ScenarioJSON, &p.RequestJSON, &p.ResultJSON, &created, &finished)
	if errors.Is(err, sql.ErrNoRows) {
		return Plan{}, fmt.Errorf("no plan with id %q: %w", id, ErrNotFound)
	}
	if err != nil {
		return Plan{}, err
	}
	p.CreatedAt, p.FinishedAt = fromNullUnixMS(created), fromNullUnixMS(finished)
	return p, nil
}

// wantedElsewhere is true of a runs row that something other than a given sweep and plan still
// waits on: a user who submitted it directly, a sweep not cancelled, or a plan queued or running.
// Its parameters: the sweep id, StatusQueued, StatusRunning, the plan id.
const wantedElsewhere = `(wanted_directly = 1
	OR EXISTS (SELECT 1 FROM sweep_points p JOIN sweeps w ON w.id = p.sweep_id
		WHERE p.run_id = runs.id AND w.cancelled = 0 AND w.id <> ?)
	OR EXISTS (SELECT 1 FROM plan_points p JOIN plans l ON l.id = p.plan_id
		WHERE p.run_id = runs.id AND l.status IN (?, ?) AND l.id <> ?))`

// RunsWaitedOnElsewhere returns which of the runs something other than the given sweep or plan
// (either may be "") still waits on: a user who submitted it directly, a sweep not cancelled,
// or a plan queued or running. Cancelling that sweep or plan leaves these runs alone.
func (s *Store) RunsWaitedOnElsewhere(ctx context.Context, runIDs []string, sweepID, planID string) (map[string]bool, error) {
	held := map[string]bool{}
	err := s.read(ctx, func(tx *sql.Tx) error {
		for _, id := range runIDs {
			var n int
			err := tx.QueryRowContext(ctx, `SELECT count(*) FROM runs WHERE id = ? AND `+wantedElsewhere,
				id, sweepID, StatusQueued, StatusRunning, planID).Scan(&n)
			if err != nil {
				return fmt.Errorf("run %q: %w", id, err)
			}
			if n > 0 {
				held[id] = true
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("store: runs waited on elsewhere: %w", err)
	}
	return held, nil
}

// CancelUnlessWanted cancels a queued or running run of a cancelled sweep or plan (the other id
// is "") unless something else still waits on it, with the same test as RunsWaitedOnElsewhere,
// in one statement, so a direct submission or another sweep that takes the run up while the
// cancel is under way is never cancelled with it. It returns whether the run was cancelled, and
// its job so the caller can cancel that too.
func (s *Store) CancelUnlessWanted(ctx context.Context, id, sweepID, planID string, now time.Time) (cancelled bool, jobID int64, err error) {
	err = s.write(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `
			UPDATE runs SET status = ?, finished_at = ?,
				error = CASE WHEN status = ? THEN ? ELSE ? END
			WHERE id = ? AND status IN (?, ?) AND NOT `+wantedElsewhere,
			StatusCancelled, toUnixMS(now),
			StatusRunning, "cancelled by a user before it finished", "cancelled by a user before it started",
			id, StatusQueued, StatusRunning, sweepID, StatusQueued, StatusRunning, planID)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return nil
		}
		cancelled = true
		var job sql.NullInt64
		if err := tx.QueryRowContext(ctx, `SELECT job_id FROM runs WHERE id = ?`, id).Scan(&job); err != nil {
			return err
		}
		jobID = job.Int64
		return nil
	})
	if err != nil {
		return false, 0, fmt.Errorf("store: cancel run %q unless wanted elsewhere: %w", id, err)
	}
	return cancelled, jobID, nil
}

// SweepCancelled says whether a user cancelled the sweep (and nobody asked for it again since).
func (s *Store) SweepCancelled(ctx context.Context, id string) (bool, error) {
	var c int
	err := s.read(ctx, func(tx *sql.Tx) error {
		return tx.QueryRowContext(ctx, `SELECT cancelled FROM sweeps WHERE id = ?`, id).Scan(&c)
	})
	if errors.Is(err, sql.ErrNoRows) {
		return false, fmt.Errorf("store: sweep %q: %w", id, ErrNotFound)
	}
	if err != nil {
		return false, fmt.Errorf("store: sweep %q cancelled: %w", id, err)
	}
	return c == 1, nil
}

// PlanStatus reads a plan's status alone.
func (s *Store) PlanStatus(ctx context.Context, id string) (string, error) {
	var status string
	err := s.read(ctx, func(tx *sql.Tx) error {
		return tx.QueryRowContext(ctx, `SELECT status FROM plans WHERE id = ?`, id).Scan(&status)
	})
	if errors.Is(err, sql.ErrNoRows) {
		return "", fmt.Errorf("store: plan %q: %w", id, ErrNotFound)
	}
	if err != nil {
		return "", fmt.Errorf("store: plan %q status: %w", id, err)
	}
	return status, nil
}

// PlanSummary is one plan in the plans list: what it is, its state and what it asked.
type PlanSummary struct {
	ID          string
	Name        string
	Status      string
	RequestJSON []byte
	CreatedAt   time.Time
	FinishedAt  time.Time
}

// ListPlans returns one page of plans, newest first, and the total number of plans.
func (s *Store) ListPlans(ctx context.Context, limit, offset int) ([]PlanSummary, int, error) {
	if limit < 1 || offset < 0 {
		return nil, 0, fmt.Errorf("store: list plans: limit %d, offset %d: limit must be at least 1 and offset at least 0: %w", limit, offset, ErrInvalid)
	}
	var (
		plans []PlanSummary
		total int
	)
	err := s.read(ctx, func(tx *sql.Tx) error {
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM plans`).Scan(&total); err != nil {
			return err
		}
		rows, err := tx.QueryContext(ctx, `
			SELECT id, name, status, request_json, created_at, finished_at
			FROM plans ORDER BY created_at DESC, id DESC LIMIT ? OFFSET ?`, limit, offset)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var (
				p                 PlanSummary
				created, finished sql.NullInt64
			)
			if err := rows.Scan(&p.ID, &p.Name, &p.Status, &p.RequestJSON, &created, &finished); err != nil {
				return err
			}
			p.CreatedAt, p.FinishedAt = fromNullUnixMS(created), fromNullUnixMS(finished)
			plans = append(plans, p)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, 0, fmt.Errorf("store: list plans: %w", err)
	}
	return plans, total, nil
}
