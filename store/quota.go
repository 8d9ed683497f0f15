package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// Per-user quotas are checked inside the write transaction that adds to what the user holds
// (finding M2 of the 2026-12b probe: a check before the transaction let ten parallel requests
// through a quota of three). The write transaction is BEGIN IMMEDIATE on SQLite, so one writer
// at a time counts and inserts; on PostgreSQL it first takes an advisory lock on the owner's
// quotas (or, for runs, on the run queue, whose bound counts everyone's), so one transaction
// at a time counts and inserts there too (write_lock.go). The caller puts the quota in the context (WithQuota) beside the owner
// (WithOwner); without either, nothing is checked.

// ErrQuota: the write would take the owner past a quota; the error is a *QuotaError.
var ErrQuota = errors.New("quota reached")

// Quota bounds what the context's owner may hold; a zero field does not limit.
type Quota struct {
	// QueuedRuns bounds the owner's runs queued or running.
	QueuedRuns int
	// SweepPoints bounds the points of the owner's sweeps not yet finished (fed to the queue
	// or not); PointsOf counts a sweep's points from its stored axes.
	SweepPoints int
	PointsOf    func(axesJSON []byte) (int, error)
	// UploadBytes bounds the bytes of traces and calibration inputs the owner has stored.
	UploadBytes int64
}

// QuotaError says which quota a write would pass: the owner held Used, the write adds Adding,
// and Limit is the quota.
type QuotaError struct {
	Quota               string // "queued runs", "sweep points", "stored uploads"
	Used, Adding, Limit int64
}

func (e *QuotaError) Error() string {
	return fmt.Sprintf("quota of %s: %d held, %d more asked for, %d allowed", e.Quota, e.Used, e.Adding, e.Limit)
}

func (e *QuotaError) Unwrap() error { return ErrQuota }

type quotaKey struct{}

// WithQuota returns a context whose store writes check q for the context's owner (WithOwner).
func WithQuota(ctx context.Context, q Quota) context.Context {
	return context.WithValue(ctx, quotaKey{}, q)
}

// WithoutRunQuota is ctx without its quota of queued runs: a sweep's points count against the
// quota of sweep points instead.
func WithoutRunQuota(ctx context.Context) context.Context {
	q, ok := ctx.Value(quotaKey{}).(Quota)
	if !ok || q.QueuedRuns == 0 {
		return ctx
	}
	q.QueuedRuns = 0
	return WithQuota(ctx, q)
}

// quotaOf is the quota and owner of ctx; ok is false when there is nothing to check.
func quotaOf(ctx context.Context) (q Quota, owner string, ok bool) {
	q, ok = ctx.Value(quotaKey{}).(Quota)
	owner = OwnerFrom(ctx)
	return q, owner, ok && owner != ""
}

// ownerUnfinishedRunsSQL counts an owner's runs queued or running. The statuses are written
// out, not bound: SQLite uses the partial index runs_owner_unfinished only when it can prove
// the query's WHERE implies the index's, which a bound parameter never lets it, and without
// the index it read every run's row to its last column, owner, through the overflow pages of
// its report (the soak test of issue 29: a fifth of the SQLite server's CPU, half of it in the
// write transaction that every submission waits for). PostgreSQL's generic plans are alike.
const ownerUnfinishedRunsSQL = `SELECT count(*) FROM runs WHERE owner = ? AND status IN ('queued', 'running')`

// ownerTraceBytesSQL and ownerCalibrationBytesSQL sum an owner's stored uploads (an input fitted
// with several options, worker and skip, is one upload); the indexes traces_owner and
// calibrations_owner cover them, so no content is read (migrations/00029_owner_indexes.sql).
const (
	ownerTraceBytesSQL       = `SELECT sum(size_bytes) FROM traces WHERE owner = ?`
	ownerCalibrationBytesSQL = `SELECT sum(size_bytes) FROM
		(SELECT max(size_bytes) AS size_bytes FROM calibrations WHERE owner = ? GROUP BY sha256) AS inputs`
)

// ownerSweepsSQL lists an owner's sweeps not cancelled, each with its points finished (through
// the index sweeps_owner_active).
const ownerSweepsSQL = `
	SELECT w.id, w.axes_json,
		(SELECT count(*) FROM sweep_points p JOIN runs r ON r.id = p.run_id
			WHERE p.sweep_id = w.id AND r.status NOT IN ('queued', 'running'))
	FROM sweeps w WHERE w.owner = ? AND w.cancelled = 0`

// checkRunQuota runs inside SubmitRuns after its inserts: added runs were queued by it.
func checkRunQuota(ctx context.Context, tx *sql.Tx, added int) error {
	q, owner, ok := quotaOf(ctx)
	if !ok || q.QueuedRuns <= 0 || added == 0 {
		return nil
	}
	var n int64
	if err := tx.QueryRowContext(ctx, ownerUnfinishedRunsSQL, owner).Scan(&n); err != nil {
		return err
	}
	if n > int64(q.QueuedRuns) {
		return &QuotaError{Quota: "queued runs", Used: n - int64(added), Adding: int64(added), Limit: int64(q.QueuedRuns)}
	}
	return nil
}

// checkSweepQuota runs inside CreateSweep before its inserts: the new sweep has axesJSON.
func checkSweepQuota(ctx context.Context, tx *sql.Tx, axesJSON []byte) error {
	q, owner, ok := quotaOf(ctx)
	if !ok || q.SweepPoints <= 0 || q.PointsOf == nil {
		return nil
	}
	adding, err := q.PointsOf(axesJSON)
	if err != nil {
		return err
	}
	used, err := sweepPointsInFlight(ctx, tx, owner, q.PointsOf)
	if err != nil {
		return err
	}
	if used+int64(adding) > int64(q.SweepPoints) {
		return &QuotaError{Quota: "sweep points", Used: used, Adding: int64(adding), Limit: int64(q.SweepPoints)}
	}
	return nil
}

// sweepPointsInFlight counts the points of owner's sweeps not cancelled and not yet finished.
func sweepPointsInFlight(ctx context.Context, tx *sql.Tx, owner string, pointsOf func([]byte) (int, error)) (int64, error) {
	rows, err := tx.QueryContext(ctx, ownerSweepsSQL, owner)
	if err != nil {
		return 0, err
	}
	defer rows.Close()
	var n int64
	for rows.Next() {
		var id string
		var axes []byte
		var finished int
		if err := rows.Scan(&id, &axes, &finished); err != nil {
			return 0, err
		}
		points, err := pointsOf(axes)
		if err != nil {
			return 0, fmt.Errorf("sweep %s: stored axes: %w", id, err)
		}
		n += int64(max(points-finished, 0))
	}
	return n, rows.Err()
}

// checkUploadQuota runs inside PutTrace and PutCalibration before their inserts, when the
// content (of size bytes) is not stored under the owner's uploads yet.
func checkUploadQuota(ctx context.Context, tx *sql.Tx, size int64) error {
	q, owner, ok := quotaOf(ctx)
	if !ok || q.UploadBytes <= 0 {
		return nil
	}
	used, err := uploadBytesOf(ctx, tx, owner)
	if err != nil {
		return err
	}
	if used+size > q.UploadBytes {
		return &QuotaError{Quota: "stored uploads", Used: used, Adding: size, Limit: q.UploadBytes}
	}
	return nil
}

// uploadBytesOf is what UsageOf counts as the owner's stored uploads: traces, and each
// calibration input once however many options it was fitted with.
func uploadBytesOf(ctx context.Context, tx *sql.Tx, owner string) (int64, error) {
	var traces, calibrations sql.NullInt64
	if err := tx.QueryRowContext(ctx, ownerTraceBytesSQL, owner).Scan(&traces); err != nil {
		return 0, err
	}
	if err := tx.QueryRowContext(ctx, ownerCalibrationBytesSQL, owner).Scan(&calibrations); err != nil {
		return 0, err
	}
	return traces.Int64 + calibrations.Int64, nil
}
