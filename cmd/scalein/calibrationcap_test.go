package main

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/scalein-planner/scalein/web"
)

// Issue 19 M7: -max-calibration-bytes sets the cap on stored calibration inputs; a bad value
// stops serve at start-up (exit 2) with a message naming the flag.
func TestServeMaxCalibrationBytes(t *testing.T) {
	n, err := calibrationCap("")
	require.NoError(t, err)
	assert.Equal(t, int64(web.DefaultMaxCalibrationBytes), n)
	n, err = calibrationCap("500MB")
	require.NoError(t, err)
	assert.Equal(t, int64(500_000_000), n)
	n, err = calibrationCap("1GiB")
	require.NoError(t, err)
	assert.Equal(t, int64(1<<30), n)

	for _, tc := range []struct{ value, want string }{
		{"0", "-max-calibration-bytes must be above 0"},
		{"-5", "-max-calibration-bytes: \"-5\" is not a size"},
		{"lots", "-max-calibration-bytes: \"lots\" is not a size"},
		{"5 parsecs", "unknown unit"},
	} {
		var stdout, stderr syncBuffer
		db := filepath.Join(t.TempDir(), "s.db")
		code := runServe(context.Background(), []string{"-addr", "127.0.0.1:0", "-db", db, "-max-calibration-bytes", tc.value}, &stdout, &stderr)
		assert.Equal(t, 2, code, tc.value)
		assert.Contains(t, stderr.String(), tc.want, tc.value)
	}
}
