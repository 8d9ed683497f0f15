package main

import (
	"io"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// -out and -passes naming a device or pipe (/dev/null, /dev/stdout) write into it: renaming a
// temporary file over it, as for a regular file, replaced /dev/null with a file when run as root.
// A named pipe stands in for the device, so a regression breaks only the test's own directory.
func TestOutputToANamedPipeKeepsThePipe(t *testing.T) {
	dir := t.TempDir()
	for _, flag := range []string{"-out", "-passes"} {
		pipe := filepath.Join(dir, "pipe"+flag)
		require.NoError(t, syscall.Mkfifo(pipe, 0o600))
		got := make(chan int64, 1)
		go func() {
			f, err := os.Open(pipe)
			if err != nil {
				got <- -1
				return
			}
			defer f.Close()
			n, _ := io.Copy(io.Discard, f)
			got <- n
		}()
		args := []string{"sim", "-config", "../../sim/presets/e2.json", flag, pipe}
		if flag == "-passes" {
			args = append(args, "-worker", "0", "-out", filepath.Join(dir, "report.json"))
		}
		code, _, stderr := runCLI(t, "", args...)
		require.Equal(t, 0, code, stderr)
		info, err := os.Lstat(pipe)
		require.NoError(t, err)
		require.Equal(t, os.ModeNamedPipe, info.Mode().Type(), "%s: the pipe is still a pipe", flag)
		select {
		case n := <-got:
			require.Positive(t, n, "%s: the reader got the output", flag)
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: nothing was written into the pipe", flag)
		}
		leftovers, err := filepath.Glob(filepath.Join(dir, ".scalein-*"))
		require.NoError(t, err)
		require.Empty(t, leftovers)
	}
}
