package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// Ownership (migration 00010): runs, sweeps, plans, traces and calibrations record who created
// them. The caller says who is asking through the context (WithOwner), so every way a row is
// made records its owner without each method taking one more argument. A row stored before
// ownership existed has no owner at all (Owner answers Known=false); a row made by a server
// without identities has the owner "".

type ownerKey struct{}

// WithOwner returns a context whose store writes record user as the owner of the rows they
// create. Without it, rows are created with the owner "".
func WithOwner(ctx context.Context, user string) context.Context {
	return context.WithValue(ctx, ownerKey{}, user)
}

// OwnerFrom is the user WithOwner put in ctx ("" when none).
func OwnerFrom(ctx context.Context) string {
	u, _ := ctx.Value(ownerKey{}).(string)
	return u
}

// Owner is who created a row. Known is false for rows stored before owners were recorded.
type Owner struct {
	User  string
	Known bool
}

func ownerOf(v sql.NullString) Owner { return Owner{User: v.String, Known: v.Valid} }

// OwnerKind names a table whose rows have owners.
type OwnerKind string

// The kinds of rows with owners.
const (
	OwnedRun   OwnerKind = "run"
	OwnedSweep OwnerKind = "sweep"
	OwnedPlan  OwnerKind = "plan"
	OwnedTrace OwnerKind = "trace"
)

var ownerQueries = map[OwnerKind]string{
	OwnedRun:   `SELECT owner FROM runs WHERE id = ?`,
	OwnedSweep: `SELECT owner FROM sweeps WHERE id = ?`,
	OwnedPlan:  `SELECT owner FROM plans WHERE id = ?`,
	OwnedTrace: `SELECT owner FROM traces WHERE sha256 = ?`,
}

// OwnerOf reads who created the run, sweep, plan or trace with this id (ErrNotFound if none).
func (s *Store) OwnerOf(ctx context.Context, kind OwnerKind, id string) (Owner, error) {
	q, ok := ownerQueries[kind]
	if !ok {
		return Owner{}, fmt.Errorf("store: owner of %s %q: unknown kind: %w", kind, id, ErrInvalid)
	}
	var v sql.NullString
	err := s.read(ctx, func(tx *sql.Tx) error { return tx.QueryRowContext(ctx, q, id).Scan(&v) })
	if errors.Is(err, sql.ErrNoRows) {
		return Owner{}, fmt.Errorf("store: owner of %s %q: %w", kind, id, ErrNotFound)
	}
	if err != nil {
		return Owner{}, fmt.Errorf("store: owner of %s %q: %w", kind, id, err)
	}
	return ownerOf(v), nil
}

// CalibrationOwner reads who uploaded a calibration (ErrNotFound if none).
func (s *Store) CalibrationOwner(ctx context.Context, k CalibrationKey) (Owner, error) {
	var v sql.NullString
	err := s.read(ctx, func(tx *sql.Tx) error {
		return tx.QueryRowContext(ctx, `SELECT owner FROM calibrations WHERE sha256 = ? AND worker = ? AND skip = ?`,
			k.SHA256, k.Worker, k.Skip).Scan(&v)
	})
	if errors.Is(err, sql.ErrNoRows) {
		return Owner{}, fmt.Errorf("store: owner of calibration %s: %w", k.SHA256, ErrNotFound)
	}
	if err != nil {
		return Owner{}, fmt.Errorf("store: owner of calibration %s: %w", k.SHA256, err)
	}
	return ownerOf(v), nil
}

// Waiter is an active sweep or plan that lists a run.
type Waiter struct {
	Kind  OwnerKind // OwnedSweep or OwnedPlan
	ID    string
	Owner Owner
}

// WaitersOtherThan lists the active sweeps (not cancelled) and plans (queued or running) that
// list the run and are not owned by user: cancelling the run directly would fail them, so a
// user may not do it from under their owners.
func (s *Store) WaitersOtherThan(ctx context.Context, runID, user string) ([]Waiter, error) {
	var out []Waiter
	err := s.read(ctx, func(tx *sql.Tx) error {
		out = nil
		rows, err := tx.QueryContext(ctx, `
			SELECT 'sweep', w.id, w.owner FROM sweep_points p JOIN sweeps w ON w.id = p.sweep_id
				WHERE p.run_id = ? AND w.cancelled = 0 AND (w.owner IS NULL OR w.owner <> ?)
			UNION
			SELECT 'plan', l.id, l.owner FROM plan_points p JOIN plans l ON l.id = p.plan_id
				WHERE p.run_id = ? AND l.status IN (?, ?) AND (l.owner IS NULL OR l.owner <> ?)
			ORDER BY 1, 2`, runID, user, runID, StatusQueued, StatusRunning, user)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var w Waiter
			var kind string
			var owner sql.NullString
			if err := rows.Scan(&kind, &w.ID, &owner); err != nil {
				return err
			}
			w.Kind, w.Owner = OwnerKind(kind), ownerOf(owner)
			out = append(out, w)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, fmt.Errorf("store: sweeps and plans waiting on run %q: %w", runID, err)
	}
	return out, nil
}

// Usage is what one user holds, for the per-user quotas.
type Usage struct {
	// UnfinishedRuns are the user's runs queued or running.
	UnfinishedRuns int
	// Sweeps are the user's sweeps not cancelled, with how many of their recorded points have
	// finished (the caller knows from the axes how many points each has in all).
	Sweeps []SweepUsage
	// UploadBytes is the size of the traces and calibration inputs the user uploaded.
	UploadBytes int64
}

// SweepUsage is one of a user's active sweeps.
type SweepUsage struct {
	ID       string
	AxesJSON []byte
	Finished int
}

// UsageOf reads what user holds, in one snapshot.
func (s *Store) UsageOf(ctx context.Context, user string) (Usage, error) {
	var u Usage
	err := s.read(ctx, func(tx *sql.Tx) error {
		u = Usage{}
		if err := tx.QueryRowContext(ctx, ownerUnfinishedRunsSQL, user).Scan(&u.UnfinishedRuns); err != nil {
			return err
		}
		var traces, calibrations sql.NullInt64
		if err := tx.QueryRowContext(ctx, ownerTraceBytesSQL, user).Scan(&traces); err != nil {
			return err
		}
		if err := tx.QueryRowContext(ctx, ownerCalibrationBytesSQL, user).Scan(&calibrations); err != nil {
			return err
		}
		u.UploadBytes = traces.Int64 + calibrations.Int64
		rows, err := tx.QueryContext(ctx, ownerSweepsSQL+` ORDER BY w.created_at, w.id`, user)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var sw SweepUsage
			if err := rows.Scan(&sw.ID, &sw.AxesJSON, &sw.Finished); err != nil {
				return err
			}
			u.Sweeps = append(u.Sweeps, sw)
		}
		return rows.Err()
	})
	if err != nil {
		return Usage{}, fmt.Errorf("store: usage of %q: %w", user, err)
	}
	return u, nil
}

// claimPointOwners gives the runs just listed by a sweep or plan the owner of that sweep or plan
// when they have the owner "" (made in the background, where no request says who asks). Runs
// with an owner, and runs stored before owners were recorded (NULL), keep theirs.
func claimPointOwners(ctx context.Context, tx *sql.Tx, kind OwnerKind, id string, runIDs []string) error {
	q := `UPDATE runs SET owner = COALESCE((SELECT owner FROM sweeps WHERE id = ?), '') WHERE id = ? AND owner = ''`
	if kind == OwnedPlan {
		q = `UPDATE runs SET owner = COALESCE((SELECT owner FROM plans WHERE id = ?), '') WHERE id = ? AND owner = ''`
	}
	for _, run := range runIDs {
		if _, err := tx.ExecContext(ctx, q, id, run); err != nil {
			return fmt.Errorf("owner of run %s: %w", run, err)
		}
	}
	return nil
}

func sweepRunIDs(points []SweepPoint) []string {
	ids := make([]string, len(points))
	for i, p := range points {
		ids[i] = p.RunID
	}
	return ids
}

// ownerKeys is the table and key column of each kind, for OwnersOf.
var ownerKeys = map[OwnerKind][2]string{
	OwnedRun: {"runs", "id"}, OwnedSweep: {"sweeps", "id"}, OwnedPlan: {"plans", "id"}, OwnedTrace: {"traces", "sha256"},
}

// ownersChunk bounds the ids one query of OwnersOf names.
const ownersChunk = 500

// OwnersOf reads who created each of the runs, sweeps, plans or traces with these ids (missing
// ids are left out), in one snapshot: the lists' "by …". It asks for them all at once (in
// chunks of ownersChunk): a query per id was a round trip per row of a list on PostgreSQL (the
// traces page of the soak test of issue 29 made hundreds).
func (s *Store) OwnersOf(ctx context.Context, kind OwnerKind, ids []string) (map[string]Owner, error) {
	k, ok := ownerKeys[kind]
	if !ok {
		return nil, fmt.Errorf("store: owners of %s: unknown kind: %w", kind, ErrInvalid)
	}
	out := make(map[string]Owner, len(ids))
	err := s.read(ctx, func(tx *sql.Tx) error {
		clear(out)
		for chunk := range slices.Chunk(ids, ownersChunk) {
			args := make([]any, len(chunk))
			for i, id := range chunk {
				args[i] = id
			}
			rows, err := tx.QueryContext(ctx, `SELECT `+k[1]+`, owner FROM `+k[0]+` WHERE `+k[1]+` IN (?`+
				strings.Repeat(", ?", len(chunk)-1)+`)`, args...)
			if err != nil {
				return err
			}
			for rows.Next() {
				var id string
				var v sql.NullString
				if err := rows.Scan(&id, &v); err != nil {
					rows.Close()
					return err
				}
				out[id] = ownerOf(v)
			}
			rows.Close()
			if err := rows.Err(); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("store: owners of %d %ss: %w", len(ids), kind, err)
	}
	return out, nil
}
