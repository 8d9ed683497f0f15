package sim

import (
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
