package store

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// denyWrites makes canWrite refuse the paths given, as access(2) does for a non-root user on a
// mode-444 file; tests run as root, which file modes do not stop.
func denyWrites(t *testing.T, denied ...string) {
	t.Helper()
	old := canWrite
	t.Cleanup(func() { canWrite = old })
	canWrite = func(path string) error {
		for _, d := range denied {
			if path == d {
				return unix.EACCES
			}
		}
		return old(path)
	}
}

func TestOpenRefusesReadOnlyFileNamingItAndTheFix(t *testing.T) {
	path := filepath.Join(t.TempDir(), "scalein.db")
	st, err := Open(context.Background(), path)
	require.NoError(t, err)
	require.NoError(t, st.Close())

	denyWrites(t, path)
	_, err = Open(context.Background(), path)
	require.Error(t, err)
	assert.Contains(t, err.Error(), path+" is read-only")
	assert.Contains(t, err.Error(), "chmod u+w "+path)
	assert.Contains(t, err.Error(), "give -db a writable path")
}

func TestOpenRefusesReadOnlyDirectory(t *testing.T) {
	dir := t.TempDir()
	denyWrites(t, dir)
	_, err := Open(context.Background(), filepath.Join(dir, "scalein.db"))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "the directory "+dir+" is read-only")
	assert.Contains(t, err.Error(), "-wal")
}

func TestOpenCreatesMissingFileInWritableDirectory(t *testing.T) {
	// The file does not exist yet: only the directory is probed, so a new database still opens.
	path := filepath.Join(t.TempDir(), "new.db")
	denyWrites(t, path) // would refuse the file if it were probed before it exists
	st, err := Open(context.Background(), path)
	require.NoError(t, err)
	require.NoError(t, st.Close())
}

// TestOpenRefusesImmutableFile uses the real probe: an immutable file (chattr +i) is read-only
// for root too, so this checks access(2) is what decides, without the injected probe.
func TestOpenRefusesImmutableFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "scalein.db")
	st, err := Open(context.Background(), path)
	require.NoError(t, err)
	require.NoError(t, st.Close())
	if out, err := exec.Command("chattr", "+i", path).CombinedOutput(); err != nil {
		t.Skipf("chattr +i is not available on this temp dir's filesystem (%v: %s); the injected-probe tests cover the check", err, out)
	}
	t.Cleanup(func() { _ = exec.Command("chattr", "-i", path).Run() })
	if f, err := os.OpenFile(path, os.O_WRONLY, 0); err == nil {
		_ = f.Close()
		t.Skip("chattr +i did not make the file read-only here")
	} else {
		require.True(t, errors.Is(err, os.ErrPermission), "%v", err)
	}
	_, err = Open(context.Background(), path)
	require.Error(t, err)
	assert.Contains(t, err.Error(), path+" is read-only")
}
