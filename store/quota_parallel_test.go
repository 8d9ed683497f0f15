package store_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/scalein-planner/scalein/internal/pgtest"
	"github.com/scalein-planner/scalein/store"
)

// openCounting opens n stores on one database (as n processes would) for a test of counted
// writes. On PostgreSQL a transaction that inserted a run pauses 10 ms as it commits
// (pgtest.SlowCommits), so its run stays invisible for 10 ms after its count: without the
// advisory locks of write_lock.go (a count checked, then acted on) more than the quota is
// admitted on every run of the test, not only when the scheduler interleaves the submissions.
func openCounting(t *testing.T, n int) []*store.Store {
	t.Helper()
	path := filepath.Join(t.TempDir(), "counted.db")
	stores := make([]*store.Store, n)
	for i := range stores {
		stores[i] = mustOpenAt(t, path)
	}
	if onPostgres != "" {
		pgtest.SlowCommits(t, dbTarget(t, path), 10*time.Millisecond, "runs")
		// Each store's pool opens its connections first: opened during the burst, one at a
		// time on a busy machine, they would spread the submissions out.
		var warm sync.WaitGroup
		for _, s := range stores {
			for range 16 {
				warm.Go(func() {
					_, err := s.UsageOf(context.Background(), "nobody")
					assert.NoError(t, err)
				})
			}
		}
		warm.Wait()
	}
	return stores
}

// submitAtOnce has every owner submit perOwner single runs at once (each its own scenario),
// with quota queued runs each and the queue bound capacity, and returns for each owner how
// many were admitted (the submissions take turns over stores, as over several processes), how many refused for the quota, and any other error.
func submitAtOnce(t *testing.T, stores []*store.Store, owners []string, perOwner, quota, capacity int) (admitted, refused map[string]int, others []error) {
	t.Helper()
	admitted, refused = map[string]int{}, map[string]int{}
	var (
		mu            sync.Mutex
		start, finish sync.WaitGroup
	)
	start.Add(1)
	for _, owner := range owners {
		ctx := store.WithQuota(store.WithOwner(context.Background(), owner), store.Quota{QueuedRuns: quota})
		for i := range perOwner {
			s := stores[i%len(stores)]
			finish.Go(func() {
				start.Wait()
				id := fmt.Sprintf("%s-%d", owner, i)
				_, err := s.SubmitRuns(ctx, []store.NewRun{{ID: id, Name: id, ScenarioJSON: []byte(`{"n":"` + id + `"}`), Direct: true}}, capacity, t0, nil)
				mu.Lock()
				defer mu.Unlock()
				switch {
				case err == nil:
					admitted[owner]++
				case errors.Is(err, store.ErrQuota):
					refused[owner]++
				default:
					others = append(others, err)
				}
			})
		}
	}
	start.Done()
	finish.Wait()
	return admitted, refused, others
}

// Many submissions of one user at once admit exactly the quota, and none fails otherwise (the
// soak test of issue 29 saw PostgreSQL's SERIALIZABLE retries run out: two 500s). On
// PostgreSQL (TestPostgres) the owner's and the queue's advisory locks make them one at a time.
func TestParallelSubmissionsOfOneUserAdmitExactlyTheQuota(t *testing.T) {
	for _, capacity := range []int{0, 1000} { // without a queue bound only the owner's lock is taken
		t.Run(fmt.Sprintf("queue bound %d", capacity), func(t *testing.T) {
			s := openCounting(t, 1)[0]
			admitted, refused, others := submitAtOnce(t, []*store.Store{s}, []string{"alice"}, 40, 5, capacity)
			require.Empty(t, others)
			assert.Equal(t, 5, admitted["alice"])
			assert.Equal(t, 35, refused["alice"])
			u, err := s.UsageOf(context.Background(), "alice")
			require.NoError(t, err)
			assert.Equal(t, 5, u.UnfinishedRuns)
		})
	}
}

// Many users submitting at once (the soak's 25) each get exactly their quota, and no
// submission fails for having conflicted with another user's; the queue bound holds exactly.
func TestParallelSubmissionsOfManyUsers(t *testing.T) {
	owners := make([]string, 25)
	for i := range owners {
		owners[i] = fmt.Sprintf("user%02d", i)
	}
	// On PostgreSQL, as four processes (a server and workers): 36 transactions at once.
	stores := openCounting(t, 1)
	if onPostgres != "" {
		stores = openCounting(t, 4)
	}
	admitted, refused, others := submitAtOnce(t, stores, owners, 4, 2, 1000)
	require.Empty(t, others)
	for _, o := range owners {
		assert.Equal(t, 2, admitted[o], o)
		assert.Equal(t, 2, refused[o], o)
	}

	// A queue bound of 30 against 25 users × 4 runs (quota 2 each, so 50 would fit the
	// quotas): exactly 30 are queued, the rest refused as the queue being full.
	s := openCounting(t, 1)[0]
	var (
		mu            sync.Mutex
		queued, full  int
		start, finish sync.WaitGroup
		unexpected    []error
	)
	start.Add(1)
	for _, owner := range owners {
		ctx := store.WithQuota(store.WithOwner(context.Background(), owner), store.Quota{QueuedRuns: 2})
		for i := range 4 {
			finish.Go(func() {
				start.Wait()
				id := fmt.Sprintf("%s-%d", owner, i)
				_, err := s.SubmitRuns(ctx, []store.NewRun{{ID: id, Name: id, ScenarioJSON: []byte(`{"n":"` + id + `"}`)}}, 30, t0, nil)
				mu.Lock()
				defer mu.Unlock()
				switch {
				case err == nil:
					queued++
				case errors.Is(err, store.ErrQueueFull), errors.Is(err, store.ErrQuota):
					full++
				default:
					unexpected = append(unexpected, err)
				}
			})
		}
	}
	start.Done()
	finish.Wait()
	require.Empty(t, unexpected)
	assert.Equal(t, 30, queued)
	assert.Equal(t, 70, full)
}
