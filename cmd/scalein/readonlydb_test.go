package main

import (
	"context"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/scalein-planner/scalein/store"
)

// TestServeNamesReadOnlyDatabaseFile is issue 19 L7 through serve: a database file the process
// cannot write stops start-up with a message naming the file and the fix, not "job queue:
// recover jobs of a previous process: attempt to write a readonly database". Tests run as root,
// which ignores file modes, so the file is made immutable (chattr +i), which binds root too.
func TestServeNamesReadOnlyDatabaseFile(t *testing.T) {
	db := filepath.Join(t.TempDir(), "scalein.db")
	st, err := store.Open(context.Background(), db)
	require.NoError(t, err)
	require.NoError(t, st.Close())
	if out, err := exec.Command("chattr", "+i", db).CombinedOutput(); err != nil {
		t.Skipf("chattr +i is not available on this temp dir's filesystem (%v: %s); store's injected-probe tests cover the check", err, out)
	}
	t.Cleanup(func() { _ = exec.Command("chattr", "-i", db).Run() })

	var stdout, stderr syncBuffer
	code := runServe(context.Background(), []string{"-addr", "127.0.0.1:0", "-db", db}, &stdout, &stderr)
	assert.Equal(t, 1, code)
	assert.Contains(t, stderr.String(), db+" is read-only")
	assert.Contains(t, stderr.String(), "chmod u+w "+db)
	assert.NotContains(t, stderr.String(), "job queue")
	assert.Empty(t, stdout.String(), "the server must not say it is listening")
}
