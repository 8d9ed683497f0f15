package sim

import "sort"

func sortStableBy[T any](s []T, less func(a, b T) bool) {
	sort.SliceStable(s, func(i, j int) bool { return less(s[i], s[j]) })
}

func ceilFloat(x float64) float64 {
	c := float64(int64(x))
	if c < x {
		c++
	}
	return c
}
