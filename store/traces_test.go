package store_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/scalein-planner/scalein/sim"
	"github.com/scalein-planner/scalein/store"
)

// The store is the simulator's source of uploaded traces.
var _ sim.TraceSource = (*store.Store)(nil)

func sha(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

func traceJSONL(rows int) []byte {
	var b strings.Builder
	for i := range rows {
		fmt.Fprintf(&b, `{"timestamp":%d,"input_length":%d,"output_length":%d,"hash_ids":[%d,%d]}`+"\n", i*10, 512+i, 64, i, i+1)
	}
	return []byte(b.String())
}

func TestPutTrace(t *testing.T) {
	ctx := context.Background()
	content := traceJSONL(200)
	id := sha(content)

	t.Run("StoredOnceBySHA", func(t *testing.T) {
		s := mustOpen(t)
		created, err := s.PutTrace(ctx, id, "conversation.jsonl", content, 200, t0)
		require.NoError(t, err)
		assert.True(t, created)
		created, err = s.PutTrace(ctx, id, "renamed.jsonl", content, 200, t0.Add(time.Hour))
		require.NoError(t, err)
		assert.False(t, created, "the same content is stored once")

		info, err := s.GetTraceInfo(ctx, id)
		require.NoError(t, err)
		assert.Equal(t, store.TraceInfo{SHA256: id, Name: "conversation.jsonl", SizeBytes: int64(len(content)), Rows: 200, CreatedAt: t0}, info)

		got, err := s.Trace(id)
		require.NoError(t, err)
		assert.Equal(t, content, got, "content round-trips through compression")

		infos, err := s.ListTraces(ctx)
		require.NoError(t, err)
		assert.Equal(t, []store.TraceInfo{info}, infos)
	})

	t.Run("ListNewestFirst", func(t *testing.T) {
		s := mustOpen(t)
		var want []string
		for i := range 4 {
			c := traceJSONL(i + 1)
			_, err := s.PutTrace(ctx, sha(c), fmt.Sprint(i), c, i+1, t0.Add(time.Duration(i)*time.Minute))
			require.NoError(t, err)
			want = append([]string{sha(c)}, want...)
		}
		infos, err := s.ListTraces(ctx)
		require.NoError(t, err)
		var got []string
		for _, in := range infos {
			got = append(got, in.SHA256)
		}
		assert.Equal(t, want, got)
	})

	t.Run("EmptyContent", func(t *testing.T) {
		s := mustOpen(t)
		created, err := s.PutTrace(ctx, sha(nil), "empty", nil, 0, t0)
		require.NoError(t, err)
		assert.True(t, created)
		got, err := s.Trace(sha(nil))
		require.NoError(t, err)
		assert.Empty(t, got)
	})

	t.Run("ErrInvalid", func(t *testing.T) {
		s := mustOpen(t)
		for name, tc := range map[string]struct {
			sha  string
			rows int
			now  time.Time
		}{
			"WrongDigest":  {sha([]byte("other")), 200, t0},
			"UpperCaseHex": {strings.ToUpper(id), 200, t0},
			"TooShort":     {id[:10], 200, t0},
			"NegativeRows": {id, -1, t0},
			"ZeroTime":     {id, 200, time.Time{}},
		} {
			_, err := s.PutTrace(ctx, tc.sha, "x", content, tc.rows, tc.now)
			assert.ErrorIs(t, err, store.ErrInvalid, name)
		}
		infos, err := s.ListTraces(ctx)
		require.NoError(t, err)
		assert.Empty(t, infos, "nothing stored from invalid input")
	})

	t.Run("ErrNotFound", func(t *testing.T) {
		s := mustOpen(t)
		_, err := s.Trace(id)
		require.ErrorIs(t, err, store.ErrNotFound)
		assert.Contains(t, err.Error(), id)
		assert.Contains(t, err.Error(), "upload")
		_, err = s.GetTraceInfo(ctx, id)
		require.ErrorIs(t, err, store.ErrNotFound)
	})
}
