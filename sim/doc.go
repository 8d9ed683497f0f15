// Package sim is the discrete-event simulator of docs/model.md: a fleet of LLM inference
// workers with G1 (GPU) and G2 (host) KV caches, KVCR peer pulls guided by router hints,
// scale-in, load that changes and migration (model 3), and the Kubernetes HPA controller in the
// loop (model 4).
//
// It is pure: no HTTP, no SQL, and no file access except through TraceSource.
//
// # Where each noun of the model lives
//
//	the scenario      scenario.go (the types, ModelVersion), defaults.go, presets.go,
//	                  canonical.go and relabel.go (its id and simulation key), names.go
//	parsing           parse.go (Parse, ParseEnv) over parse_tree.go (a JSON tree that keeps
//	                  paths and duplicates) and parse_fields.go (typed reads with field errors);
//	                  parse_autoscaler.go (rate stages, the autoscaler and its behavior); closest_name.go
//	validation        validate.go (the rules across fields), rates.go (transfer-rate bounds)
//	workloads         workload.go (requests and sessions), stages.go (rate stages),
//	                  trace.go (trace files and TraceSource)
//	workers           worker.go; request.go (a request's states and queues)
//	tiers             tiers.go (the G1↔G2 lanes: H2D restores, D2H write-through); the caches
//	                  themselves are internal/kvcache (GPU, Host, Index, Prefix)
//	pulls (KVCR)      kvcr.go (staging, sharing a source's bandwidth, landing, aborting),
//	                  util.go (durations rounded up to whole nanoseconds)
//	routing           router.go (overlaps and the cost), routeloads.go (the ordered loads)
//	the pass loop     engine.go (Run, the instant loop and its steps), run.go (RunOptions),
//	                  events.go (the heaps),
//	                  pass.go (a pass: scan, admit, preempt, end), recycle.go (reused records)
//	drain and removal scalein.go (actions, selection, removal, forced removal, kills)
//	the autoscaler    autoscaler.go (the workers as pods, samples, carrying out a decision,
//	                  cold starts); the decision itself is podautoscaler (the HPA controller)
//	migration         migration.go
//	the memory        memory_estimate.go (MemoryEstimate, an upper bound before a run),
//	estimate          memory_estimate_shape.go (block-key counts), memory_estimate_autoscaler.go
//	the report        report.go (the types), reportbuild.go (building it and its digest),
//	                  timeseries.go, headline.go (the headline figures), format.go
//	pairs of runs     compare.go, compare_autoscaler.go (counterparts: hints, guard, autoscaler)
//
// Beside the package: podautoscaler (one sync of the Kubernetes HPA controller), whatif
// (sweeps, and plans over many runs, one kind per goal: drain, tune, capacity, diagnose; see
// whatif.Goal.Kind), hpa (Kubernetes manifests in and out),
// calibrate (timing fitted from measured passes), internal/kvcache (the caches).
//
// # The life of a run
//
// Parse reads a scenario document into a Scenario, every default filled and every rule of
// docs/model.md#scenario checked at once (a *ValidationError lists them all by path); its ID
// names the model version and the complete scenario. Run (engine.go) builds the engine: the
// workers with their caches, the workload's arrivals, the scale-in actions or the autoscaler.
// It then repeats one instant at a time, in the fixed order of docs/model.md#one-instant:
// lane transfers and pulls that land (tiers.go, kvcr.go), passes that end (pass.go), cold
// starts that end (autoscaler.go), arrivals routed to a worker with a hint (router.go), passes
// started on idle workers, where a request's prefix is found in G1, G2 or staged as a pull,
// then removals of drained workers, scale-in actions, the autoscaler's samples and decisions
// (podautoscaler decides, autoscaler.go acts), and removals again (scalein.go, migration.go).
// When nothing is left to happen, the engine's counters and rows become the Report
// (reportbuild.go), whose digest makes two runs of one scenario comparable byte for byte.
package sim
