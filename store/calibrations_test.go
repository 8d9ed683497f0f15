package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/scalein-planner/scalein/store"
)

func TestPutCalibration(t *testing.T) {
	ctx := context.Background()
	content := []byte(`{"wall_time":0.01,"scheduled_requests":{"num_prefill_requests":1,"sum_prefill_tokens":10,"num_decode_requests":0,"sum_decode_kv_tokens":0}}` + "\n")
	key := store.CalibrationKey{SHA256: sha(content), Worker: "w1", Skip: 2}
	info := store.CalibrationInfo{CalibrationKey: key, Name: "fpm.jsonl", Passes: 1, ResultJSON: []byte(`{"passes":1}`), CreatedAt: t0}

	t.Run("OK", func(t *testing.T) {
		s := mustOpen(t)
		created, err := s.PutCalibration(ctx, info, content)
		require.NoError(t, err)
		assert.True(t, created)
		again := info
		again.Name, again.CreatedAt = "other", t0.Add(time.Hour)
		created, err = s.PutCalibration(ctx, again, content)
		require.NoError(t, err)
		assert.False(t, created, "the same input and options are stored once")

		// Other options are another calibration of the same file.
		other := info
		other.Worker = ""
		created, err = s.PutCalibration(ctx, other, content)
		require.NoError(t, err)
		assert.True(t, created)

		got, err := s.GetCalibration(ctx, key)
		require.NoError(t, err)
		want := info
		want.SizeBytes = int64(len(content))
		assert.Equal(t, want, got)
		body, err := s.CalibrationContent(ctx, key)
		require.NoError(t, err)
		assert.Equal(t, content, body)
		list, err := s.ListCalibrations(ctx, 10)
		require.NoError(t, err)
		assert.Len(t, list, 2)
	})
	t.Run("ErrNotFound", func(t *testing.T) {
		s := mustOpen(t)
		_, err := s.GetCalibration(ctx, key)
		require.ErrorIs(t, err, store.ErrNotFound)
		_, err = s.CalibrationContent(ctx, key)
		require.ErrorIs(t, err, store.ErrNotFound)
	})
	t.Run("ErrInvalid", func(t *testing.T) {
		s := mustOpen(t)
		bad := info
		bad.SHA256 = sha([]byte("other"))
		_, err := s.PutCalibration(ctx, bad, content)
		require.ErrorIs(t, err, store.ErrInvalid)
		bad = info
		bad.Skip = -1
		_, err = s.PutCalibration(ctx, bad, content)
		require.ErrorIs(t, err, store.ErrInvalid)
	})
}
