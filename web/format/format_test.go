package format

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestCardValueRoundsLargeFiguresAndKeepsTheExactOne(t *testing.T) {
	for _, tc := range []struct {
		v            float64
		unit         string
		shown, exact string
	}{
		{229613.415898, "s", "229\u202f613.42 s", "229\u202f613.415898 s"},
		{86.554432, "ms", "86.554432 ms", ""},
		{77, "ms", "77 ms", ""},
		{0.000123, "ms", "0.000123 ms", ""},
		{12450.5, "ms", "12\u202f450.5 ms", ""},
		{123456789.25, "ms", "123\u202f456\u202f789 ms", "123\u202f456\u202f789.25 ms"},
	} {
		shown, exact := CardValue(&tc.v, tc.unit)
		require.Equal(t, tc.shown, shown, "%v", tc.v)
		require.Equal(t, tc.exact, exact, "%v", tc.v)
	}
	shown, exact := CardValue(nil, "ms")
	require.Equal(t, Dash, shown)
	require.Empty(t, exact)
}
