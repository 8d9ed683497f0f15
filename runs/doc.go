// Package runs is where a scenario becomes a queued run and a run becomes a report; sweeps are
// fed and plans driven here too. The web server (serve) and the worker process (worker) each
// build one Service over the store; the web package reaches it through a small interface and
// maps its errors (ErrQueueFull, *RequestError, *NotFoundError, *sim.ValidationError) to
// statuses in one place.
//
// The life of a run. Submit (submit.go) is the one way in, for the form, the API, pairs, sweep
// points and plan candidates: each scenario meets the per-run memory budget (Admit, check.go,
// with estimates remembered by estimate_cache.go), then its row and its River job are stored in
// one transaction (queue.go); an identical scenario reuses its run, as run ids are content
// hashes. A worker's job is one attempt (attempt.go): prepare parses the stored scenario and
// estimates it, the attempt waits for the total memory budget, claims the row, simulates under
// the wall-time limit while a watcher cancels it if its row says cancelled or taken over, and
// records the end: the report in gzip chunks, row by row (report_encode.go), beside its summary
// and headline (summary.go, ttft_histogram.go). Live progress goes to the followers in this
// process at once and to the row once a second; Follow (follow.go) is how pages and event
// streams follow a run, whichever process runs it. CancelRun (cancel.go) ends a row and its
// job; the worker stops at once here, or within takeoverPoll elsewhere.
//
// Every check made before anything is stored (a scenario's memory, a sweep's or a plan's request
// whole, with the ids and names they are stored under) is the Checker's (check.go), which stores
// and queues nothing: web's tests build a fake of the service over it, and over the other pieces
// a fake needs to store what the service stores (ResultOf and Result.Record, Reader,
// SweepViewOf, PlanViewOf, NewPlanRunner, PlanEnd), so that they test HTTP without a queue.
//
// The life of a sweep. CreateSweep (sweep.go) expands the axes, admits every point, stores the
// sweep and submits as many points as the queue takes; the rest are fed in the background as
// room frees up (sweep_feed.go), recorded in order so a restart resumes after the last one.
//
// The life of a plan. CreatePlan (plan.go) normalises the request, stores the plan and starts
// the planner in the background (plan_driver.go), whose runner submits candidates as runs and
// waits for them in the store. The kind of plan (whatif.Goal.Kind: drain, tune, capacity,
// diagnose) picks its default run bound and its name (check.go); only a tune plan carries an
// origin (the imported object its manifests are written into).
//
// A sweep's feeding and a plan's planner share one life (drive.go): they belong to one process
// at a time, which holds the lease (lease.go, a store drive lock); the store is watched for a
// cancel made elsewhere (poll.go); a holder that dies loses its lease and another process
// takes the drive over at its next rescan. Start resumes what a previous process left;
// Shutdown puts running runs back in the queue and releases the leases.
package runs
