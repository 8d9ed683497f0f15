package store

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
)

// SweepVersion is what the page of sweep id shows that can change: whether it was cancelled, how
// many points were submitted, and each point's run status in point order (a run's headline is
// stored with its status, done). Two reads of the same sweep give the same version exactly when
// none of these changed; it costs one small read of the points' statuses, far less than the
// sweep itself (GetSweep), so the web layer checks it on every request of a cached sweep page.
func (s *Store) SweepVersion(ctx context.Context, id string) (string, error) {
	sum := sha256.New()
	var n int
	err := s.read(ctx, func(tx *sql.Tx) error {
		var cancelled int
		err := tx.QueryRowContext(ctx, `SELECT cancelled FROM sweeps WHERE id = ?`, id).Scan(&cancelled)
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("no sweep with id %q: %w", id, ErrNotFound)
		}
		if err != nil {
			return err
		}
		fmt.Fprintf(sum, "cancelled=%d\n", cancelled)
		rows, err := tx.QueryContext(ctx, `
			SELECT r.status FROM sweep_points p JOIN runs r ON r.id = p.run_id
			WHERE p.sweep_id = ? ORDER BY p.idx`, id)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var status string
			if err := rows.Scan(&status); err != nil {
				return err
			}
			sum.Write([]byte(status + "\n"))
			n++
		}
		return rows.Err()
	})
	if err != nil {
		return "", fmt.Errorf("store: version of sweep %q: %w", id, err)
	}
	return fmt.Sprintf("%d/%s", n, hex.EncodeToString(sum.Sum(nil)[:12])), nil
}
