package store_test

import (
	"bytes"
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/scalein-planner/scalein/store"
)

// Issue 19 M7: an admin delete removes an input and every fit of it, which frees the
// stored-inputs cap and the uploader's quota; another input stays; an unknown sha256 is
// ErrNotFound. Runs on SQLite and, through TestPostgres, on PostgreSQL.
func TestDeleteCalibrationsFreesStorageAndQuota(t *testing.T) {
	ctx := store.WithOwner(context.Background(), "alice")
	s := mustOpen(t)
	line := `{"wall_time":0.01,"scheduled_requests":{"num_prefill_requests":1,"sum_prefill_tokens":10,"num_decode_requests":0,"sum_decode_kv_tokens":0}}` + "\n"
	content := bytes.Repeat([]byte(line), 100)
	other := []byte(line)
	sum := sha(content)
	for skip := range 2 {
		_, err := s.PutCalibration(ctx, store.CalibrationInfo{CalibrationKey: store.CalibrationKey{SHA256: sum, Skip: skip}, Name: "f", Passes: 1, ResultJSON: []byte(`{}`), CreatedAt: t0}, content)
		require.NoError(t, err)
	}
	_, err := s.PutCalibration(ctx, store.CalibrationInfo{CalibrationKey: store.CalibrationKey{SHA256: sha(other)}, Name: "g", Passes: 1, ResultJSON: []byte(`{}`), CreatedAt: t0}, other)
	require.NoError(t, err)
	u, err := s.UsageOf(ctx, "alice")
	require.NoError(t, err)
	require.Equal(t, int64(len(content)+len(other)), u.UploadBytes)

	removed, err := s.DeleteCalibrations(ctx, sum)
	require.NoError(t, err)
	assert.Equal(t, 2, removed, "both fits of the input")

	used, stored, err := s.CalibrationStorage(ctx, sum)
	require.NoError(t, err)
	assert.False(t, stored)
	assert.Equal(t, int64(len(other)), used, "the cap counts only the other input")
	u, err = s.UsageOf(ctx, "alice")
	require.NoError(t, err)
	assert.Equal(t, int64(len(other)), u.UploadBytes, "the quota is freed")
	for skip := range 2 {
		_, err = s.GetCalibration(ctx, store.CalibrationKey{SHA256: sum, Skip: skip})
		require.ErrorIs(t, err, store.ErrNotFound)
	}
	list, err := s.ListCalibrations(ctx, 10)
	require.NoError(t, err)
	require.Len(t, list, 1)
	assert.Equal(t, sha(other), list[0].SHA256)

	_, err = s.DeleteCalibrations(ctx, sum)
	require.ErrorIs(t, err, store.ErrNotFound, "deleted already")
	_, err = s.DeleteCalibrations(ctx, "nothex")
	require.ErrorIs(t, err, store.ErrInvalid)

	// The same input can be uploaded again afterwards.
	created, err := s.PutCalibration(ctx, store.CalibrationInfo{CalibrationKey: store.CalibrationKey{SHA256: sum}, Name: "f", Passes: 1, ResultJSON: []byte(`{}`), CreatedAt: t0}, content)
	require.NoError(t, err)
	assert.True(t, created)
	got, err := s.CalibrationContent(ctx, store.CalibrationKey{SHA256: sum})
	require.NoError(t, err)
	assert.Equal(t, content, got)
}
