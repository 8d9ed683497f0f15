package runs

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/scalein-planner/scalein/internal/runtest"
	"github.com/scalein-planner/scalein/sim"
	"github.com/scalein-planner/scalein/store"
)

func openStore(t *testing.T, path string) *store.Store { return runtest.OpenStore(t, path) }

// newTestService builds a service on a fresh database. start=false leaves its workers
// stopped, so submitted runs stay queued.
func newTestService(t *testing.T, cfg Config, start bool) *Service {
	t.Helper()
	if cfg.Store == nil {
		cfg.Store = openStore(t, filepath.Join(t.TempDir(), "test.db"))
	}
	s, err := New(cfg)
	require.NoError(t, err)
	if start {
		require.NoError(t, s.Start(context.Background()))
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = s.Shutdown(ctx)
	})
	return s
}

func mustParse(t *testing.T, doc string) *sim.Scenario {
	t.Helper()
	sc, err := sim.Parse([]byte(doc), sim.ParseEnv{})
	require.NoError(t, err)
	return sc
}

// submit submits one scenario directly, as the form and the API do, and returns its run id.
func submit(t *testing.T, s *Service, doc string) string {
	t.Helper()
	subs, err := s.Submit(context.Background(), mustParse(t, doc))
	require.NoError(t, err)
	return subs[0].Run.ID
}

// waitStatus polls the store until the run reaches want (or fails the test after 10 s).
func waitStatus(t *testing.T, s *Service, id, want string) store.Run {
	t.Helper()
	return runtest.WaitStatus(t, s.store, id, want)
}
