package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Comparison is a pair of runs someone compared, with both runs' names and statuses.
type Comparison struct {
	A, B      RunSummary
	CreatedAt time.Time
}

// maxComparisonsPerRun bounds what a run page lists.
const maxComparisonsPerRun = 50

// RecordComparison remembers that runs a and b were compared; comparing them again (in either
// order) changes nothing, and neither does a comparison of a run that already has
// maxComparisonsPerRun (what its page lists), so the table grows at most linearly with the runs.
// created says whether a row was added (the run pages of a and b then change).
func (s *Store) RecordComparison(ctx context.Context, a, b string, now time.Time) (created bool, err error) {
	if a == "" || b == "" || a == b {
		return false, fmt.Errorf("store: record comparison %q / %q: two different run ids are needed: %w", a, b, ErrInvalid)
	}
	err = s.write(ctx, func(tx *sql.Tx) error {
		created = false
		var n int
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM comparisons
			WHERE (run_a = ? AND run_b = ?) OR (run_a = ? AND run_b = ?)`, a, b, b, a).Scan(&n); err != nil {
			return err
		}
		if n > 0 {
			return nil
		}
		for _, id := range []string{a, b} {
			if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM comparisons WHERE run_a = ? OR run_b = ?`, id, id).Scan(&n); err != nil {
				return err
			}
			if n >= maxComparisonsPerRun {
				return nil
			}
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO comparisons (run_a, run_b, created_at) VALUES (?, ?, ?)`,
			a, b, toUnixMS(now)); err != nil {
			return err
		}
		created = true
		return nil
	})
	if err != nil {
		return false, fmt.Errorf("store: record comparison %q / %q: %w", a, b, err)
	}
	return created, nil
}

// ComparisonsOf lists the comparisons run id belongs to, newest first (at most 50).
func (s *Store) ComparisonsOf(ctx context.Context, id string) ([]Comparison, error) {
	var out []Comparison
	err := s.read(ctx, func(tx *sql.Tx) error {
		rows, err := tx.QueryContext(ctx, `
			SELECT c.created_at, a.id, a.name, a.status, b.id, b.name, b.status
			FROM comparisons c
			JOIN runs a ON a.id = c.run_a
			JOIN runs b ON b.id = c.run_b
			WHERE c.run_a = ? OR c.run_b = ?
			ORDER BY c.created_at DESC, c.run_a, c.run_b LIMIT ?`, id, id, maxComparisonsPerRun)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var (
				c       Comparison
				created int64
			)
			if err := rows.Scan(&created, &c.A.ID, &c.A.Name, &c.A.Status, &c.B.ID, &c.B.Name, &c.B.Status); err != nil {
				return err
			}
			c.CreatedAt = time.UnixMilli(created).UTC()
			out = append(out, c)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, fmt.Errorf("store: comparisons of run %q: %w", id, err)
	}
	return out, nil
}

// RunsByID returns the runs among ids that exist (without scenario and report), in no
// particular order; unknown ids are left out.
func (s *Store) RunsByID(ctx context.Context, ids ...string) ([]RunSummary, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	var out []RunSummary
	err := s.read(ctx, func(tx *sql.Tx) error {
		args := make([]any, len(ids))
		for i, id := range ids {
			args[i] = id
		}
		rows, err := tx.QueryContext(ctx, `SELECT id, name, status FROM runs WHERE id IN (?`+
			strings.Repeat(", ?", len(ids)-1)+`)`, args...)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var r RunSummary
			if err := rows.Scan(&r.ID, &r.Name, &r.Status); err != nil {
				return err
			}
			out = append(out, r)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, fmt.Errorf("store: runs by id: %w", err)
	}
	return out, nil
}

// PageVersion is what a cached page of run id depends on besides the run itself: its status,
// how many of the given related runs (its counterparts) exist, how many comparisons it is
// part of and the run of its ideal fleet (IdealFleetOf). One query; the web layer re-renders a
// cached page when it changes.
func (s *Store) PageVersion(ctx context.Context, id string, related ...string) (string, error) {
	var (
		status      string
		nRel, nComp int64
		ideal       string
	)
	err := s.read(ctx, func(tx *sql.Tx) error {
		args := []any{}
		relSQL := "0"
		if len(related) > 0 {
			relSQL = `(SELECT count(*) FROM runs WHERE id IN (?` + strings.Repeat(", ?", len(related)-1) + `))`
			for _, r := range related {
				args = append(args, r)
			}
		}
		args = append(args, id, id, id, id)
		err := tx.QueryRowContext(ctx, `SELECT status, `+relSQL+`,
			(SELECT count(*) FROM comparisons WHERE run_a = ? OR run_b = ?),
			COALESCE((SELECT ideal_run_id FROM ideal_fleets WHERE run_id = ?), '')
			FROM runs WHERE id = ?`, args...).Scan(&status, &nRel, &nComp, &ideal)
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("no run with id %q: %w", id, ErrNotFound)
		}
		return err
	})
	if err != nil {
		return "", fmt.Errorf("store: page version of run %q: %w", id, err)
	}
	return fmt.Sprintf("%s/%d/%d/%s", status, nRel, nComp, ideal), nil
}
