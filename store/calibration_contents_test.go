package store_test

import (
	"bytes"
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/scalein-planner/scalein/store"
)

// Issue 19 M7: one file fitted with several options is stored once: the storage does not grow
// with the second and third calibration of the same content, and each reads it back.
func TestCalibrationContentStoredOnce(t *testing.T) {
	ctx := context.Background()
	s := mustOpen(t)
	line := `{"wall_time":0.01,"scheduled_requests":{"num_prefill_requests":1,"sum_prefill_tokens":10,"num_decode_requests":0,"sum_decode_kv_tokens":0}}` + "\n"
	content := bytes.Repeat([]byte(line), 2000)
	sum := sha(content)

	used, stored, err := s.CalibrationStorage(ctx, sum)
	require.NoError(t, err)
	assert.Zero(t, used)
	assert.False(t, stored)

	var after []int64
	for skip := range 3 {
		k := store.CalibrationKey{SHA256: sum, Skip: skip}
		created, err := s.PutCalibration(ctx, store.CalibrationInfo{CalibrationKey: k, Name: "f", Passes: 1, ResultJSON: []byte(`{}`), CreatedAt: t0}, content)
		require.NoError(t, err)
		require.True(t, created)
		used, stored, err := s.CalibrationStorage(ctx, sum)
		require.NoError(t, err)
		assert.True(t, stored)
		after = append(after, used)
		got, err := s.CalibrationContent(ctx, k)
		require.NoError(t, err)
		assert.Equal(t, content, got)
	}
	assert.Equal(t, int64(len(content)), after[0])
	assert.Equal(t, []int64{after[0], after[0], after[0]}, after, "the content is stored once")

	other := []byte(line)
	_, err = s.PutCalibration(ctx, store.CalibrationInfo{CalibrationKey: store.CalibrationKey{SHA256: sha(other)}, Name: "g", Passes: 1, ResultJSON: []byte(`{}`), CreatedAt: t0}, other)
	require.NoError(t, err)
	used, _, err = s.CalibrationStorage(ctx, sum)
	require.NoError(t, err)
	assert.Equal(t, after[0]+int64(len(other)), used, "another content adds its bytes")
}
