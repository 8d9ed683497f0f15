package runs

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver"
	"github.com/riverqueue/river/riverdriver/riverdatabasesql"
	"github.com/riverqueue/river/riverdriver/riversqlite"
	"github.com/riverqueue/river/rivermigrate"
	"github.com/riverqueue/river/rivertype"

	"github.com/scalein-planner/scalein/store"
)

// The job queue is River (github.com/riverqueue/river), with its tables in the store's
// database: riversqlite on the SQLite file (River's advice for SQLite: one connection, which is
// the store's single writer), riverdatabasesql on PostgreSQL over the store's pool, with a pgx
// connection for LISTEN so workers hear of new jobs at once. Both drivers work on *sql.Tx, so a
// run's row and its job are inserted in one store transaction (SubmitRuns).

const (
	// jobTimeoutSlack lets a run's own wall-time limit fire (and record why) before River's job
	// timeout, which is the limit plus this.
	jobTimeoutSlack = 2 * time.Second
	// budgetSnooze is how long a job that waited in vain for the memory budget is put aside.
	budgetSnooze = time.Second
	// takeoverPoll is how often a running run re-reads its row to notice a cancel made by
	// another process (or its run handed to another worker).
	takeoverPoll = 500 * time.Millisecond
)

// errTakenOver is the cause of a run's context when its row says it was cancelled or is no
// longer this attempt's.
var errTakenOver = errors.New("the run was cancelled or taken over elsewhere")

// runArgs is the job that works one stored run.
type runArgs struct {
	RunID string `json:"run_id"`
}

func (runArgs) Kind() string { return "scalein_run" }

// runWorker executes run jobs.
type runWorker struct {
	river.WorkerDefaults[runArgs]
	s *Service
}

func (w *runWorker) Timeout(*river.Job[runArgs]) time.Duration {
	return w.s.jobTimeout()
}

// jobTimeout is River's limit on one attempt at a run: the longest wait for the memory budget,
// then the run's own wall-time limit, then a slack so that limit fires (and records why) first.
func (s *Service) jobTimeout() time.Duration {
	return budgetWait + s.cfg.RunTimeout + jobTimeoutSlack
}

// budgetWait is how long a job waits for its run's memory estimate to fit beside the runs
// running here before it is snoozed. A snooze is not an attempt (River counts only attempts
// against MaxAttempts), so a run may wait for memory as long as it must without being lost, and
// the slot it held can start a run that fits meanwhile. The wait is short so a job's timeout,
// and so the smallest rescue delay, stays the run's limit plus a few seconds.
const budgetWait = jobTimeoutSlack

func (w *runWorker) Work(ctx context.Context, job *river.Job[runArgs]) error {
	return w.s.work(ctx, job.Args.RunID)
}

// retryPolicy retries a run whose worker failed (or died) after a short pause: the pause only
// spreads retries; a run is deterministic, so waiting longer changes nothing.
type retryPolicy struct{}

func (retryPolicy) NextRetry(job *rivertype.JobRow) time.Time {
	return time.Now().Add(time.Duration(max(job.Attempt, 1)) * time.Second)
}

// jobQueue is the River client of a server or worker process.
type jobQueue struct {
	client   *river.Client[*sql.Tx]
	listener *pgxpool.Pool // PostgreSQL only
	works    bool          // false: inserts only (serve -workers 0)
}

// defaultWorkerName is "host:pid", unique among live processes.
func defaultWorkerName() string {
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "localhost"
	}
	return fmt.Sprintf("%s:%d", host, os.Getpid())
}

// newJobQueue migrates River's tables (under the store's migration lock) and builds the client.
func newJobQueue(ctx context.Context, s *Service) (*jobQueue, error) {
	st := s.store
	q := &jobQueue{works: s.cfg.Workers > 0}
	var driver riverdriver.Driver[*sql.Tx]
	pollEvery, cooldown := time.Second, 100*time.Millisecond
	switch st.Dialect() {
	case store.DialectPostgres:
		cfg, err := pgxpool.ParseConfig(st.Path())
		if err != nil {
			return nil, fmt.Errorf("job queue: parse the database URL: %w", err)
		}
		cfg.MinConns, cfg.MaxConns = 0, 1 // River hijacks its LISTEN connection from this pool
		if q.listener, err = pgxpool.NewWithConfig(ctx, cfg); err != nil {
			return nil, fmt.Errorf("job queue: connect the listener: %w", err)
		}
		driver = riverdatabasesql.NewWithPgxListener(st.DB(), q.listener)
		// LISTEN/NOTIFY wakes workers on insert; polling only backs it up. A short cooldown
		// lets a worker that finished a run fetch the next at once.
		pollEvery, cooldown = 500*time.Millisecond, 20*time.Millisecond
	default:
		driver = riversqlite.New(st.DB())
		// SQLite has no notifications: poll often, so a tiny run's page shows it done within
		// a few hundred milliseconds (docs/performance.md). A poll is one small write.
		pollEvery, cooldown = 50*time.Millisecond, 20*time.Millisecond
	}
	migrator, err := rivermigrate.New(driver, nil)
	if err != nil {
		q.close()
		return nil, fmt.Errorf("job queue: %w", err)
	}
	if err := st.WithLock(ctx, func() error {
		_, err := migrator.Migrate(ctx, rivermigrate.DirectionUp, nil)
		return err
	}); err != nil {
		q.close()
		return nil, fmt.Errorf("job queue: migrate River's tables: %w", err)
	}

	workers := river.NewWorkers()
	if err := river.AddWorkerSafely(workers, &runWorker{s: s}); err != nil {
		q.close()
		return nil, fmt.Errorf("job queue: %w", err)
	}
	cfg := &river.Config{
		ID:      s.cfg.WorkerName,
		Workers: workers,
		// Config.MaxAttempts bounds how many times a run is started (a worker that dies
		// mid-run, for example out of memory, gives its run another start). River gets one
		// more attempt so the run that used them all is marked failed by a worker.
		MaxAttempts:          s.cfg.MaxAttempts + 1,
		JobTimeout:           s.jobTimeout(),
		RescueStuckJobsAfter: s.cfg.RescueAfter,
		RetryPolicy:          retryPolicy{},
		FetchPollInterval:    pollEvery,
		FetchCooldown:        cooldown,
		Logger:               s.log,
	}
	if q.works {
		cfg.Queues = map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: s.cfg.Workers}}
	}
	if q.client, err = river.NewClient(driver, cfg); err != nil {
		q.close()
		return nil, fmt.Errorf("job queue: %w", err)
	}
	return q, nil
}

// start starts working jobs (when this process works runs). On SQLite the server is the only
// process on its database, so jobs that a previous process left running (it crashed) are made
// available again at once instead of after the rescue delay.
func (q *jobQueue) start(ctx context.Context, st *store.Store) error {
	if !q.works {
		return nil
	}
	if st.Dialect() == store.DialectSQLite {
		if _, err := st.DB().ExecContext(ctx, `UPDATE river_job SET state = 'available' WHERE state = 'running'`); err != nil {
			return fmt.Errorf("job queue: recover jobs of a previous process: %w", err)
		}
	}
	// River cancels running jobs when the context given to Start ends; the server cancels
	// them itself at Shutdown (recording them as requeued), so Start gets one that does not end.
	return q.client.Start(context.WithoutCancel(ctx))
}

// stop waits for running jobs to return (their contexts are cancelled by the server first).
func (q *jobQueue) stop(ctx context.Context) error {
	var err error
	if q.works {
		err = q.client.Stop(ctx)
	}
	q.close()
	return err
}

func (q *jobQueue) close() {
	if q.listener != nil {
		q.listener.Close()
		q.listener = nil
	}
}

// enqueue inserts the job of run id in the store's transaction tx.
func (q *jobQueue) enqueue(ctx context.Context, tx *sql.Tx, id string) (int64, error) {
	res, err := q.client.InsertTx(ctx, tx, runArgs{RunID: id}, nil)
	if err != nil {
		return 0, err
	}
	return res.Job.ID, nil
}

// cancel cancels a run's job; a job that already ended is left as it is.
func (q *jobQueue) cancel(ctx context.Context, jobID int64) error {
	if jobID == 0 {
		return nil
	}
	_, err := q.client.JobCancel(ctx, jobID)
	if errors.Is(err, river.ErrNotFound) {
		return nil
	}
	return err
}

// RetryingRun is a run whose job failed and waits to be tried again.
type RetryingRun struct {
	RunID     string
	Attempt   int
	NextAt    time.Time
	LastError string // "" when River recorded none
}

// Retrying lists at most n runs waiting to be tried again, as the queue page shows them.
func (s *Service) Retrying(ctx context.Context, n int) ([]RetryingRun, error) {
	res, err := s.jobs.client.JobList(ctx, river.NewJobListParams().States(rivertype.JobStateRetryable).First(n))
	if err != nil {
		return nil, err
	}
	out := make([]RetryingRun, 0, len(res.Jobs))
	for _, j := range res.Jobs {
		var args runArgs
		_ = json.Unmarshal(j.EncodedArgs, &args)
		item := RetryingRun{RunID: args.RunID, Attempt: j.Attempt, NextAt: j.ScheduledAt}
		if n := len(j.Errors); n > 0 {
			item.LastError = j.Errors[n-1].Error
		}
		out = append(out, item)
	}
	return out, nil
}

// JobStates counts River's jobs by state. River has no count API, so this reads its job table
// (read-only; the same SQL on both dialects).
func (s *Service) JobStates(ctx context.Context) (map[string]int, error) {
	rows, err := s.store.DB().QueryContext(ctx, `SELECT state, count(*) FROM river_job GROUP BY state`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]int{}
	for rows.Next() {
		var (
			state string
			n     int
		)
		if err := rows.Scan(&state, &n); err != nil {
			return nil, err
		}
		out[state] = n
	}
	return out, rows.Err()
}
