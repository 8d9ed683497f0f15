package whatif

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestProbeGraces(t *testing.T) {
	cases := []struct {
		lo, hi, step float64
		k            int
		want         []float64
	}{
		{-1, 202, 1, 1, []float64{100}},
		{-1, 202, 1, 2, []float64{66, 134}},
		{-1000, 60000, 1000, 3, []float64{14000, 29000, 44000}},
		{100, 102, 1, 3, []float64{101}},    // one grid point inside
		{100, 101, 1, 2, nil},               // converged
		{-1, 3, 1, 1, []float64{1}},         // 0, 1, 2 inside: the middle
		{-1000, 500, 1000, 1, []float64{0}}, // the grid point 0 only
	}
	for _, c := range cases {
		assert.Equal(t, c.want, probeGraces(c.lo, c.hi, c.step, c.k), "(%v, %v) step %v k %d", c.lo, c.hi, c.step, c.k)
	}
}
