package sim

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestStretchEndsMatchPassByPass checks that a stretch's pass ends, computed lazily in chunks
// with the decode term taken once (extendEnds), are the ends Timing.PassMS gives pass by pass,
// for random timings, batch sizes and starting K, whatever the chunks.
func TestStretchEndsMatchPassByPass(t *testing.T) {
	rng := rand.New(rand.NewPCG(35, 2))
	for trial := 0; trial < 2000; trial++ {
		tm := Timing{DecodeMS: rng.Float64() * 20, DecodeMSPerSeq: rng.Float64() * 0.3,
			DecodeMSPer1kKVTokens: rng.Float64() * 0.1}
		if trial%7 == 0 {
			tm.DecodeMSPer1kKVTokens = 0
		}
		D, K := 1+rng.IntN(200), rng.IntN(100_000)
		f := &Fleet{Timing: tm}
		w := &worker{f: f, batch: make([]*request, D), passEnd: rng.Int64N(1 << 45), passK: K}
		n := 1 + rng.IntN(300)
		want := make([]int64, n)
		end, k := w.passEnd, K
		for i := range want {
			k += D
			end = addNS(end, msToNS(tm.PassMS(0, D, k)))
			want[i] = end
		}
		for len(w.ends) < n {
			w.extendEnds(min(n-len(w.ends), 1+rng.IntN(40)))
		}
		for i := range want {
			if w.ends[i] != want[i] {
				t.Fatalf("trial %d (D %d, K %d, %+v): pass %d ends at %d, pass by pass %d", trial, D, K, tm, i+1, w.ends[i], want[i])
			}
		}
		if w.endsK != k {
			t.Fatalf("trial %d: K %d after the stretch, want %d", trial, w.endsK, k)
		}
	}
}

// TestMsToNSMatchesFloor checks msToNS's truncating fast path against the rule as written,
// floor(ms × 1e6 + 0.5) saturated at ±maxTimeNS (NaN 0), on random durations of every scale,
// halves of a nanosecond and the edges.
func TestMsToNSMatchesFloor(t *testing.T) {
	ref := func(ms float64) int64 {
		ns := math.Floor(float64(ms*1e6) + 0.5)
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
	vals := []float64{0, math.Copysign(0, -1), 0.5e-6, -0.5e-6, 1.5e-6, 2.5e-6, -1.5e-6, 1e-7, -1e-7,
		maxTimeNS / 1e6, maxTimeNS/1e6 - 1e-6, -maxTimeNS / 1e6, 1e300, -1e300, math.Inf(1), math.Inf(-1), math.NaN(),
		math.SmallestNonzeroFloat64, 0.49999999999999994e-6}
	rng := rand.New(rand.NewPCG(35, 3))
	for range 200_000 {
		v := math.Ldexp(rng.Float64(), rng.IntN(140)-60)
		if rng.IntN(4) == 0 {
			v = (float64(rng.Int64N(1<<40)) + 0.5) / 1e6 // a half nanosecond, as near as doubles get
		}
		if rng.IntN(5) == 0 {
			v = -v
		}
		vals = append(vals, v)
	}
	for _, v := range vals {
		if got, want := msToNS(v), ref(v); got != want {
			t.Fatalf("msToNS(%v) = %d, floor rule %d", v, got, want)
		}
	}
}
