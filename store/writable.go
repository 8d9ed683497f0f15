package store

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// canWrite reports whether this process may write path, as the kernel decides for it (access(2)
// with W_OK: file modes for other users, an immutable attribute or a read-only mount for every
// user, root included). Tests replace it, since they run as root, which file modes do not stop.
var canWrite = func(path string) error { return unix.Access(path, unix.W_OK) }

// checkWritable refuses, before SQLite opens it, a database file or directory this process
// cannot write (issue 19 L7). Without it a read-only file opens fine and the first write fails
// deep in start-up ("job queue: recover jobs of a previous process: attempt to write a readonly
// database"), naming neither the file nor the fix. The directory must be writable too: SQLite
// creates the -wal, -shm and -journal files beside the database.
func checkWritable(path string) error {
	dir := filepath.Dir(path)
	if err := canWrite(dir); err != nil {
		return fmt.Errorf("store: open %s: the directory %s is read-only (%v): SQLite writes its -wal and -shm files beside the database; make the directory writable (chmod u+w %s) or give -db a path in a writable directory", path, dir, err, dir)
	}
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		return nil // SQLite creates it in the writable directory
	}
	if err := canWrite(path); err != nil {
		return fmt.Errorf("store: open %s: %s is read-only (%v): make it writable (chmod u+w %s) or give -db a writable path", path, path, err, path)
	}
	return nil
}
