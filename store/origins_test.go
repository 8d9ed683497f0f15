package store_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/scalein-planner/scalein/store"
)

// An origin is stored under the SHA-256 of its bytes, once, and read back by that key.
func TestOrigins(t *testing.T) {
	s := mustOpen(t)
	ctx := context.Background()
	key, err := s.PutOrigin(ctx, []byte(`{"kind":"ScaledObject"}`), time.Unix(1, 0))
	require.NoError(t, err)
	assert.True(t, store.IsOriginKey(key))
	again, err := s.PutOrigin(ctx, []byte(`{"kind":"ScaledObject"}`), time.Unix(2, 0))
	require.NoError(t, err)
	assert.Equal(t, key, again)
	got, err := s.GetOrigin(ctx, key)
	require.NoError(t, err)
	assert.JSONEq(t, `{"kind":"ScaledObject"}`, string(got))
	_, err = s.GetOrigin(ctx, "0000000000000000000000000000000000000000000000000000000000000000")
	assert.True(t, errors.Is(err, store.ErrNotFound))
	_, err = s.GetOrigin(ctx, "../x")
	assert.True(t, errors.Is(err, store.ErrNotFound))
	_, err = s.PutOrigin(ctx, nil, time.Unix(1, 0))
	assert.True(t, errors.Is(err, store.ErrInvalid))
}
