package runs

import (
	"context"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/scalein-planner/scalein/internal/runtest"
	"github.com/scalein-planner/scalein/sim"
	"github.com/scalein-planner/scalein/store"
)

// threadAlive reports whether the thread tid of this process still exists, and its nice
// level if so.
func threadAlive(t *testing.T, tid int) (nice int, alive bool) {
	t.Helper()
	b, err := os.ReadFile("/proc/self/task/" + strconv.Itoa(tid) + "/stat")
	if err != nil {
		return 0, false // the thread has ended
	}
	// The fields after the command's closing parenthesis start at the third, state; the
	// nineteenth is the nice level.
	fields := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
	n, err := strconv.Atoi(fields[16])
	require.NoError(t, err)
	return n, true
}

// A run simulates on a thread of its own whose nice level is Config.SimNice above the
// process's, and that thread ends with the run: no thread of the process stays at the lowered
// priority to run anything else (the soak test of issue 29: pages waited for the CPU behind
// simulations).
func TestSimulationsRunAtALowerPriority(t *testing.T) {
	if !threadPrioritySupported {
		t.Skip("per-thread priorities are Linux's")
	}
	base, err := threadNice()
	require.NoError(t, err)
	for _, c := range []struct{ nice, want int }{{7, min(base+7, 19)}, {0, base}} {
		var during, tid atomic.Int64
		simulate := func(ctx context.Context, sc *sim.Scenario, opt sim.RunOptions) (*sim.Report, error) {
			n, err := threadNice()
			require.NoError(t, err)
			during.Store(int64(n))
			tid.Store(int64(threadID()))
			return sim.Run(ctx, sc, opt)
		}
		s := newTestService(t, Config{Workers: 1, Simulate: simulate, SimNice: c.nice}, true)
		id := submit(t, s, runtest.Scenario("nice "+strconv.Itoa(c.nice)))
		waitStatus(t, s, id, store.StatusDone)
		assert.Equal(t, int64(c.want), during.Load(), "the simulation's thread with SimNice %d", c.nice)
		// The lowered thread ends with the run (other tests' threads of this process are not
		// this test's to judge: a run they left blocked may still hold one). One exception is
		// the Go runtime's: a goroutine that exits locked to the process's main thread does not
		// end that thread (Linux would make the process a zombie) but parks it for good, so a
		// simulation that happened to start on the main thread leaves it parked, lowered and
		// idle (runtime.mexit); its thread id is the process id.
		main := int64(os.Getpid())
		t.Logf("SimNice %d: the simulation ran on thread %d (the main thread is %d)", c.nice, tid.Load(), main)
		eventually(t, "the simulation's thread ended or back at the process's priority", func() bool {
			n, alive := threadAlive(t, int(tid.Load()))
			return !alive || (c.nice == 0 && n == base) || (c.nice > 0 && tid.Load() == main)
		})
		if c.nice > 0 && tid.Load() != main {
			_, alive := threadAlive(t, int(tid.Load()))
			assert.False(t, alive, "the lowered thread ends with its run")
		}
	}
}
