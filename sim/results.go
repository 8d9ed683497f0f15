package sim

import (
	"math/bits"
	"slices"
)

// maxReservedResults bounds the result arrays reserved up front (3 × 8 bytes a request): a
// workload's total is an upper bound that a run may not reach, and beyond this the arrays grow
// as before.
const maxReservedResults = 1 << 22

// reserveResults gives the per-request result arrays (TTFT, its instant, E2E) room for every
// request the workload can bring, so a day of 1.4 M requests does not copy them as they grow
// (issue 35: 6 % of its time).
func (e *engine) reserveResults() {
	n := int(min(e.src.total(), maxReservedResults))
	e.ttft = make([]int64, 0, n)
	e.ttftAt = make([]int64, 0, n)
	e.e2e = make([]int64, 0, n)
}

// rankValues returns the values of ranks ks (0-based, ascending) of vals as sorting a copy would
// give them, without sorting it: each rank is selected in the part left of the one after it
// (introselect: median-of-three quickselect, and a sort of a part that partitions badly).
func rankValues(vals []int64, ks ...int) []int64 {
	return rankInPlace(slices.Clone(vals), ks...)
}

// rankInPlace is rankValues reordering vals itself, for values nothing else reads in order.
func rankInPlace(s []int64, ks ...int) []int64 {
	out := make([]int64, len(ks))
	hi := len(s)
	for i := len(ks) - 1; i >= 0; i-- {
		k := ks[i]
		selectRank(s[:hi], k)
		out[i] = s[k]
		hi = k + 1 // every value left of k is ≤ s[k]
	}
	return out
}

// selectRank reorders s so that s[k] is the value sorting would put there, with no larger value
// before it and no smaller one after it.
func selectRank(s []int64, k int) {
	lo, hi := 0, len(s) // the rank lies in s[lo:hi]
	budget := 2 * bits.Len(uint(len(s)))
	for hi-lo > 16 {
		if budget == 0 {
			slices.Sort(s[lo:hi])
			return
		}
		budget--
		// Median of three as the pivot, then a three-way partition: < p, == p, > p.
		m := lo + (hi-lo)/2
		a, b, c := s[lo], s[m], s[hi-1]
		p := max(min(a, b), min(max(a, b), c))
		lt, i, gt := lo, lo, hi
		for i < gt {
			switch v := s[i]; {
			case v < p:
				s[lt], s[i] = s[i], s[lt]
				lt++
				i++
			case v > p:
				gt--
				s[gt], s[i] = s[i], s[gt]
			default:
				i++
			}
		}
		switch {
		case k < lt:
			hi = lt
		case k >= gt:
			lo = gt
		default:
			return // s[k] == p, in its place
		}
	}
	slices.Sort(s[lo:hi])
}
