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
}

// ErrLimit is returned (wrapped) when a run exceeds its event or virtual-time limit.
var ErrLimit = errors.New("run limit exceeded")
