package runs

import (
	"iter"
	"math"
	"slices"

	"github.com/scalein-planner/scalein/sim"
)

// TTFTCounts is the TTFT histogram a run's stored summary keeps instead of one TTFT per request,
// so the summary's size does not grow with the number of requests while the distribution chart
// stays exact, on a run page and on a compare page alike.
//
// The chart of runs whose largest TTFT is M uses bins of width W = niceCeil(M/20), a 1, 2 or
// 5 × 10^K ms. A run alone (largest TTFT Mᵢ) would use wᵢ = niceCeil(Mᵢ/20) = c·10^k ≤ W, so
// K ≥ k, and W is a whole multiple of the unit uᵢ = 10^k. Counting requests in bins of width uᵢ
// therefore loses nothing: ⌊v/W⌋ = ⌊⌊v/uᵢ⌋ / (W/uᵢ)⌋ for a whole W/uᵢ, so any compare re-bins
// the counts into its shared width exactly. There are at most ⌊Mᵢ/uᵢ⌋ + 1 ≤ 101 counts, since
// Mᵢ ≤ 20·wᵢ ≤ 100·uᵢ (niceCeil's tolerance of 1e-12 cannot reach the next whole unit).
type TTFTCounts struct {
	// MaxMS is the run's largest TTFT (it sets the compare's shared width).
	MaxMS float64 `json:"max_ms"`
	// UnitExp is k of the unit width 10^k ms.
	UnitExp int `json:"unit_exp"`
	// Counts[j] is how many requests had a TTFT in [j·10^k, (j+1)·10^k) ms.
	Counts []int64 `json:"counts"`
}

// HistogramTargetBins is roughly how many bins a TTFT histogram gets; the bin width is rounded
// to 1, 2 or 5 × 10^k ms so bin edges are readable.
const HistogramTargetBins = 20

// NiceStep is the chart's niceCeil(maxMS/HistogramTargetBins) as c·10^k with c in {1, 2, 5}; a maximum of
// 0 (every TTFT zero) gets width 1 ms, one bin [0, 1).
func NiceStep(maxMS float64) (c int64, k int) {
	v := maxMS / HistogramTargetBins
	if v <= 0 || math.IsNaN(v) || math.IsInf(v, 0) {
		return 1, 0
	}
	// The same comparisons as niceCeil, so the widths agree with it.
	k = int(math.Floor(math.Log10(v)))
	p := math.Pow(10, float64(k))
	for _, m := range []int64{1, 2, 5} {
		if float64(m)*p >= v*(1-1e-12) {
			return m, k
		}
	}
	return 1, k + 1
}

// StepMS is c·10^k as a float.
func StepMS(c int64, k int) float64 { return float64(c) * math.Pow(10, float64(k)) }

// BinOf returns ⌊v / (c·10^k)⌋ exactly, for v ≥ 0 and c ≥ 1 (0 for v ≤ 0): the quotient is
// computed in floating point and then corrected with fused multiply-adds, whose single rounding
// keeps the sign of the exact remainder, so a TTFT on a bin edge (0.3 ms in bins of 0.1 ms) lands
// in the bin it starts and never in the one before.
func BinOf(v float64, c int64, k int) int64 {
	if !(v > 0) {
		return 0
	}
	if k >= 0 {
		d := float64(c) * math.Pow(10, float64(k)) // a whole number, exact below 2^53
		q := math.Floor(v / d)
		switch {
		case math.FMA(q, d, -v) > 0: // q·d > v
			q--
		case math.FMA(q+1, d, -v) <= 0: // (q+1)·d ≤ v
			q++
		}
		return int64(q)
	}
	// v / (c·10^k) = (v·10^−k) / c with 10^−k a whole number (exact up to 10^22).
	p := math.Pow(10, float64(-k))
	t := math.Floor(v * p)
	switch {
	case math.FMA(v, p, -t) < 0: // v·p < t
		t--
	case math.FMA(v, p, -(t+1)) >= 0: // v·p ≥ t+1
		t++
	}
	return int64(t) / c
}

// CountTTFTs builds the histogram of ttfts (nil when there are none).
func CountTTFTs(ttfts []float64) *TTFTCounts {
	if len(ttfts) == 0 {
		return nil
	}
	return countTTFTsSeq(math.Max(0, slices.Max(ttfts)), slices.Values(ttfts))
}

// requestTTFTCounts is the histogram of first_token_ms − arrival_ms of every per-request row
// with a first token; nil when the report has no such row.
func requestTTFTCounts(rep *sim.Report) *TTFTCounts {
	ttfts := func(yield func(float64) bool) {
		for _, q := range rep.Requests {
			if q.FirstTokenMS != nil && !yield(*q.FirstTokenMS-q.ArrivalMS) {
				return
			}
		}
	}
	maxMS, any := 0.0, false
	for v := range ttfts {
		maxMS, any = math.Max(maxMS, v), true
	}
	if !any {
		return nil
	}
	return countTTFTsSeq(maxMS, ttfts)
}

// countTTFTsSeq counts ttfts, whose largest value is maxMS (≥ 0).
func countTTFTsSeq(maxMS float64, ttfts iter.Seq[float64]) *TTFTCounts {
	_, k := NiceStep(maxMS)
	h := &TTFTCounts{MaxMS: maxMS, UnitExp: k, Counts: make([]int64, BinOf(maxMS, 1, k)+1)}
	for v := range ttfts {
		h.Counts[min(int64(len(h.Counts)-1), BinOf(v, 1, k))]++
	}
	return h
}

// Rebin returns h's counts in bins of width c·10^k (which must be at least NiceStep(h.MaxMS)),
// into bins counts.
func (h *TTFTCounts) Rebin(c int64, k int, bins int) []int64 {
	out := make([]int64, bins)
	var perBin int64 // how many units one bin holds
	if k >= h.UnitExp {
		perBin = c
		for range k - h.UnitExp {
			perBin *= 10
		}
	}
	for j, n := range h.Counts {
		b := int64(0)
		if perBin > 0 {
			b = int64(j) / perBin
		} // else the unit is wider than the bin, which happens only when every TTFT is 0 (one count, j = 0)
		out[min(int64(bins-1), b)] += n
	}
	return out
}
