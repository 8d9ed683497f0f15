package sim

import "errors"

// RunOptions are the caller's controls over one run.
type RunOptions struct {
	// Traces resolves uploaded traces named by sha256. Built-in traces need nothing.
	Traces TraceSource
	// Progress, if set, is called with the fraction done (0…1), at most a few times a second.
	Progress func(fraction float64)
	// MaxEvents and MaxVirtualMS stop a run that grows past them with ErrLimit (0 = default).
	MaxEvents    int64
	MaxVirtualMS float64
	// Pass, if set, is called as each pass starts, with what it computes and how long it lasts
	// (for exporting a worker's passes; see sim/calibrate).
	Pass func(PassRecord)
	// OwnThread says the caller runs the simulation on an OS thread of its own (locked to its
	// goroutine, with a processor to spare beside it): the engine then does not yield its
	// processor every yieldEvery, since nothing waits for it, and a yield from a locked thread
	// costs two thread switches (about 30 µs). A caller with no other goroutine that must run
	// promptly (the command line's run) sets it too: there a yield only wakes an idle thread to
	// find nothing to do (2 % of the day preset's time, issue 35).
	OwnThread bool
	// ScenarioID, if set, is the scenario's ID(), which the caller has computed already: the
	// report takes it instead of hashing the scenario's canonical JSON again (for 20,000
	// scripted requests that costs about as much as a tenth of the run).
	ScenarioID string
	// SpareCore says a core beside the run's own is free for it (the command line's single run
	// on a machine of two or more): work that does not depend on the simulation's order (the
	// session workload's prompt keys, the report's percentiles) is then done on another
	// goroutine. The report is the same either way.
	SpareCore bool
}

// PassRecord is one pass of one worker. DecodeRequests counts the requests that emit a token
// (the model's D, prompt completers included); DecodeKVTokens is K, over those that decode.
type PassRecord struct {
	Worker          int
	StartNS, EndNS  int64
	PrefillRequests int // requests that compute prompt tokens
	PrefillTokens   int // P
	DecodeRequests  int // D
	DecodeKVTokens  int // K
}

// ErrLimit is returned (wrapped) when a run exceeds its event or virtual-time limit.
var ErrLimit = errors.New("run limit exceeded")
