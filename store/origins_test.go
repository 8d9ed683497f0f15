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

// An origin is kept OriginTTL after its last import: importing it again renews it, and each
// import deletes the ones older than that.
func TestOriginsExpire(t *testing.T) {
	s := mustOpen(t)
	ctx := context.Background()
	day := func(d int) time.Time { return time.Unix(1_800_000_000, 0).Add(time.Duration(d) * 24 * time.Hour) }
	renewed, err := s.PutOrigin(ctx, []byte(`{"kind":"HorizontalPodAutoscaler"}`), day(0))
	require.NoError(t, err)
	stale, err := s.PutOrigin(ctx, []byte(`{"kind":"ScaledObject"}`), day(0))
	require.NoError(t, err)
	_, err = s.PutOrigin(ctx, []byte(`{"kind":"HorizontalPodAutoscaler"}`), day(20))
	require.NoError(t, err)

	// Within OriginTTL of day 0 nothing goes.
	_, err = s.PutOrigin(ctx, []byte(`{"kind":"other"}`), day(0).Add(store.OriginTTL))
	require.NoError(t, err)
	_, err = s.GetOrigin(ctx, stale)
	require.NoError(t, err, "an origin exactly OriginTTL old is kept")

	fresh, err := s.PutOrigin(ctx, []byte(`{"kind":"new"}`), day(31))
	require.NoError(t, err)
	_, err = s.GetOrigin(ctx, stale)
	assert.True(t, errors.Is(err, store.ErrNotFound), "the origin last imported on day 0 is gone on day 31: %v", err)
	for _, key := range []string{renewed, fresh} {
		_, err = s.GetOrigin(ctx, key)
		assert.NoError(t, err, "origin %s", key)
	}
}
