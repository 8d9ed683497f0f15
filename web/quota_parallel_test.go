package web

import (
	"context"
	"fmt"
	"net/http"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/scalein-planner/scalein/internal/pgtest"
	"github.com/scalein-planner/scalein/runs"
	"github.com/scalein-planner/scalein/store"
)

// parallelCodes sends n requests at once (made by req(i)) as user and counts the answers by
// status.
func parallelCodes(t *testing.T, s *Server, user string, n int, req func(i int) *http.Request) map[int]int {
	t.Helper()
	reqs := make([]*http.Request, n)
	for i := range reqs {
		reqs[i] = req(i)
		reqs[i].Header.Set("X-Forwarded-User", user)
	}
	codes := make([]int, n)
	var start, done sync.WaitGroup
	start.Add(1)
	for i := range n {
		done.Go(func() {
			start.Wait()
			codes[i] = do(t, s.Handler(), reqs[i]).Code
		})
	}
	start.Done()
	done.Wait()
	out := map[int]int{}
	for _, c := range codes {
		out[c]++
	}
	return out
}

// testParallelQuotas is finding M2's reproduction on one store: N requests at once, each of
// which alone fits, admit exactly the quota.
func testParallelQuotas(t *testing.T, open func(t *testing.T) *store.Store) {
	t.Run("QueuedRuns", func(t *testing.T) {
		s := newAccessServer(t, runs.Config{Store: open(t)}, withUsers(Access{Quotas: Quotas{QueuedRuns: 3}}), 0)
		codes := parallelCodes(t, s, "alice", 10, func(i int) *http.Request {
			return jsonReq(http.MethodPost, "/api/v1/runs", testScenario(fmt.Sprintf("parallel %d", i)))
		})
		assert.Equal(t, map[int]int{http.StatusAccepted: 3, http.StatusTooManyRequests: 7}, codes)
		u, err := s.store.UsageOf(context.Background(), "alice")
		require.NoError(t, err)
		assert.Equal(t, 3, u.UnfinishedRuns)
	})
	t.Run("Pairs", func(t *testing.T) {
		// The soak test of issue 29: pairs sent at once on PostgreSQL ran out of SERIALIZABLE
		// retries (500). Each pair is two runs: a quota of 6 admits exactly 3 of 24.
		s := newAccessServer(t, runs.Config{Store: open(t)}, withUsers(Access{Quotas: Quotas{QueuedRuns: 6}}), 0)
		codes := parallelCodes(t, s, "erin", 24, func(i int) *http.Request {
			return jsonReq(http.MethodPost, "/api/v1/pairs", `{"kind": "hints", "scenario": `+testScenario(fmt.Sprintf("pair %d", i))+`}`)
		})
		assert.Equal(t, map[int]int{http.StatusAccepted: 3, http.StatusTooManyRequests: 21}, codes)
		u, err := s.store.UsageOf(context.Background(), "erin")
		require.NoError(t, err)
		assert.Equal(t, 6, u.UnfinishedRuns)
	})
	t.Run("SweepPoints", func(t *testing.T) {
		s := newAccessServer(t, runs.Config{Store: open(t)}, withUsers(Access{Quotas: Quotas{SweepPoints: 10}}), 0)
		scenario := fourWorkers(t, `[{"at_ms": 100, "count": 1}]`)
		codes := parallelCodes(t, s, "carol", 8, func(i int) *http.Request {
			return jsonReq(http.MethodPost, "/api/v1/sweeps", sweepBody(scenario,
				fmt.Sprintf(`[{"path": "kvcr.bandwidth_gbps", "values": [%d, %d]}]`, 10+2*i, 11+2*i)))
		})
		assert.Equal(t, map[int]int{http.StatusAccepted: 5, http.StatusTooManyRequests: 3}, codes)
	})
	t.Run("UploadBytes", func(t *testing.T) {
		size := int64(len(traceLines(20, 10)))
		s := newAccessServer(t, runs.Config{Store: open(t)}, withUsers(Access{Quotas: Quotas{UploadBytes: 2*size + size/2}}), 0)
		codes := parallelCodes(t, s, "dave", 16, func(i int) *http.Request {
			return traceUploadRequest(t, traceLines(20, 10+i)) // sixteen files of one size
		})
		assert.Equal(t, map[int]int{http.StatusSeeOther: 2, http.StatusTooManyRequests: 14}, codes)
		u, err := s.store.UsageOf(context.Background(), "dave")
		require.NoError(t, err)
		assert.Equal(t, 2*size, u.UploadBytes)
	})
}

func TestParallelQuotasOnSQLite(t *testing.T) {
	testParallelQuotas(t, func(t *testing.T) *store.Store { return openStore(t, filepath.Join(t.TempDir(), "test.db")) })
}

func TestParallelQuotasOnPostgres(t *testing.T) {
	if testing.Short() {
		t.Skip("-short")
	}
	cluster := pgtest.Require(t)
	testParallelQuotas(t, func(t *testing.T) *store.Store {
		dsn := cluster.NewDatabase(t)
		st, err := store.Open(context.Background(), dsn)
		require.NoError(t, err)
		t.Cleanup(func() { _ = st.Close() })
		// What a quota counts stays invisible for 10 ms after each count (its transaction
		// pauses as it commits), so that without the store's advisory locks more than the
		// quota is admitted on every run of the test; and the pool opens its connections
		// before the requests, which would otherwise wait for them one at a time.
		pgtest.SlowCommits(t, dsn, 10*time.Millisecond, "runs", "sweeps", "traces", "calibrations")
		var warm sync.WaitGroup
		for range 16 {
			warm.Go(func() {
				_, err := st.UsageOf(context.Background(), "nobody")
				assert.NoError(t, err)
			})
		}
		warm.Wait()
		return st
	})
}
