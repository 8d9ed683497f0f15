package runs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/scalein-planner/scalein/sim"
	"github.com/scalein-planner/scalein/sim/whatif"
	"github.com/scalein-planner/scalein/store"
)

// A plan's planner runs here: its candidates are ordinary runs submitted through submitPoints
// and followed through the store, so they share the queue, the permalinks and the reuse of
// identical runs with every other run.

// runPollInterval is how often a plan checks on the runs it waits for.
const runPollInterval = 200 * time.Millisecond

// queuedRunner is the whatif.Runner of one plan: it submits the candidates as runs, records
// them as the plan's points, and waits until each has ended. The planner calls Run from several
// goroutines at once; each call's runs go to the shared queue, and the points are recorded one
// call at a time (a point's index is the count of those before it).
type queuedRunner struct {
	store *store.Store
	// await waits until a run has ended and returns it with its report: the service's awaitRun
	// (one status read for all of the process's waits), or awaitByPolling for a fake's runs.
	await func(ctx context.Context, id string) (store.Run, error)
	// submit makes candidates runs (submitPoints here), in pieces of at most queueSize.
	submit    SubmitFunc
	queueSize int
	planID    string
	// since is when the plan was asked for: a candidate's run counts as reused only if it was
	// done before then, so a plan interrupted and resumed reports the same reused count as one
	// that ran through (issue 19 L3: the runs it had finished itself used to count).
	since time.Time
	mu    sync.Mutex // serialises AddPlanPoints
}

// SubmitFunc is how a plan's candidates become runs: the service's submitPoints, or a fake's.
type SubmitFunc func(ctx context.Context, scenarios ...*sim.Scenario) ([]store.Submitted, error)

// planRunner is the runner of plan id, asked for at since, over this service's queue.
func (s *Service) planRunner(id string, since time.Time) *queuedRunner {
	return &queuedRunner{store: s.store, await: s.awaitRun, submit: s.submitPoints, queueSize: s.cfg.QueueSize, planID: id, since: since}
}

// NewPlanRunner is the runner of the stored plan planID, asked for at since, whose candidates
// become runs through submit, in pieces of at most queueSize. The service drives its plans with
// one over its queue; a fake of the service in another package's tests (web's) drives them with
// one over its own submit, so that its plans submit, record, wait and count reuse as the
// service's do.
func NewPlanRunner(st *store.Store, planID string, since time.Time, queueSize int, submit SubmitFunc) whatif.Runner {
	return &queuedRunner{store: st, await: awaitByPolling(st), submit: submit, queueSize: max(queueSize, 1), planID: planID, since: since}
}

// planLabel is the candidate label a planner scenario's name carries after " — plan: ".
func planLabel(name string) string {
	if i := strings.LastIndex(name, " — plan: "); i >= 0 {
		return name[i+len(" — plan: "):]
	}
	return name
}

func (p *queuedRunner) Run(ctx context.Context, scenarios []*sim.Scenario) ([]whatif.Outcome, error) {
	subs, err := p.submitInPieces(ctx, scenarios)
	if err != nil {
		return nil, err
	}
	ids := make([]string, len(scenarios))
	for i := range scenarios {
		ids[i] = subs[i].Run.ID
	}
	out := make([]whatif.Outcome, len(scenarios))
	for i, sub := range subs {
		out[i].Reused = !sub.Created && sub.Run.Status == store.StatusDone && sub.Run.FinishedAt.Before(p.since)
	}
	for i, id := range ids {
		run, err := p.await(ctx, id)
		if err != nil {
			return nil, err
		}
		reused := out[i].Reused
		out[i] = outcomeOf(run)
		out[i].Reused = reused
	}
	return out, nil
}

// submitInPieces submits a batch of candidates as runs and records them as the plan's points.
// A batch larger than the room in the queue (or than the queue itself, -queue 4 against a batch
// of 12) goes in pieces that fit: the piece is halved while the queue is full, doubled again
// after a success, and a single run waits for room. So a plan never waits for room that can
// never come, and a sweep keeping the queue full cannot starve it of single places.
func (p *queuedRunner) submitInPieces(ctx context.Context, scenarios []*sim.Scenario) ([]store.Submitted, error) {
	subs := make([]store.Submitted, 0, len(scenarios))
	piece := min(len(scenarios), p.queueSize)
	for len(subs) < len(scenarios) {
		part := scenarios[len(subs):min(len(subs)+piece, len(scenarios))]
		got, err := p.submit(ctx, part...)
		if errors.Is(err, ErrQueueFull) || errors.Is(err, store.ErrQuota) {
			if len(part) > 1 {
				piece = len(part) / 2
				continue
			}
			// The queue is full of other work, or the owner's quota of queued runs is: wait for
			// room rather than fail the plan.
			select {
			case <-ctx.Done():
				return nil, context.Cause(ctx)
			case <-time.After(QueueFullRetry):
			}
			continue
		}
		if err != nil {
			return nil, err
		}
		labels, ids := make([]string, len(part)), make([]string, len(part))
		for i, sc := range part {
			labels[i], ids[i] = planLabel(sc.Name), got[i].Run.ID
		}
		// Recorded at once, so cancelling the plan reaches every run it has submitted.
		p.mu.Lock()
		err = p.store.AddPlanPoints(ctx, p.planID, labels, ids)
		p.mu.Unlock()
		if err != nil {
			return nil, err
		}
		subs = append(subs, got...)
		piece = min(2*len(part), p.queueSize)
	}
	return subs, nil
}

// outcomeOf reads what the planner needs from a finished run.
func outcomeOf(run store.Run) whatif.Outcome {
	o := whatif.Outcome{ScenarioID: run.ID, RunID: run.ID, Status: run.Status, Error: run.Error}
	if run.Status != store.StatusDone {
		return o
	}
	var rep struct {
		Digest     string                `json:"digest"`
		Workers    []sim.WorkerRow       `json:"workers"`
		Summary    sim.Summary           `json:"summary"`
		Autoscaler *sim.AutoscalerReport `json:"autoscaler"`
	}
	doc := run.SummaryJSON // the report without per-request rows: digest and workers are there
	if len(doc) == 0 {
		doc = run.ReportJSON
	}
	if err := json.Unmarshal(doc, &rep); err != nil {
		return whatif.Outcome{ScenarioID: run.ID, RunID: run.ID, Status: store.StatusFailed, Error: "the stored report could not be read: " + err.Error()}
	}
	o.Digest, o.Workers = rep.Digest, rep.Workers
	o.Fleet = whatif.FleetFiguresOf(&sim.Report{Summary: rep.Summary, Autoscaler: rep.Autoscaler}) // a tune plan's figures
	if err := json.Unmarshal(run.HeadlineJSON, &o.Headline); err != nil {
		o.Headline = nil
	}
	return o
}

// startPlan runs the plan in the background unless another process drives it (drive.go). A
// plan running here, perhaps just cancelled and not yet stopped, is started again once it
// stops, and goes on unless it is cancelled in the store by then.
func (s *Service) startPlan(id string) {
	s.startDrive(planDrive, id, nil, func(ctx context.Context) {
		s.log.Info("plan driven by this process", "plan", id)
		s.executePlan(ctx, id)
	})
}

// executePlan runs the planner for a stored plan and records its end. A plan stopped by the
// server shutting down stays running in the store, and the next start resumes it (its finished
// runs are reused).
func (s *Service) executePlan(ctx context.Context, id string) {
	// Every step goes through a database outage (throughOutage) rather than failing the plan:
	// reading and recording the plan's state are idempotent, and so is the planner run again
	// from the start, which finds the runs it submitted before (same scenarios, same ids) and
	// records each point once.
	end := func(status, msg string, result []byte) (cancelled bool) {
		err := s.throughOutage(s.runsCtx, "recording plan "+id+" as "+status, func() error {
			sctx, cancel := storeCtx()
			defer cancel()
			return s.store.SetPlanStatus(sctx, id, status, msg, result, s.now())
		})
		switch {
		case errors.Is(err, store.ErrConflict):
			s.log.Info("a plan cancelled meanwhile stays cancelled", "plan", id, "status", status)
			return true
		case err != nil:
			s.log.Error("recording a plan's state failed", "plan", id, "status", status, "err", err)
		}
		return false
	}
	var plan store.Plan
	err := s.throughOutage(ctx, "plan "+id, func() (err error) {
		plan, _, err = s.store.GetPlan(ctx, id)
		return err
	})
	if err != nil {
		s.log.Error("plan not started", "plan", id, "err", err)
		return
	}
	if end(store.StatusRunning, "", nil) {
		return
	}
	base, err := sim.Parse(plan.ScenarioJSON, sim.ParseEnv{Traces: s.store})
	if err != nil {
		end(store.StatusFailed, "the stored scenario is no longer valid: "+err.Error(), nil)
		return
	}
	var req planRequestDoc
	if err := json.Unmarshal(plan.RequestJSON, &req); err != nil {
		end(store.StatusFailed, "the stored request could not be read: "+err.Error(), nil)
		return
	}
	err = s.throughOutage(ctx, "plan "+id, func() (err error) {
		ctx, err = s.withPlanOwner(ctx, id)
		return err
	})
	if err != nil {
		s.log.Error("plan not started", "plan", id, "err", err)
		return
	}
	var res *whatif.Result
	err = s.throughOutage(ctx, "plan "+id, func() (err error) {
		res, err = whatif.Plan(ctx, s.planRunner(id, plan.CreatedAt), base, req.Request)
		return err
	})
	switch cause := context.Cause(ctx); {
	case errors.Is(cause, errShuttingDown), errors.Is(cause, errDriveLost):
		return // resumed at the next start, or by the process that takes the lock
	case errors.Is(cause, errCancelledByUser):
		// cancelPlan records the cancel itself; writing it here too could undo the plan being
		// asked for again meanwhile.
		return
	case errors.Is(cause, errCancelledElsewhere):
		// The store says cancelled already; the driver cancels again the runs submitted
		// here just after it (drive.go).
		return
	}
	status, msg, body := PlanEnd(res, err)
	if end(status, msg, body) {
		return
	}
	if status == store.StatusDone {
		err := s.throughOutage(s.runsCtx, "recording the ideal fleet of plan "+id, func() error {
			sctx, cancel := storeCtx()
			defer cancel()
			return RecordIdealFleet(sctx, s.store, id, res, s.now())
		})
		if err != nil {
			// The plan is done and its page draws the fleets; only the run page's line is lost.
			s.log.Error("recording a diagnose plan's ideal fleet failed", "plan", id, "err", err)
		}
		s.log.Info("plan done", "plan", id, "runs", res.Runs, "reused", res.Reused)
	}
}

// PlanEnd is how a planner that returned res, or err, ends its plan, as store.SetPlanStatus
// records it: done with the result, or failed with why. A fake of the service (web's tests)
// ends its plans through it too.
func PlanEnd(res *whatif.Result, err error) (status, msg string, result []byte) {
	if err != nil {
		return store.StatusFailed, "the plan failed: " + err.Error(), nil
	}
	if label := cancelledCandidate(res); label != "" {
		// A run the plan needs was cancelled (directly by a user, or by a cancel of this plan
		// made elsewhere just before it was asked for again): its ranking would be wrong.
		return store.StatusFailed, fmt.Sprintf("the run of %q was cancelled, so the candidates cannot be ranked; ask for the plan again to run it", label), nil
	}
	body, err := json.Marshal(res)
	if err != nil {
		return store.StatusFailed, "encoding the plan failed: " + err.Error(), nil
	}
	return store.StatusDone, "", body
}

// withPlanOwner makes the plan's runs its owner's from their insert on, and holds them to the
// owner's quota of queued runs (finding M2: one plan queued 37 runs against a quota of 3); the
// store checks the quota in the transaction that queues them.
func (s *Service) withPlanOwner(ctx context.Context, id string) (context.Context, error) {
	owner, err := s.store.OwnerOf(ctx, store.OwnedPlan, id)
	if err != nil {
		return ctx, err
	}
	if owner.User == "" {
		return ctx, nil
	}
	ctx = store.WithOwner(ctx, owner.User)
	if s.cfg.QuotaQueuedRuns > 0 {
		ctx = store.WithQuota(ctx, store.Quota{QueuedRuns: s.cfg.QuotaQueuedRuns})
	}
	return ctx, nil
}

// cancelledCandidate returns the label of the first candidate (or the baseline) whose run was
// cancelled, or "".
func cancelledCandidate(res *whatif.Result) string {
	if res.Baseline != nil && res.Baseline.Status == whatif.StatusCancelled {
		return res.Baseline.Label
	}
	for _, c := range res.Candidates {
		if c.Status == whatif.StatusCancelled {
			return c.Label
		}
	}
	return ""
}

// planUnfinished says whether the store has the plan queued or running (asked for again).
func (s *Service) planUnfinished(id string) bool {
	ctx, cancel := storeCtx()
	defer cancel()
	status, err := s.store.PlanStatus(ctx, id)
	return err == nil && (status == store.StatusQueued || status == store.StatusRunning)
}

// resumePlans starts every unfinished plan that no process drives: at start, the ones a
// previous process left; on PostgreSQL, at each rescan, the ones whose driver died.
func (s *Service) resumePlans(ctx context.Context) error {
	plans, err := s.store.UnfinishedPlans(ctx)
	if err != nil {
		return err
	}
	for _, p := range plans {
		s.startPlan(p.ID)
	}
	return nil
}
