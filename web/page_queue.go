package web

import (
	"net/http"
	"slices"
	"strconv"

	"github.com/riverqueue/river/rivertype"

	"github.com/scalein-planner/scalein/sim"
	"github.com/scalein-planner/scalein/store"
	"github.com/scalein-planner/scalein/templates"
	"github.com/scalein-planner/scalein/web/format"
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
	jobs, err := s.runs.JobStates(ctx)
	if err != nil {
		return err
	}
	limits := s.runs.Limits()
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
	retrying, err := s.runs.Retrying(ctx, retryingShown)
	if err != nil {
		return err
	}
	for _, j := range retrying {
		p.Retrying = append(p.Retrying, templates.QueueRetry{RunID: j.RunID, URL: "/runs/" + j.RunID, Attempt: strconv.Itoa(j.Attempt),
			NextAt: format.Time(j.NextAt), Error: j.LastError})
	}
	works := "no (serves only; worker processes run the jobs)"
	if limits.Workers > 0 {
		works = strconv.Itoa(limits.Workers) + " at once"
	}
	p.Settings = []templates.QueueCount{
		{Label: "this process", ID: "name", Count: limits.WorkerName},
		{Label: "works runs", ID: "workers", Count: works},
		{Label: "queue bound (429 past it)", ID: "queue", Count: strconv.Itoa(limits.QueueSize)},
		{Label: "run wall-time limit", ID: "run-timeout", Count: limits.RunTimeout.String()},
		{Label: "rescue a run after", ID: "rescue-after", Count: limits.RescueAfter.String()},
		{Label: "starts per run", ID: "attempts", Count: strconv.Itoa(limits.MaxAttempts)},
		{Label: "memory per run", ID: "max-run-memory", Count: sim.FormatBytes(limits.MaxRunMemory)},
		{Label: "memory of all running runs", ID: "max-total-memory", Count: sim.FormatBytes(limits.MaxTotalMemory)},
	}
	p.Page.RefreshSeconds = 5
	return s.render(w, r, http.StatusOK, templates.QueueView(p))
}
