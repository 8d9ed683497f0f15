package store

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"
)

// Run statuses. A run moves queued → running → done | failed | cancelled; a failed or cancelled
// run goes back to queued when its scenario is submitted again, and a running one goes back to
// queued when the server shuts down mid-run.
const (
	StatusQueued    = "queued"
	StatusRunning   = "running"
	StatusDone      = "done"
	StatusFailed    = "failed"
	StatusCancelled = "cancelled"
)

// Run is one simulation run of one scenario.
type Run struct {
	ID, Name, Status, Error string
	Progress                float64 // 0…1
	ScenarioJSON            []byte  // canonical scenario
	// ReportJSON is the full report, per-request rows included; GetRun leaves it nil (stream it
	// with OpenReport), so a page view never holds it.
	ReportJSON []byte
	// SummaryJSON is the report without its per-request rows (what pages, CSV and charts read);
	// nil unless done, and nil for a run finished before summaries were stored (the web layer
	// computes it from the report once and stores it with SetSummary).
	SummaryJSON []byte
	// HeadlineJSON is a small JSON document the web layer stores for the runs list; nil unless done.
	HeadlineJSON                     []byte
	CreatedAt, StartedAt, FinishedAt time.Time // zero when not set; UTC
	// Attempts counts how many times the run was started, across retries and restarts.
	Attempts int
	// JobID is the job-queue job of the run's latest submission (0 before one exists).
	JobID int64
	// Worker is "host:pid" of the process that started the latest attempt: for a done run, the
	// one that produced the report.
	Worker string
}

// RunSummary is what the runs list shows: a Run without the scenario and the report.
type RunSummary struct {
	ID, Name, Status, Error string
	Progress                float64
	HeadlineJSON            []byte
	CreatedAt, FinishedAt   time.Time
	// Attempts and Worker are as in Run, so a list and a run's own record agree.
	Attempts int
	Worker   string
}

// CreateRun inserts a queued run, or returns the existing one with created=false. An existing
// run that failed or was cancelled is reset to queued (created=true) so resubmitting retries it;
// it keeps its name, its creation time and its attempt count.
func (s *Store) CreateRun(ctx context.Context, id, name string, scenarioJSON []byte, now time.Time) (run Run, created bool, err error) {
	if id == "" {
		return Run{}, false, fmt.Errorf("store: create run: empty id: %w", ErrInvalid)
	}
	if len(scenarioJSON) == 0 {
		return Run{}, false, fmt.Errorf("store: create run %q: empty scenario: %w", id, ErrInvalid)
	}
	if now.IsZero() {
		return Run{}, false, fmt.Errorf("store: create run %q: zero creation time: %w", id, ErrInvalid)
	}
	err = s.write(ctx, func(tx *sql.Tx) error {
		existing, err := findRun(ctx, tx, id, true)
		switch {
		case errors.Is(err, ErrNotFound):
			if err := insertRun(ctx, tx, id, name, scenarioJSON, now); err != nil {
				return err
			}
			created = true
			run, err = findRun(ctx, tx, id, true) // read back so times carry the stored precision
			return err
		case err != nil:
			return err
		}
		// The id is derived from the scenario, so a different scenario under the same id is a
		// caller bug (or a hash collision) that must not silently serve the wrong report.
		if !bytes.Equal(existing.ScenarioJSON, scenarioJSON) {
			return fmt.Errorf("run %q exists with a different scenario: %w", id, ErrConflict)
		}
		if existing.Status != StatusFailed && existing.Status != StatusCancelled {
			run = existing
			return nil
		}
		if err := requeueRun(ctx, tx, id); err != nil {
			return err
		}
		run, err = findRun(ctx, tx, id, true)
		created = true
		return err
	})
	if err != nil {
		return Run{}, false, fmt.Errorf("store: create run %q: %w", id, err)
	}
	return run, created, nil
}

// GetRun returns the run with its scenario, summary and headline: everything stored for it but
// the full report (see OpenReport).
func (s *Store) GetRun(ctx context.Context, id string) (Run, error) {
	var run Run
	err := s.read(ctx, func(tx *sql.Tx) (err error) {
		run, err = findRun(ctx, tx, id, true)
		return err
	})
	if err != nil {
		return Run{}, fmt.Errorf("store: get run %q: %w", id, err)
	}
	return run, nil
}

// SetSummary stores the summary of a done run that has none yet (a run finished before
// summaries were stored). It does nothing when the run is not done or already has one.
func (s *Store) SetSummary(ctx context.Context, id string, summaryJSON []byte) error {
	if len(summaryJSON) == 0 {
		return fmt.Errorf("store: set summary of run %q: empty summary: %w", id, ErrInvalid)
	}
	err := s.write(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `UPDATE runs SET summary_json = ? WHERE id = ? AND status = ? AND summary_json IS NULL`,
			summaryJSON, id, StatusDone)
		return err
	})
	if err != nil {
		return fmt.Errorf("store: set summary of run %q: %w", id, err)
	}
	return nil
}

// ReplaceSummary stores summaryJSON as the summary of a done run in place of previous, the
// summary it was derived from (a summary of an earlier layout, rewritten in the current one);
// it does nothing when the stored summary is no longer previous or the run is not done.
func (s *Store) ReplaceSummary(ctx context.Context, id string, previous, summaryJSON []byte) error {
	if len(summaryJSON) == 0 || len(previous) == 0 {
		return fmt.Errorf("store: replace summary of run %q: empty summary: %w", id, ErrInvalid)
	}
	err := s.write(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `UPDATE runs SET summary_json = ? WHERE id = ? AND status = ? AND summary_json = ?`,
			summaryJSON, id, StatusDone, previous)
		return err
	})
	if err != nil {
		return fmt.Errorf("store: replace summary of run %q: %w", id, err)
	}
	return nil
}

// GetRunStatus returns the run without its scenario, report and headline: cheap enough to poll.
func (s *Store) GetRunStatus(ctx context.Context, id string) (Run, error) {
	var run Run
	err := s.read(ctx, func(tx *sql.Tx) (err error) {
		run, err = findRun(ctx, tx, id, false)
		return err
	})
	if err != nil {
		return Run{}, fmt.Errorf("store: get run status %q: %w", id, err)
	}
	return run, nil
}

// ListRuns returns one page of runs, newest first, and the total number of runs.
func (s *Store) ListRuns(ctx context.Context, limit, offset int) ([]RunSummary, int, error) {
	if limit < 1 || offset < 0 {
		return nil, 0, fmt.Errorf("store: list runs: limit %d, offset %d: limit must be at least 1 and offset at least 0: %w", limit, offset, ErrInvalid)
	}
	var (
		runs  []RunSummary
		total int
	)
	err := s.read(ctx, func(tx *sql.Tx) (err error) {
		runs, total, err = runSummaryPage(ctx, tx, "", nil, limit, offset)
		return err
	})
	if err != nil {
		return nil, 0, fmt.Errorf("store: list runs: %w", err)
	}
	return runs, total, nil
}

// runSummaryPage reads one page of the runs that where (a WHERE clause with its args, or
// "") selects, newest first, and how many it selects in all: ListRuns and SearchRuns.
func runSummaryPage(ctx context.Context, tx *sql.Tx, where string, args []any, limit, offset int) ([]RunSummary, int, error) {
	var total int
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM runs `+where, args...).Scan(&total); err != nil {
		return nil, 0, err
	}
	rows, err := tx.QueryContext(ctx, `
		SELECT id, name, status, error, progress, headline_json, created_at, finished_at, attempts, worker
		FROM runs `+where+` ORDER BY created_at DESC, id DESC LIMIT ? OFFSET ?`, append(args, limit, offset)...)
	if err != nil {
		return nil, 0, err
	}
	defer rows.Close()
	var runs []RunSummary
	for rows.Next() {
		var (
			r                 RunSummary
			created, finished sql.NullInt64
		)
		if err := rows.Scan(&r.ID, &r.Name, &r.Status, &r.Error, &r.Progress, &r.HeadlineJSON, &created, &finished, &r.Attempts, &r.Worker); err != nil {
			return nil, 0, err
		}
		r.CreatedAt, r.FinishedAt = fromNullUnixMS(created), fromNullUnixMS(finished)
		runs = append(runs, r)
	}
	return runs, total, rows.Err()
}

// SearchRuns is ListRuns restricted to runs whose name contains nameContains (case-insensitive
// for ASCII letters); an empty filter lists every run.
func (s *Store) SearchRuns(ctx context.Context, nameContains string, limit, offset int) ([]RunSummary, int, error) {
	if nameContains == "" {
		return s.ListRuns(ctx, limit, offset)
	}
	if limit < 1 || offset < 0 {
		return nil, 0, fmt.Errorf("store: search runs: limit %d, offset %d: limit must be at least 1 and offset at least 0: %w", limit, offset, ErrInvalid)
	}
	pattern := "%" + likeEscaper.Replace(strings.ToLower(nameContains)) + "%"
	var (
		runs  []RunSummary
		total int
	)
	err := s.read(ctx, func(tx *sql.Tx) (err error) {
		runs, total, err = runSummaryPage(ctx, tx, `WHERE lower(name) LIKE ? ESCAPE '\'`, []any{pattern}, limit, offset)
		return err
	})
	if err != nil {
		return nil, 0, fmt.Errorf("store: search runs for %q: %w", nameContains, err)
	}
	return runs, total, nil
}

// likeEscaper makes user text literal inside a LIKE pattern (with ESCAPE '\').
var likeEscaper = strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`)

// StartRun moves a queued run to running and counts the attempt. It returns ErrConflict when
// the run is not queued (already running, done, or cancelled while it waited).
func (s *Store) StartRun(ctx context.Context, id string, now time.Time) error {
	err := s.write(ctx, func(tx *sql.Tx) error {
		if err := requireStatus(ctx, tx, id, "start", StatusQueued); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `
			UPDATE runs SET status = ?, progress = 0, error = '', started_at = ?, finished_at = NULL,
				attempts = attempts + 1
			WHERE id = ?`, StatusRunning, toUnixMS(now), id)
		return err
	})
	if err != nil {
		return fmt.Errorf("store: start run %q: %w", id, err)
	}
	return nil
}

// SetProgress records how far a running run is (0…1). It returns ErrConflict when the run is no
// longer running, which tells the worker the run was cancelled or finished elsewhere.
func (s *Store) SetProgress(ctx context.Context, id string, p float64) error {
	if math.IsNaN(p) || p < 0 || p > 1 {
		return fmt.Errorf("store: set progress of run %q to %v: progress must be within 0…1: %w", id, p, ErrInvalid)
	}
	err := s.write(ctx, func(tx *sql.Tx) error {
		if err := requireStatus(ctx, tx, id, "set progress", StatusRunning); err != nil {
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

// FinishRun stores the report of a running run and marks it done, without a summary (the web
// layer computes one on first view; FinishClaimed stores both).
func (s *Store) FinishRun(ctx context.Context, id string, reportJSON, headlineJSON []byte, now time.Time) error {
	if len(reportJSON) == 0 {
		return fmt.Errorf("store: finish run %q: empty report: %w", id, ErrInvalid)
	}
	rep, err := compressReport(reportJSON)
	if err != nil {
		return fmt.Errorf("store: finish run %q: compress the report: %w", id, err)
	}
	err = s.write(ctx, func(tx *sql.Tx) error {
		if err := requireStatus(ctx, tx, id, "finish", StatusRunning); err != nil {
			return err
		}
		if err := storeReportChunks(ctx, tx, id, rep); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `
			UPDATE runs SET status = ?, progress = 1, error = '', summary_json = NULL,
				headline_json = ?, finished_at = ?
			WHERE id = ?`, StatusDone, headlineJSON, toUnixMS(now), id)
		return err
	})
	if err != nil {
		return fmt.Errorf("store: finish run %q: %w", id, err)
	}
	return nil
}

// EndRun ends a queued or running run as failed or cancelled, with a message saying why.
func (s *Store) EndRun(ctx context.Context, id, status, msg string, now time.Time) error {
	if status != StatusFailed && status != StatusCancelled {
		return fmt.Errorf("store: end run %q as %q: status must be %q or %q: %w", id, status, StatusFailed, StatusCancelled, ErrInvalid)
	}
	err := s.write(ctx, func(tx *sql.Tx) error {
		if err := requireStatus(ctx, tx, id, "end", StatusQueued, StatusRunning); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `
			UPDATE runs SET status = ?, error = ?, finished_at = ? WHERE id = ?`,
			status, msg, toUnixMS(now), id)
		return err
	})
	if err != nil {
		return fmt.Errorf("store: end run %q as %s: %w", id, status, err)
	}
	return nil
}

// Requeue puts a running run back in the queue, for a shutdown that interrupts it. Requeueing a
// run that is already queued does nothing; a finished run returns ErrConflict.
func (s *Store) Requeue(ctx context.Context, id string) error {
	err := s.write(ctx, func(tx *sql.Tx) error {
		status, err := findStatus(ctx, tx, id)
		if err != nil {
			return err
		}
		switch status {
		case StatusQueued:
			return nil
		case StatusRunning:
			return requeueRun(ctx, tx, id)
		default:
			return fmt.Errorf("cannot requeue: run is %s, not running: %w", status, ErrConflict)
		}
	})
	if err != nil {
		return fmt.Errorf("store: requeue run %q: %w", id, err)
	}
	return nil
}

// UnfinishedRuns returns the runs left queued or running, oldest first, with their scenarios, so
// a restarted server can run them again.
func (s *Store) UnfinishedRuns(ctx context.Context) ([]Run, error) {
	var runs []Run
	err := s.read(ctx, func(tx *sql.Tx) error {
		rows, err := tx.QueryContext(ctx, `
			SELECT `+runColumnsWithBlobs+` FROM runs
			WHERE status IN ('queued', 'running') ORDER BY created_at, id`)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			r, err := scanRun(rows, true)
			if err != nil {
				return err
			}
			runs = append(runs, r)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, fmt.Errorf("store: list unfinished runs: %w", err)
	}
	return runs, nil
}

const (
	runColumns          = `id, name, status, error, progress, created_at, started_at, finished_at, attempts, job_id, worker`
	runColumnsWithBlobs = runColumns + `, scenario_json, summary_json, headline_json`
)

// findRun reads one run; withBlobs also reads the scenario, summary and headline (never the
// report).
func findRun(ctx context.Context, tx *sql.Tx, id string, withBlobs bool) (Run, error) {
	cols := runColumns
	if withBlobs {
		cols = runColumnsWithBlobs
	}
	run, err := scanRun(tx.QueryRowContext(ctx, `SELECT `+cols+` FROM runs WHERE id = ?`, id), withBlobs)
	if errors.Is(err, sql.ErrNoRows) {
		return Run{}, fmt.Errorf("no run with id %q: %w", id, ErrNotFound)
	}
	return run, err
}

// scanRun reads the columns of runColumns (then runColumnsWithBlobs' extra ones when withBlobs).
func scanRun(row interface{ Scan(...any) error }, withBlobs bool) (Run, error) {
	var (
		r                                 Run
		created, started, finished, jobID sql.NullInt64
	)
	dest := []any{&r.ID, &r.Name, &r.Status, &r.Error, &r.Progress, &created, &started, &finished, &r.Attempts, &jobID, &r.Worker}
	if withBlobs {
		dest = append(dest, &r.ScenarioJSON, &r.SummaryJSON, &r.HeadlineJSON)
	}
	if err := row.Scan(dest...); err != nil {
		return Run{}, err
	}
	r.CreatedAt, r.StartedAt, r.FinishedAt = fromNullUnixMS(created), fromNullUnixMS(started), fromNullUnixMS(finished)
	r.JobID = jobID.Int64
	return r, nil
}

func insertRun(ctx context.Context, tx *sql.Tx, id, name string, scenarioJSON []byte, now time.Time) error {
	_, err := tx.ExecContext(ctx, `
		INSERT INTO runs (id, name, status, progress, scenario_json, created_at, attempts, owner)
		VALUES (?, ?, ?, 0, ?, ?, 0, ?)`, id, name, StatusQueued, scenarioJSON, toUnixMS(now), OwnerFrom(ctx))
	return err
}

// requeueRun resets a run to queued, dropping what a previous attempt left behind.
func requeueRun(ctx context.Context, tx *sql.Tx, id string) error {
	if _, err := tx.ExecContext(ctx, `DELETE FROM run_report_chunks WHERE run_id = ?`, id); err != nil {
		return err
	}
	_, err := tx.ExecContext(ctx, `
		UPDATE runs SET status = ?, error = '', progress = 0, report_json = NULL, summary_json = NULL,
			report_bytes = NULL, report_gzip_bytes = NULL, report_chunks = NULL,
			headline_json = NULL, started_at = NULL, finished_at = NULL
		WHERE id = ?`, StatusQueued, id)
	return err
}

func findStatus(ctx context.Context, tx *sql.Tx, id string) (string, error) {
	var status string
	err := tx.QueryRowContext(ctx, `SELECT status FROM runs WHERE id = ?`, id).Scan(&status)
	if errors.Is(err, sql.ErrNoRows) {
		return "", fmt.Errorf("no run with id %q: %w", id, ErrNotFound)
	}
	return status, err
}

// requireStatus returns ErrNotFound for an unknown run and ErrConflict unless its status is one
// of allowed.
func requireStatus(ctx context.Context, tx *sql.Tx, id, op string, allowed ...string) error {
	status, err := findStatus(ctx, tx, id)
	if err != nil {
		return err
	}
	for _, a := range allowed {
		if status == a {
			return nil
		}
	}
	return fmt.Errorf("cannot %s: run is %s, want %v: %w", op, status, allowed, ErrConflict)
}
