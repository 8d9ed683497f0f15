package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// IdealFleet links a run to the run of the ideal fleet a diagnose plan measured it against
// (migration 00031): RunID is the plan's scenario run, IdealRunID the ideal fleet's run.
type IdealFleet struct {
	RunID, IdealRunID, PlanID string
	CreatedAt                 time.Time
}

// PutIdealFleet records that plan planID found idealRunID the ideal fleet of runID; a later
// plan's link replaces an earlier one.
func (s *Store) PutIdealFleet(ctx context.Context, f IdealFleet) error {
	if f.RunID == "" || f.IdealRunID == "" || f.PlanID == "" || f.CreatedAt.IsZero() {
		return fmt.Errorf("store: ideal fleet %+v: run, ideal run, plan and time are all needed: %w", f, ErrInvalid)
	}
	err := s.write(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO ideal_fleets (run_id, ideal_run_id, plan_id, created_at) VALUES (?, ?, ?, ?)
			ON CONFLICT (run_id) DO UPDATE SET ideal_run_id = excluded.ideal_run_id, plan_id = excluded.plan_id, created_at = excluded.created_at`,
			f.RunID, f.IdealRunID, f.PlanID, toUnixMS(f.CreatedAt))
		return err
	})
	if err != nil {
		return fmt.Errorf("store: put ideal fleet of run %q: %w", f.RunID, err)
	}
	return nil
}

// IdealFleetOf returns the ideal fleet recorded for runID (ErrNotFound when no diagnose plan
// of it has finished).
func (s *Store) IdealFleetOf(ctx context.Context, runID string) (IdealFleet, error) {
	f := IdealFleet{RunID: runID}
	var created sql.NullInt64
	err := s.read(ctx, func(tx *sql.Tx) error {
		return tx.QueryRowContext(ctx, `SELECT ideal_run_id, plan_id, created_at FROM ideal_fleets WHERE run_id = ?`, runID).
			Scan(&f.IdealRunID, &f.PlanID, &created)
	})
	if errors.Is(err, sql.ErrNoRows) {
		return IdealFleet{}, fmt.Errorf("store: ideal fleet of run %q: %w", runID, ErrNotFound)
	}
	if err != nil {
		return IdealFleet{}, fmt.Errorf("store: ideal fleet of run %q: %w", runID, err)
	}
	f.CreatedAt = fromNullUnixMS(created)
	return f, nil
}
