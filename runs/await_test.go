package runs

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/scalein-planner/scalein/internal/runtest"
	"github.com/scalein-planner/scalein/store"
)

// Twenty plans waiting for twenty runs read the store about once per runPollInterval between
// them, not each every runPollInterval (the soak test of issue 29: the plans' reads were most of
// what the servers asked the database); each wakes once its run has ended.
func TestAwaitedRunsAreReadTogether(t *testing.T) {
	ctx := context.Background()
	s := newTestService(t, Config{}, false) // never started: the runs stay queued until cancelled
	ids := make([]string, 20)
	for i := range ids {
		ids[i] = submit(t, s, runtest.Scenario(fmt.Sprintf("awaited %d", i)))
	}
	var wg sync.WaitGroup
	got := make([]store.Run, len(ids))
	for i, id := range ids {
		wg.Go(func() {
			run, err := s.awaitRun(ctx, id)
			assert.NoError(t, err)
			got[i] = run
		})
	}
	time.Sleep(10 * runPollInterval)
	reads := s.awaiting.reads.Load()
	assert.LessOrEqual(t, reads, int64(12), "status reads in 10 poll intervals for 20 waiting runs")
	assert.GreaterOrEqual(t, reads, int64(5))
	for _, id := range ids {
		_, err := s.CancelRun(ctx, id)
		require.NoError(t, err)
	}
	wg.Wait()
	for i, run := range got {
		assert.Equal(t, ids[i], run.ID)
		assert.Equal(t, store.StatusCancelled, run.Status)
	}
}
