package sim

// ceilFloat is the ceiling of a non-negative x below 2^63: the rounding up of transfer and
// pull durations to whole nanoseconds.
func ceilFloat(x float64) float64 {
	c := float64(int64(x))
	if c < x {
		c++
	}
	return c
}
