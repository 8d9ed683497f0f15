package sim

import "math"

// Time arithmetic from user values saturates (finding M1 of the 2026-12b probe, the pattern of
// issue 19 M3's transferNS): a rate of 1e-10 sessions a second makes a gap of 1e19 ns, past
// int64, and int64 of a float past 2^63 is garbage (the minimum int64 on amd64), which once made
// the next arrival negative and panicked the time series. Every duration converted from a
// user's rate, size or time is clamped to maxTimeNS, and every instant that adds such a
// duration adds it with addNS, so a slower rate or a longer time always ends later (or at the
// end of representable time), never sooner through an overflow.

// maxTimeNS bounds every duration and instant computed from user values (2^62 ns, about 146
// years): far past any run's virtual-time limit (DefaultMaxVirtualMS is 30 days), and two of
// them still add within int64.
const maxTimeNS = 1 << 62

// msToNS converts a configured time: ns = floor(ms × 1e6 + 0.5) (docs/model.md#precise-rules), saturated at
// ±maxTimeNS (NaN is 0).
func msToNS(ms float64) int64 {
	v := float64(ms*1e6) + 0.5
	if v >= 0 && v < maxTimeNS {
		return int64(v) // floor(v): truncation is floor for v ≥ 0 (a pass's duration, every call of a run)
	}
	ns := math.Floor(v)
	switch {
	case ns >= maxTimeNS:
		return maxTimeNS
	case ns <= -maxTimeNS:
		return -maxTimeNS
	case ns != ns:
		return 0
	}
	return int64(ns)
}

// addNS is the instant t + d, saturated at maxTimeNS (d ≥ 0 in every caller; a negative d adds
// as written).
func addNS(t, d int64) int64 {
	if d > 0 && t > maxTimeNS-d {
		return max(t, maxTimeNS)
	}
	return t + d
}
