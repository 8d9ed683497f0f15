package store

import (
	"context"
	"database/sql"
	"fmt"
	"time"
)

// Gauges are the counts an operator watches (GET /metrics): runs by status, the oldest queued
// run, and the plans and sweeps in flight. Each is one indexed query; a scrape every 15 s costs
// the database little.
type Gauges struct {
	RunsByStatus map[string]int
	// OldestQueued is when the oldest queued run was created (zero when none is queued).
	OldestQueued time.Time
	// PlansInFlight are plans queued or running; SweepsInFlight are sweeps not cancelled with a
	// point whose run is queued or running.
	PlansInFlight, SweepsInFlight int
}

// Gauges reads the gauges in one read transaction.
func (s *Store) Gauges(ctx context.Context) (Gauges, error) {
	g := Gauges{RunsByStatus: map[string]int{}}
	err := s.read(ctx, func(tx *sql.Tx) error {
		g.RunsByStatus = map[string]int{}
		rows, err := tx.QueryContext(ctx, `SELECT status, count(*) FROM runs GROUP BY status`)
		if err != nil {
			return err
		}
		for rows.Next() {
			var status string
			var n int
			if err := rows.Scan(&status, &n); err != nil {
				_ = rows.Close()
				return err
			}
			g.RunsByStatus[status] = n
		}
		if err := rows.Close(); err != nil {
			return err
		}
		var oldest sql.NullInt64
		if err := tx.QueryRowContext(ctx, `SELECT min(created_at) FROM runs WHERE status = 'queued'`).Scan(&oldest); err != nil {
			return err
		}
		g.OldestQueued = time.Time{}
		if oldest.Valid {
			g.OldestQueued = time.UnixMilli(oldest.Int64).UTC()
		}
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM plans WHERE status IN ('queued', 'running')`).Scan(&g.PlansInFlight); err != nil {
			return err
		}
		return tx.QueryRowContext(ctx, `
			SELECT count(DISTINCT p.sweep_id) FROM sweep_points p
			JOIN sweeps s ON s.id = p.sweep_id
			JOIN runs r ON r.id = p.run_id
			WHERE s.cancelled = 0 AND r.status IN ('queued', 'running')`).Scan(&g.SweepsInFlight)
	})
	if err != nil {
		return Gauges{}, fmt.Errorf("store: gauges: %w", err)
	}
	return g, nil
}
