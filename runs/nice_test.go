package runs

import (
	"context"
	"os"
	"path/filepath"
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

// threadNices lists the nice level of every thread of this process.
func threadNices(t *testing.T) []int {
	t.Helper()
	stats, err := filepath.Glob("/proc/self/task/*/stat")
	require.NoError(t, err)
	var out []int
	for _, path := range stats {
		b, err := os.ReadFile(path)
		if err != nil {
			continue // the thread ended meanwhile
		}
		// The fields after the command's closing parenthesis start at the third, state; the
		// nineteenth is the nice level.
		fields := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
		n, err := strconv.Atoi(fields[16])
		require.NoError(t, err)
		out = append(out, n)
	}
	return out
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
		var during atomic.Int64
		simulate := func(ctx context.Context, sc *sim.Scenario, opt sim.RunOptions) (*sim.Report, error) {
			n, err := threadNice()
			require.NoError(t, err)
			during.Store(int64(n))
			return sim.Run(ctx, sc, opt)
		}
		s := newTestService(t, Config{Workers: 1, Simulate: simulate, SimNice: c.nice}, true)
		id := submit(t, s, runtest.Scenario("nice "+strconv.Itoa(c.nice)))
		waitStatus(t, s, id, store.StatusDone)
		assert.Equal(t, int64(c.want), during.Load(), "the simulation's thread with SimNice %d", c.nice)
		eventually(t, "every thread back at the process's priority", func() bool {
			for _, n := range threadNices(t) {
				if n != base {
					return false
				}
			}
			return true
		})
	}
}
