package sim

import (
	"math"
	"math/rand/v2"
)

// noMoreStarts is the next-arrival instant of a session process whose rate stages have ended
// (docs/model.md#model-3: no session starts after the last stage ends).
const noMoreStarts = int64(math.MaxInt64)

// stageClock draws first-turn arrivals of a piecewise-constant Poisson process (docs/model.md#model-3
// "Load that changes"), stage by stage: from instant t in a stage of rate r > 0 it draws a gap
// Exp(r); an arrival at or past the stage's end is dropped and the draw continues from that end
// with the next stage's rate (exact by memorylessness); a stage of rate 0 is skipped.
type stageClock struct {
	ends  []int64 // end of stage i in ns: ns(Σ_{k≤i} duration_k), the sum in doubles
	rates []float64
	cur   int // the stage of the last instant asked about: instants only grow
}

func newStageClock(stages []RateStage) *stageClock {
	c := &stageClock{}
	sum := 0.0
	for _, st := range stages {
		sum += st.DurationMS
		c.ends = append(c.ends, msToNS(sum))
		c.rates = append(c.rates, st.RatePerS)
	}
	return c
}

// stageAt is the index of the stage containing instant t, len(ends) after the last.
func (c *stageClock) stageAt(t int64) int {
	for c.cur < len(c.ends) && t >= c.ends[c.cur] {
		c.cur++
	}
	return c.cur
}

// after returns the next arrival strictly drawn from instant t on, or noMoreStarts.
func (c *stageClock) after(t int64, rng *rand.Rand) int64 {
	for i := c.stageAt(t); i < len(c.ends); i++ {
		r := c.rates[i]
		if r <= 0 {
			t = c.ends[i]
			continue
		}
		gap := msToNS(float64(rng.ExpFloat64()/r) * 1000)
		if at := addNS(t, gap); at < c.ends[i] {
			return at
		}
		t = c.ends[i]
	}
	return noMoreStarts
}

// RateAt returns the session arrival rate (per second) of the stage containing instant ms, 0
// after the last stage; without stages it is rate_per_s.
func (s *Sessions) RateAt(ms float64) float64 {
	if len(s.RateStages) == 0 {
		return s.RatePerS
	}
	end := 0.0
	for _, st := range s.RateStages {
		end += st.DurationMS
		if ms < end {
			return st.RatePerS
		}
	}
	return 0
}
