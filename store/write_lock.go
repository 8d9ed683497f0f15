package store

import (
	"context"
	"database/sql"
	"errors"
	"hash/fnv"
)

// The writes that check a count before adding to it (the run queue's bound, a user's quotas)
// take a PostgreSQL advisory lock on what they count, as their transaction's first statement,
// and run at READ COMMITTED: the holder of the lock is the only one adding to the count, and
// each statement of a READ COMMITTED transaction sees everything committed before it, so the
// count is exact. Under SERIALIZABLE alone they were correct but conflicted with each other
// (a count reads the whole table), and with about 25 users submitting at once some ran out of
// retries (the soak test of issue 29 saw two 500s). On SQLite BEGIN IMMEDIATE already makes
// every write one at a time, so the locks are PostgreSQL's only.
//
// The locks use pg_advisory_xact_lock's two-int4 key space, which PostgreSQL keeps apart from
// the one-bigint keys of the migration lock, the drive locks and River's own.

// ErrBusy: a write transaction conflicted with concurrent ones on every attempt; the same
// request may succeed a moment later (IsUnavailable reports true for it).
var ErrBusy = errors.New("the database is busy with conflicting writes")

// writeLock is one advisory lock: class says what kind of count it guards, key which one.
type writeLock struct{ class, key int32 }

// Classes of write locks (arbitrary, fixed numbers).
const (
	// lockClassQueue guards the count of queued runs that SubmitRuns bounds (one key, 0).
	lockClassQueue int32 = 0x5c1e_0001
	// lockClassOwner guards one owner's quotas (key: the FNV-32a hash of the owner's name;
	// two owners with one hash only wait for each other).
	lockClassOwner int32 = 0x5c1e_0002
)

var queueLock = writeLock{class: lockClassQueue}

// ownerLock is the lock on owner's quotas.
func ownerLock(owner string) writeLock {
	h := fnv.New32a()
	_, _ = h.Write([]byte(owner))
	return writeLock{class: lockClassOwner, key: int32(h.Sum32())}
}

// quotaLocks is the owner lock when ctx carries an owner and a quota that applies (uses says
// which field of the quota the write adds to), nothing otherwise.
func quotaLocks(ctx context.Context, uses func(Quota) bool) []writeLock {
	q, owner, ok := quotaOf(ctx)
	if !ok || !uses(q) {
		return nil
	}
	return []writeLock{ownerLock(owner)}
}

// takeWriteLocks takes locks in the order given; every caller lists the queue lock before an
// owner lock, so two transactions never wait for each other's.
func takeWriteLocks(ctx context.Context, tx *sql.Tx, locks []writeLock) error {
	for _, l := range locks {
		if _, err := tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock($1::int4, $2::int4)`, l.class, l.key); err != nil {
			return err
		}
	}
	return nil
}
