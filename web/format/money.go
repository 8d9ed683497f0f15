package format

import (
	"math"
	"strconv"
)

// Money writes an amount with two decimals and thin-space thousands ("1 234.50").
func Money(v float64) string {
	r := math.Round(v*100) / 100
	if r == 0 {
		r = 0 // no "-0.00"
	}
	return groupThousands(strconv.FormatFloat(r, 'f', 2, 64))
}
