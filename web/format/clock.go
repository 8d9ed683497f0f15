package format

import (
	"fmt"
	"math"
	"time"
)

// Clock writes the instants of one run, given in ms from its start, the one way every table,
// decision and sentence of its pages does: with the wall-clock time the run's time 0 stands
// for (a Prometheus load's first sample, workload.sessions.starts_at), as the time of day in
// UTC ("03:07:12"); otherwise from the start, "h:mm:ss" from a minute on ("1:02:05") and a
// duration below ("77 ms", "12.3 s").
type Clock struct {
	Start time.Time
	Known bool
}

// ClockAt is the Clock of a run whose time 0 is start (ok false: not known).
func ClockAt(start time.Time, ok bool) Clock { return Clock{Start: start, Known: ok} }

// At writes the instant ms from the start.
func (c Clock) At(ms float64) string {
	if math.IsNaN(ms) || math.IsInf(ms, 0) {
		return Dash
	}
	if c.Known {
		t := c.Start.Add(time.Duration(math.Round(ms)) * time.Millisecond).UTC()
		return t.Format("15:04:05")
	}
	if math.Abs(ms) < 60000 {
		return Duration(ms)
	}
	sign := ""
	if ms < 0 {
		sign, ms = "-", -ms
	}
	secs := int64(math.Round(ms / 1000))
	return fmt.Sprintf("%s%d:%02d:%02d", sign, secs/3600, secs/60%60, secs%60)
}

// AtOpt is At of an optional instant, a dash for nil.
func (c Clock) AtOpt(ms *float64) string {
	if ms == nil {
		return Dash
	}
	return c.At(*ms)
}

// Column is the header of a column of instants: "At (UTC)" with a start time, else "At (from
// the start)".
func (c Clock) Column(label string) string {
	if c.Known {
		return label + " (UTC)"
	}
	return label + " (from the start)"
}
