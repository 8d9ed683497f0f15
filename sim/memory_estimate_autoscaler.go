package sim

import (
	"fmt"
	"math"
)

// Memory of the autoscaler and of load that changes (docs/model.md#model-3,
// docs/model.md#autoscaler).
const (
	// A decision row (Decision, its four id lists' first arrays) and its JSON (about 200 bytes
	// with short lists).
	decisionRowBytes     = 160
	decisionRowJSONBytes = 260
	// After the last arrival, the decisions the estimate allows for before the run ends.
	decisionTailMS = 3_600_000
)

// cacheWorkers bounds the workers that hold caches at once: the fleet, and with an autoscaler
// up to max_workers active or starting besides the initial fleet still draining.
func (s *Scenario) cacheWorkers() int64 {
	n := int64(s.InitialWorkers())
	if a := s.Autoscaler; a != nil {
		n += int64(a.MaxWorkers)
	}
	if pa := s.PoolAutoscalers; pa != nil {
		for _, a := range []*Autoscaler{pa.Prefill, pa.Decode} {
			if a != nil {
				n += int64(a.MaxWorkers)
			}
		}
	}
	return n
}

// cacheFleet is the fleet whose caches the estimate counts per worker: with pools, the larger
// pool's G1 and G2 sizes for every worker (an upper bound).
func (s *Scenario) cacheFleet() Fleet {
	f := s.Fleet
	if d := s.Disaggregation; d != nil {
		f.GPUBlocks = max(d.Prefill.GPUBlocks, d.Decode.GPUBlocks)
		f.HostBlocks = d.Prefill.HostBlocks // decode workers keep no G2
	}
	return f
}

// arrivalSpanMS is the instant of the workload's last first arrival (for sessions: the end of
// the rate stages, or count / rate_per_s three times over), plus every later turn's think time.
func (s *Scenario) arrivalSpanMS() float64 {
	switch s.Workload.Type {
	case WorkloadRequests:
		last := 0.0
		for _, r := range s.Workload.Requests {
			last = math.Max(last, r.AtMS)
		}
		return last
	case WorkloadTrace:
		t := s.Workload.Trace
		last := 0.0
		for _, r := range s.trace {
			last = math.Max(last, r.TimestampMS)
		}
		if t != nil && t.Speedup > 0 {
			return last/t.Speedup + t.OffsetMS
		}
		return last
	case WorkloadSessions:
		c := s.Workload.Sessions
		if c == nil {
			return 0
		}
		span := 3 * float64(c.Count) / c.RatePerS * 1000
		if len(c.RateStages) > 0 {
			span = 0
			for _, st := range c.RateStages {
				span += st.DurationMS
			}
		}
		return span + float64(c.Turns)*c.ThinkTimeMS
	}
	return 0
}

// autoscalerRows counts the decision rows (kept to the end and encoded in the report) and the
// report rows of the workers the autoscaler may start: a decision each interval_ms over the
// arrivals' span and an hour after it, at most max_workers started for every two. Their records
// and caches are the alive ones' (cacheWorkers): a removed worker's slot is taken again and
// only its row stays. With pools, each pool's autoscaler counts so.
func (e *estimator) autoscalerRows() {
	if a := e.s.Autoscaler; a != nil {
		e.autoscalerRowsOf("autoscaler", a)
	}
	if pa := e.s.PoolAutoscalers; pa != nil {
		if pa.Prefill != nil {
			e.autoscalerRowsOf("autoscaler.prefill", pa.Prefill)
		}
		if pa.Decode != nil {
			e.autoscalerRowsOf("autoscaler.decode", pa.Decode)
		}
	}
}

func (e *estimator) autoscalerRowsOf(path string, a *Autoscaler) {
	decisions := int64(math.Min((e.s.arrivalSpanMS()+decisionTailMS)/a.IntervalMS+1, 1e12))
	e.add(path+".interval_ms", fmt.Sprintf("%s decision rows (one per interval over the workload and an hour after it)", groupDigits(decisions)),
		satMul(decisions, decisionRowBytes+decisionRowJSONBytes*jsonCopies))
	// A decision starts at most max_workers workers (its desired is at most max_workers), and
	// decisions that start workers without one that lowers the fleet between them start fewer
	// than max_workers together: so at most max_workers for every two decisions, and one more.
	starts := min(satMul(int64(a.MaxWorkers), decisions/2+1), MaxStartedWorkers)
	e.add(path+".max_workers", fmt.Sprintf("report rows of up to %s started workers", groupDigits(starts)),
		starts*(goneWorkerRowBytes+workerRowJSONBytes*jsonCopies))
}

func satMul(a, b int64) int64 {
	if a != 0 && b > math.MaxInt64/a {
		return math.MaxInt64
	}
	return a * b
}
