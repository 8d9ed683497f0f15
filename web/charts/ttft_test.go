package charts

import (
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/scalein-planner/scalein/runs"
)

// exactBin is ⌊v / (c·10^k)⌋ in exact rational arithmetic: the reference binOf must match.
func exactBin(v float64, c int64, k int) int64 {
	if v <= 0 {
		return 0
	}
	w := new(big.Rat).SetInt64(c)
	p := new(big.Rat).SetInt(new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(max(k, -k))), nil))
	if k >= 0 {
		w.Mul(w, p)
	} else {
		w.Quo(w, p)
	}
	q := new(big.Rat).SetFloat64(v)
	q.Quo(q, w)
	return new(big.Int).Quo(q.Num(), q.Denom()).Int64() // floor: both positive
}

// edgeTTFTs mixes random TTFTs up to maxMS with values on bin edges of every nice width, where
// a float quotient rounds the wrong way (0.3 / 0.1 = 2.9999999999999996).
func edgeTTFTs(rng *rand.Rand, n int, maxMS float64) []float64 {
	out := make([]float64, 0, n+64)
	for range n {
		out = append(out, rng.Float64()*maxMS)
	}
	for _, k := range []int{-3, -2, -1, 0, 1, 2} {
		for _, c := range []float64{1, 2, 3, 5, 7} {
			if v := c * math.Pow(10, float64(k)); v <= maxMS {
				out = append(out, v, math.Nextafter(v, 0), math.Nextafter(v, math.Inf(1)))
			}
		}
	}
	for i := 1; float64(i)*0.1 <= maxMS && i < 200; i++ {
		out = append(out, float64(i)*0.1, float64(i)*0.3) // 0.30000000000000004 and friends
	}
	out = append(out, maxMS, 0)
	return slices.DeleteFunc(out, func(v float64) bool { return v > maxMS })
}

func TestBinOfIsExact(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, maxMS := range []float64{0.0007, 0.05, 1, 3.7, 41, 999.9, 12345, 8e6} {
		for _, v := range edgeTTFTs(rng, 500, maxMS) {
			for _, k := range []int{-5, -4, -3, -2, -1, 0, 1, 2, 3, 5} {
				for _, c := range []int64{1, 2, 5} {
					if exactBin(v, c, k) > 1e9 {
						continue
					}
					require.Equal(t, exactBin(v, c, k), runs.BinOf(v, c, k), "v=%v c=%d k=%d", v, c, k)
				}
			}
		}
	}
}

// TestTTFTHistogramComparesExactly: two runs whose largest TTFTs differ (so the compare page's
// shared width is wider than the smaller run's own) draw the same counts from their stored
// histograms as from binning their raw TTFTs at the shared width; and the stored histogram has at
// most 101 counts whatever the maximum.
func TestTTFTHistogramComparesExactly(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	maxima := []float64{0, 0.0009, 0.03, 0.3, 1, 7.77, 20, 41, 99.99, 100, 2000.5, 123456}
	for _, ma := range maxima {
		for _, mb := range maxima {
			t.Run(fmt.Sprintf("%v_vs_%v", ma, mb), func(t *testing.T) {
				raw := [][]float64{edgeTTFTs(rng, 300, ma), edgeTTFTs(rng, 300, mb)}
				views := make([]runView, 2)
				for i, r := range raw {
					h := runs.CountTTFTs(r)
					require.LessOrEqual(t, len(h.Counts), 101)
					hb, err := json.Marshal(h) // through the stored form
					require.NoError(t, err)
					views[i].ttft = new(runs.TTFTCounts)
					require.NoError(t, json.Unmarshal(hb, views[i].ttft))
				}
				c, k := runs.NiceStep(max(ma, mb))
				bins := int(runs.BinOf(max(ma, mb), c, k)) + 1
				for i, r := range raw {
					want := make([]int64, bins)
					for _, v := range r {
						want[exactBin(v, c, k)]++
					}
					assert.Equal(t, want, views[i].ttft.Rebin(c, k, bins), "run %d", i)
				}
				// The chart draws those counts (its table lists them).
				chart := ttftDistributionChart("x", views)
				require.Len(t, chart.Table.Rows, bins)
			})
		}
	}
}

// TestNiceStepAgreesWithNiceCeil: the histogram's width is the one every other chart's
// niceCeil would pick.
func TestNiceStepAgreesWithNiceCeil(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for range 10000 {
		m := math.Pow(10, rng.Float64()*12-5)
		c, k := runs.NiceStep(m)
		assert.InDelta(t, niceCeil(m/runs.HistogramTargetBins), runs.StepMS(c, k), 1e-12*runs.StepMS(c, k), "max %v", m)
	}
	c, k := runs.NiceStep(0)
	assert.Equal(t, 1.0, runs.StepMS(c, k), "all-zero TTFTs: one bin of 1 ms")
}
