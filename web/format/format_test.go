package format

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestCardValueReadsByUnitAndKeepsTheExactOne(t *testing.T) {
	for _, tc := range []struct {
		v            float64
		unit         string
		shown, exact string
	}{
		{86.554432, "ms", "86.6 ms", "86.554432 ms"},
		{77, "ms", "77 ms", ""},
		{0.000123, "ms", "0.000123 ms", ""},
		{12450.5, "ms", "12.5 s", "12\u202f450.5 ms"},
		{720433.71, "ms", "720 s", "720\u202f433.71 ms"},
		{86175694, "ms", "23:56:16 h", "86\u202f175\u202f694 ms"},
		{786.09337, "s", "786 s", "786.09337 s"},
		{1.871027, "GPU-h", "1.87 GPU-h", "1.871027 GPU-h"},
		{262, "pulls", "262 pulls", ""},
	} {
		shown, exact := CardValue(&tc.v, tc.unit)
		require.Equal(t, tc.shown, shown, "%v", tc.v)
		require.Equal(t, tc.exact, exact, "%v", tc.v)
	}
	shown, exact := CardValue(nil, "ms")
	require.Equal(t, Dash, shown)
	require.Empty(t, exact)
}

// Every unit boundary, rounding on both sides of it, zero, negatives, and NaN never printed.
func TestDuration(t *testing.T) {
	for _, tc := range []struct {
		ms   float64
		want string
	}{
		{0, "0 ms"},
		{0.5, "0.5 ms"},
		{3, "3 ms"},
		{109.21356, "109 ms"},
		{999.4, "999 ms"},
		{999.6, "1 s"}, // the unit is chosen by the value as it reads
		{1000, "1 s"},
		{49130.835501, "49.1 s"},
		{786093.37, "786 s"},
		{999_400, "999 s"},
		{999_999, "16.7 min"},
		{1_000_000, "16.7 min"},
		{1_500_000, "25 min"},
		{3_569_000, "59.5 min"},
		{3_599_999, "1:00:00 h"},
		{3_600_000, "1:00:00 h"},
		{86_175_694, "23:56:16 h"},
		{-2500, "-2.5 s"},
		{-7_200_000, "-2:00:00 h"},
		{math.NaN(), Dash},
		{math.Inf(1), Dash},
	} {
		assert.Equal(t, tc.want, Duration(tc.ms), "%v", tc.ms)
	}
	assert.Equal(t, Dash, DurationOpt(nil))
}

func TestSig3(t *testing.T) {
	for in, want := range map[float64]string{0: "0", 1: "1", 1.005: "1", 1.25: "1.25", 12.345: "12.3", 0.012345: "0.0123",
		-0.0001: "-0.0001", 1234.5: "1235", 49130.8: "49\u202f131", -786.09: "-786", 1e9: "1\u202f000\u202f000\u202f000"} {
		assert.Equal(t, want, Sig3(in), "%v", in)
	}
	assert.Equal(t, Dash, Sig3(math.NaN()))
}

func TestGPUHoursBytesAndCost(t *testing.T) {
	assert.Equal(t, "1.87 GPU-h", GPUHours(1.871027))
	assert.Equal(t, "0.00 GPU-h", GPUHours(-0.001))
	assert.Equal(t, "12\u202f345.68 GPU-h", GPUHours(12345.678))
	assert.Equal(t, Dash, GPUHours(math.NaN()))

	for in, want := range map[float64]string{0: "0 bytes", 1: "1 byte", 999: "999 bytes", 1000: "1 kB", 1536: "1.54 kB",
		999_499: "999 kB", 999_500: "1 MB", 34.4e9: "34.4 GB", 2e15: "2 PB"} {
		assert.Equal(t, want, Bytes(in), "%v", in)
	}

	assert.Equal(t, "2.50", Cost(2.5, ""))
	assert.Equal(t, "$2.50", Cost(2.5, "$"))
	assert.Equal(t, "-$1.20", Cost(-1.2, "$"))
	assert.Equal(t, "2.50 EUR", Cost(2.5, "EUR"))
	assert.Equal(t, "12\u202f345.00 EUR", Cost(12345, "EUR"))
	assert.Equal(t, "0.00", Cost(-0.001, ""))
}

func TestReadable(t *testing.T) {
	assert.Equal(t, "786 s", Readable(786.09337, "s"))
	assert.Equal(t, "1.43 GB", Readable(1.43e9, "bytes"))
	assert.Equal(t, "1 worker", Readable(1, "workers"))
	assert.Equal(t, "1\u202f426\u202f236 requests", Readable(1426236, "requests"), "whole counts in full")
	assert.Equal(t, "3.14 workers", Readable(3.14159, "workers"))
	assert.Equal(t, "+1.2 s", SignedReadable(1200, "ms"))
	assert.Equal(t, "-0.37 GPU-h", SignedReadable(-0.371, "GPU-h"))
	assert.Equal(t, "0 ms", SignedReadable(0, "ms"))
	assert.Equal(t, "50 %", Readable(0.5, "share"))
	assert.Equal(t, "+50 points", SignedReadable(0.5, "share"))
	assert.Equal(t, Dash, Readable(math.NaN(), "ms"))
	assert.Equal(t, Dash, ReadableOpt(nil, "ms"))
}

// Issue 35: a time setting reads in the largest unit that keeps it exact.
func TestSetting(t *testing.T) {
	for _, tc := range []struct {
		ms   float64
		want string
	}{
		{900_000, "15 min"}, {300_000, "5 min"}, {15_000, "15 s"}, {30_000, "30 s"}, {60_000, "1 min"},
		{90_000, "1.5 min"}, {5_400_000, "1.5 h"}, {86_400_000, "24 h"}, {2_700_000, "45 min"},
		{1500, "1.5 s"}, {2, "2 ms"}, {0.05, "0.05 ms"}, {0, "0 s"}, {1_234_567, "1234.567 s"},
	} {
		if got := Setting(tc.ms); got != tc.want {
			t.Errorf("Setting(%v) = %q, want %q", tc.ms, got, tc.want)
		}
	}
}

func TestClockTime(t *testing.T) {
	for in, want := range map[string]string{
		"2026-12-03T00:00:00Z":      "2026-12-03 00:00 UTC",
		"2026-12-03T01:30:00+01:00": "2026-12-03 00:30 UTC",
		"2026-12-03T00:00:07Z":      "2026-12-03 00:00:07 UTC",
		"not a time":                "not a time",
	} {
		if got := ClockTime(in); got != want {
			t.Errorf("ClockTime(%q) = %q, want %q", in, got, want)
		}
	}
}
