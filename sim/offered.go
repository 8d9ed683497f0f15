package sim

import (
	"math"
	"math/big"
)

// offeredRate is the autoscaler metric offered_rate (docs/model.md#hpa-samples): the
// workload's offered request rate at a sampling instant, known from the scenario rather than
// measured on the workers, in milli-requests per second. Sampling instants only grow, so the
// cursors only move forward.
type offeredRate struct {
	// sessions: the end of each stage (ns, as the stage clock has them) and its rate × turns
	// in milli-units; after the last end the rate is 0.
	ends  []int64
	milli []int64
	stage int

	// scripted requests and traces: n arrivals in time order, the i-th at at(i).
	n          int
	at         func(i int) int64
	lo, hi     int   // first arrival ≥ s, first arrival ≥ s + window
	windowNS   int64 // ns(interval_ms)
	intervalMS float64
}

// newOfferedRate prepares the metric for a scenario whose workload source is src, measured
// over intervalMS (the controller's interval_ms).
func newOfferedRate(s *Scenario, src source, intervalMS float64) *offeredRate {
	o := &offeredRate{windowNS: msToNS(intervalMS), intervalMS: intervalMS}
	switch src := src.(type) {
	case *sessionSource:
		c := s.Workload.Sessions
		if len(c.RateStages) == 0 {
			o.milli = []int64{ceilMilli(c.RatePerS, c.Turns)}
			o.ends = []int64{math.MaxInt64}
			break
		}
		clock := newStageClock(c.RateStages)
		o.ends = clock.ends
		for _, r := range clock.rates {
			o.milli = append(o.milli, ceilMilli(r, c.Turns))
		}
	case *scriptedSource:
		ats := make([]int64, len(src.reqs))
		for i, a := range src.reqs {
			ats[i] = a.atNS
		}
		o.n, o.at = len(ats), func(i int) int64 { return ats[i] }
	case *traceSource:
		rows := src.rows
		o.n, o.at = len(rows), func(i int) int64 { return src.atNS(&rows[i]) }
	}
	return o
}

// ceilMilli is ceil(1000 × rate × turns), exactly (the double rate as the rational it is).
func ceilMilli(rate float64, turns int) int64 {
	v := new(big.Rat).SetFloat64(rate)
	v.Mul(v, new(big.Rat).SetInt64(1000*int64(turns)))
	return ceilRat(v)
}

func ceilRat(v *big.Rat) int64 {
	q, m := new(big.Int).QuoRem(v.Num(), v.Denom(), new(big.Int))
	if m.Sign() > 0 {
		q.Add(q, big.NewInt(1))
	}
	if !q.IsInt64() {
		return math.MaxInt64
	}
	return q.Int64()
}

// sample returns the metric at sampling instant s in milli-units: the stage's rate × turns for
// sessions; for scripted requests and traces, ceil(1000 × count × 1000 ÷ interval_ms) for the
// count of arrivals in [s, s + ns(interval_ms)).
func (o *offeredRate) sample(s int64) int64 {
	if o.at == nil {
		for o.stage < len(o.ends) && s >= o.ends[o.stage] {
			o.stage++
		}
		if o.stage == len(o.ends) {
			return 0
		}
		return o.milli[o.stage]
	}
	for o.lo < o.n && o.at(o.lo) < s {
		o.lo++
	}
	end := addNS(s, o.windowNS)
	o.hi = max(o.hi, o.lo)
	for o.hi < o.n && o.at(o.hi) < end {
		o.hi++
	}
	count := int64(o.hi - o.lo)
	if count == 0 {
		return 0
	}
	if iv := o.intervalMS; iv == math.Trunc(iv) && iv < 1<<53 && count < 1<<40 {
		return ceilDiv64(count*1_000_000, int64(iv))
	}
	v := new(big.Rat).SetFloat64(o.intervalMS)
	v.Inv(v)
	v.Mul(v, new(big.Rat).SetInt64(count*1_000_000))
	return ceilRat(v)
}
