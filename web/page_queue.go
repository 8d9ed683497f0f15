package web

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strconv"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/scalein-planner/scalein/sim"
	"github.com/scalein-planner/scalein/store"
	"github.com/scalein-planner/scalein/templates"
)

// retryingShown bounds the retrying runs listed on the queue page.
const retryingShown = 50

// handleQueue is GET /admin/queue: the job queue's state, read-only: runs by status, River's
// jobs by state, running runs by worker, and the runs waiting to be tried again.
func (s *Server) handleQueue(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	st, err := s.store.QueueState(ctx)
	if err != nil {
		return err
	}
	jobs, err := s.jobStates(ctx)
	if err != nil {
		return err
	}
	p := templates.QueuePage{Page: s.pageInfo("Job queue", "queue"), Database: "SQLite"}
	if s.store.Dialect() == store.DialectPostgres {
		p.Database = "PostgreSQL"
	}
	for _, status := range []string{store.StatusQueued, store.StatusRunning, store.StatusDone, store.StatusFailed, store.StatusCancelled} {
		p.Runs = append(p.Runs, templates.QueueCount{Label: status, ID: status, Count: strconv.Itoa(st.ByStatus[status])})
	}
	for _, state := range []rivertype.JobState{rivertype.JobStateAvailable, rivertype.JobStateRunning, rivertype.JobStateRetryable,
		rivertype.JobStateScheduled, rivertype.JobStateCompleted, rivertype.JobStateCancelled, rivertype.JobStateDiscarded} {
		p.Jobs = append(p.Jobs, templates.QueueCount{Label: string(state), ID: string(state), Count: strconv.Itoa(jobs[string(state)])})
	}
	workers := make([]string, 0, len(st.Running))
	for w := range st.Running {
		workers = append(workers, w)
	}
	slices.Sort(workers)
	for i, w := range workers {
		label := w
		if label == "" {
			label = "(unknown)"
		}
		p.Workers = append(p.Workers, templates.QueueCount{Label: label, ID: strconv.Itoa(i), Count: strconv.Itoa(st.Running[w])})
	}
	res, err := s.jobs.client.JobList(ctx, river.NewJobListParams().States(rivertype.JobStateRetryable).First(retryingShown))
	if err != nil {
		return err
	}
	for _, j := range res.Jobs {
		var args runArgs
		_ = json.Unmarshal(j.EncodedArgs, &args)
		item := templates.QueueRetry{RunID: args.RunID, URL: "/runs/" + args.RunID, Attempt: strconv.Itoa(j.Attempt),
			NextAt: formatTime(j.ScheduledAt)}
		if n := len(j.Errors); n > 0 {
			item.Error = j.Errors[n-1].Error
		}
		p.Retrying = append(p.Retrying, item)
	}
	works := "no (serves only; worker processes run the jobs)"
	if s.cfg.Workers > 0 {
		works = strconv.Itoa(s.cfg.Workers) + " at once"
	}
	p.Settings = []templates.QueueCount{
		{Label: "this process", ID: "name", Count: s.cfg.WorkerName},
		{Label: "works runs", ID: "workers", Count: works},
		{Label: "queue bound (429 past it)", ID: "queue", Count: strconv.Itoa(s.cfg.QueueSize)},
		{Label: "run wall-time limit", ID: "run-timeout", Count: s.cfg.RunTimeout.String()},
		{Label: "rescue a run after", ID: "rescue-after", Count: s.cfg.RescueAfter.String()},
		{Label: "starts per run", ID: "attempts", Count: strconv.Itoa(s.cfg.MaxAttempts)},
		{Label: "memory per run", ID: "max-run-memory", Count: sim.FormatBytes(s.cfg.MaxRunMemory)},
		{Label: "memory of all running runs", ID: "max-total-memory", Count: sim.FormatBytes(s.cfg.MaxTotalMemory)},
	}
	p.Page.RefreshSeconds = 5
	return s.render(w, r, http.StatusOK, templates.QueueView(p))
}

// jobStates counts River's jobs by state. River has no count API, so this reads its job table
// (read-only; the same SQL on both dialects).
func (s *Server) jobStates(ctx context.Context) (map[string]int, error) {
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
