package store

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"database/sql/driver"
	"encoding/binary"
	"fmt"
	"sync"
)

// DriveLocks make each sweep or plan driven (its points fed, its planner run) by one process
// when several servers share a PostgreSQL database. A lock is a session advisory lock on one
// connection this process holds for its life: a process that dies loses the connection and with
// it its locks, so another process can take the sweep or plan over. On SQLite, where one process
// owns the database file, every lock is granted. Locks are counted: a key locked twice here
// is released by the second Unlock (one process may hand a sweep from one feeding to the next).
type DriveLocks struct {
	db   *sql.DB // nil on SQLite
	mu   sync.Mutex
	conn *sql.Conn
	held map[string]int
	gen  int // raised by Reset: holds taken before it release nothing
}

// DriveHold is one hold of a lock, given back with Unlock.
type DriveHold struct {
	key string
	gen int
}

// DriveLocks returns the locks of this process (a connection is taken on first use).
func (s *Store) DriveLocks() *DriveLocks {
	d := &DriveLocks{held: map[string]int{}}
	if s.dialect == DialectPostgres {
		d.db = s.writer
	}
	return d
}

// driveKey maps a key like "plan:abc" to the advisory lock's 64-bit number.
func driveKey(key string) int64 {
	sum := sha256.Sum256([]byte("scalein drive " + key))
	return int64(binary.BigEndian.Uint64(sum[:8]))
}

// TryLock takes a hold of the lock of key unless another process holds it; it does not wait.
func (d *DriveLocks) TryLock(ctx context.Context, key string) (DriveHold, bool, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	hold := DriveHold{key: key, gen: d.gen}
	if d.db == nil || d.held[key] > 0 {
		d.held[key]++
		return hold, true, nil
	}
	if d.conn == nil {
		conn, err := d.db.Conn(ctx)
		if err != nil {
			return hold, false, fmt.Errorf("store: drive lock %q: connect: %w", key, err)
		}
		d.conn = conn
	}
	var ok bool
	if err := d.conn.QueryRowContext(ctx, `SELECT pg_try_advisory_lock($1)`, driveKey(key)).Scan(&ok); err != nil {
		return hold, false, fmt.Errorf("store: drive lock %q: %w", key, err)
	}
	if ok {
		d.held[key] = 1
	}
	return hold, ok, nil
}

// Unlock gives a hold back; the last hold of a key releases its lock.
func (d *DriveLocks) Unlock(ctx context.Context, h DriveHold) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	key := h.key
	if h.gen != d.gen || d.held[key] == 0 {
		return nil
	}
	d.held[key]--
	if d.held[key] > 0 || d.db == nil || d.conn == nil {
		if d.held[key] == 0 {
			delete(d.held, key)
		}
		return nil
	}
	delete(d.held, key)
	if _, err := d.conn.ExecContext(ctx, `SELECT pg_advisory_unlock($1)`, driveKey(key)); err != nil {
		return fmt.Errorf("store: drive unlock %q: %w", key, err)
	}
	return nil
}

// Check says whether the locks are still held: an error means the connection is lost and with
// it every lock (another process may have taken them); the caller stops driving and calls
// Reset.
func (d *DriveLocks) Check(ctx context.Context) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.conn == nil {
		return nil
	}
	if err := d.conn.PingContext(ctx); err != nil {
		return fmt.Errorf("store: drive locks: the connection holding them is lost: %w", err)
	}
	return nil
}

// Reset forgets every lock and closes the connection holding them, which releases them. The
// connection is discarded, not returned to the pool: a pooled session would keep the locks.
func (d *DriveLocks) Reset() {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.conn != nil {
		_ = d.conn.Raw(func(any) error { return driver.ErrBadConn }) // makes Close discard it
		_ = d.conn.Close()
		d.conn = nil
	}
	d.held = map[string]int{}
	d.gen++
}
