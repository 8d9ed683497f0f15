package sim

import (
	"math"
	"strconv"
)

// SLO attainment: the share of requests that met a time-to-first-token limit and a time-per-
// output-token limit. It judges a run; it changes no simulated figure.

// SLO is a scenario's service-level objective. Either limit may be left out (nil: not judged);
// Parse requires at least one, each > 0.
type SLO struct {
	TTFTMS *float64 `json:"ttft_ms,omitempty"`
	TPOTMS *float64 `json:"tpot_ms,omitempty"`
}

// SLOSummary is summary.slo: how many requests met the scenario's SLO. Missed counts every
// request that did not meet it, killed ones included (Killed says how many of them were
// killed), so Requests = Met + Missed. Attainment = Met ÷ Requests (null without requests).
type SLOSummary struct {
	TTFTMS     *float64 `json:"ttft_ms"`
	TPOTMS     *float64 `json:"tpot_ms"`
	Requests   int64    `json:"requests"`
	Met        int64    `json:"met"`
	Missed     int64    `json:"missed"`
	Killed     int64    `json:"killed"`
	Attainment *float64 `json:"attainment"`
}

// Limits of the slo fields.
const maxSLOMS = 3_600_000 // an hour: anything longer is not a latency objective

// decodeSLO reads the top-level slo object (nil or null: no SLO).
func decodeSLO(errs *fieldErrors, n *jsonNode) *SLO {
	if n == nil || n.kind == kindNull {
		return nil
	}
	v := openObject(errs, "slo", n)
	if v.node == nil {
		return nil
	}
	s := &SLO{
		TTFTMS: sloLimit(errs, v, "ttft_ms", "the longest acceptable time from arrival to the first token"),
		TPOTMS: sloLimit(errs, v, "tpot_ms", "the longest acceptable mean time per output token after the first"),
	}
	if !v.has("ttft_ms") && !v.has("tpot_ms") {
		errs.add("slo", `give "ttft_ms" (the longest time to first token, ms), "tpot_ms" (the longest time per output token after the first, ms) or both, e.g. {"ttft_ms": 3000, "tpot_ms": 100}; or leave slo out`)
	}
	v.finish()
	if s.TTFTMS == nil && s.TPOTMS == nil {
		return nil
	}
	return s
}

// sloLimit reads one limit of the slo: absent or null is nil (not judged), else a number in
// (0, maxSLOMS].
func sloLimit(errs *fieldErrors, v *objectView, key, meaning string) *float64 {
	got := v.optionalNumber(key, floatRange{min: math.Inf(-1), max: math.Inf(1)})
	if got == nil {
		return nil
	}
	if !(*got > 0) || *got > maxSLOMS {
		errs.add(v.child(key), "must be > 0 and ≤ %d ms (got %s): %s, in ms; leave it out not to judge it", maxSLOMS, fmtNum(*got), meaning)
		return nil
	}
	return got
}

// sloTracker counts, as requests finish, those that met the SLO, in all and per arrival bucket.
// It exists only for a scenario with an slo, so a run without one pays a nil check per request.
type sloTracker struct {
	ttftNS, tpotNS int64 // -1: not judged
	met, missed    int64
	killed         int64
	// byArrival keeps arrivals and met per bucket in the three widths of the time series, so
	// the report can use the width the time series chose.
	byArrival [3]arrivalFamily
}

func newSLOTracker(s *SLO) *sloTracker {
	if s == nil {
		return nil
	}
	t := &sloTracker{ttftNS: -1, tpotNS: -1,
		byArrival: [3]arrivalFamily{{width: 1000}, {width: 2000}, {width: 5000}}}
	if s.TTFTMS != nil {
		t.ttftNS = msToNS(*s.TTFTMS)
	}
	if s.TPOTMS != nil {
		t.tpotNS = msToNS(*s.TPOTMS)
	}
	return t
}

// metSLO says whether a completed request met the limits: TTFT = firstToken − arrival ≤ ttftNS,
// and TPOT = (done − firstToken) / (output − 1) ≤ tpotNS (0 for a one-token answer). Compared in
// whole nanoseconds: TPOT ≤ L exactly when ceil((done − firstToken) / (output − 1)) ≤ L, with no
// rounding and no overflow.
func metSLO(ttftNS, tpotNS, arrival, firstToken, done int64, output int32) bool {
	if ttftNS >= 0 && firstToken-arrival > ttftNS {
		return false
	}
	if tpotNS >= 0 && output > 1 {
		span, gaps := done-firstToken, int64(output-1)
		if (span+gaps-1)/gaps > tpotNS {
			return false
		}
	}
	return true
}

// completed records a request that emitted all its tokens.
func (t *sloTracker) completed(r *request, done int64) {
	met := metSLO(t.ttftNS, t.tpotNS, r.atNS, r.firstToken, done, r.output)
	if met {
		t.met++
	} else {
		t.missed++
	}
	t.record(r.atNS, met)
}

// killedRequest records a killed request: it missed the SLO.
func (t *sloTracker) killedRequest(r *request) {
	t.missed++
	t.killed++
	t.record(r.atNS, false)
}

func (t *sloTracker) record(arrival int64, met bool) {
	for i := range t.byArrival {
		t.byArrival[i].record(arrival, met)
	}
}

// summary is summary.slo.
func (t *sloTracker) summary(s *SLO) *SLOSummary {
	out := &SLOSummary{Requests: t.met + t.missed, Met: t.met, Missed: t.missed, Killed: t.killed}
	if s.TTFTMS != nil {
		v := nsToMS(t.ttftNS)
		out.TTFTMS = &v
	}
	if s.TPOTMS != nil {
		v := nsToMS(t.tpotNS)
		out.TPOTMS = &v
	}
	if out.Requests > 0 {
		a := float64(t.met) / float64(out.Requests)
		out.Attainment = &a
	}
	return out
}

// fill sets each bucket's attainment: met ÷ arrivals among the requests that arrived in it,
// null where none arrived. The buckets are those the time series chose (width bucketNS).
func (t *sloTracker) fill(ts *Timeseries) {
	width := msToNS(ts.BucketMS)
	for i := range t.byArrival {
		f := &t.byArrival[i]
		if width%f.width != 0 || !isPowerOf10(width/f.width) {
			continue
		}
		for f.width < width {
			f.coarsen()
		}
		for j := range ts.Buckets {
			if j >= len(f.buckets) || f.buckets[j].arrivals == 0 {
				continue
			}
			b := f.buckets[j]
			a := float64(b.met) / float64(b.arrivals)
			ts.Buckets[j].Attainment = &a
		}
		return
	}
}

func isPowerOf10(n int64) bool {
	for n > 1 && n%10 == 0 {
		n /= 10
	}
	return n == 1
}

// arrivalFamily counts requests by arrival bucket, at width base × 10^k ns, coarsening ×10 when
// an arrival falls past the 200th bucket. Requests finish out of arrival order, so any bucket
// may be updated, but arrivals never pass the run's duration, so the time series never chooses
// a finer width than this family has reached.
type arrivalFamily struct {
	width   int64
	buckets []arrivalBucket
}

type arrivalBucket struct{ arrivals, met int64 }

func (f *arrivalFamily) record(arrival int64, met bool) {
	for arrival/f.width >= maxBuckets {
		f.coarsen()
	}
	i := int(arrival / f.width)
	if i >= len(f.buckets) {
		if f.buckets == nil {
			f.buckets = make([]arrivalBucket, 0, maxBuckets)
		}
		f.buckets = f.buckets[:i+1]
	}
	b := &f.buckets[i]
	b.arrivals++
	if met {
		b.met++
	}
}

// coarsen merges every ten buckets into one, in place (as seriesFamily.coarsen).
func (f *arrivalFamily) coarsen() {
	n := (len(f.buckets) + 9) / 10
	for j := range n {
		var o arrivalBucket
		for _, b := range f.buckets[10*j : min(10*j+10, len(f.buckets))] {
			o.arrivals += b.arrivals
			o.met += b.met
		}
		f.buckets[j] = o
	}
	clear(f.buckets[n:])
	f.buckets = f.buckets[:n]
	f.width *= 10
}

// FormatSLO states an SLO's limits as a phrase: "TTFT ≤ 3 s and TPOT ≤ 100 ms".
func FormatSLO(ttftMS, tpotMS *float64) string {
	var parts []string
	if ttftMS != nil {
		parts = append(parts, "TTFT ≤ "+formatLimitMS(*ttftMS))
	}
	if tpotMS != nil {
		parts = append(parts, "TPOT ≤ "+formatLimitMS(*tpotMS))
	}
	switch len(parts) {
	case 0:
		return ""
	case 1:
		return parts[0]
	}
	return parts[0] + " and " + parts[1]
}

// formatLimitMS prints a limit in s from one second up when that is exact to the ms, else in ms.
func formatLimitMS(ms float64) string {
	if ms >= 1000 && ms == float64(int64(ms)) {
		return strconv.FormatFloat(ms/1000, 'f', -1, 64) + " s"
	}
	return strconv.FormatFloat(ms, 'f', -1, 64) + " ms"
}

// HeadlineSLOAttainment is the key of summary.slo.attainment among the headline figures: a
// fraction of the requests (0.958 is 95.8 %), in the unit UnitShare.
const HeadlineSLOAttainment = "slo_attainment"

// UnitShare is the unit of a figure that is a fraction of a whole; pages print it as a
// percentage.
const UnitShare = "share"

// SLOFigures are the figures a run with an slo adds to the headline: its attainment (no value
// for a report without an slo, or r nil).
func SLOFigures(r *Report) []Figure {
	var v *float64
	if r != nil && r.Summary.SLO != nil {
		v = r.Summary.SLO.Attainment
	}
	return []Figure{{HeadlineSLOAttainment, "SLO attainment", UnitShare, v}}
}
