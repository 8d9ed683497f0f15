package runs

import (
	"context"
	"errors"
	"time"

	"github.com/scalein-planner/scalein/store"
)

// Driving a sweep (feeding its points) or a plan (running its planner) belongs to one process.
// Several serve processes on one PostgreSQL database each resume unfinished sweeps and plans at
// start and may each be asked for the same one; the store's drive locks (session advisory
// locks) let exactly one drive it. A process that dies loses its locks with its connection, and
// another process takes its sweeps and plans over at its next rescan. A driver also checks the
// store for a cancel made in another process, so cancelling works whichever process is asked.

const (
	// defaultDriveRescan is how often a server on PostgreSQL looks for sweeps and plans no
	// process drives (their driver died) and checks that it still holds its locks.
	defaultDriveRescan = 5 * time.Second
	// cancelPoll is how often a driver checks whether its sweep or plan was cancelled in
	// another process.
	cancelPoll = time.Second
)

var (
	// errCancelledElsewhere: the store says a user cancelled the sweep or plan (through this
	// or another process).
	errCancelledElsewhere = errors.New("cancelled by a user (seen in the store)")
	// errDriveLost: this process lost its drive locks (their connection broke); another
	// process, or this one's next rescan, drives the sweep or plan on.
	errDriveLost = errors.New("the drive lock was lost")
)

// lockDrive takes a hold of the drive lock of key; ok is false when another process holds it
// (or the lock cannot be read, which is logged: the next rescan tries again).
func (s *Service) lockDrive(key string) (store.DriveHold, bool) {
	ctx, cancel := storeCtx()
	defer cancel()
	hold, ok, err := s.locks.TryLock(ctx, key)
	if err != nil {
		s.log.Error("taking a drive lock failed", "key", key, "err", err)
		return hold, false
	}
	return hold, ok
}

func (s *Service) unlockDrive(hold store.DriveHold) {
	ctx, cancel := storeCtx()
	defer cancel()
	if err := s.locks.Unlock(ctx, hold); err != nil {
		s.log.Warn("releasing a drive lock failed", "err", err)
	}
}

// watchCancelled cancels ctx with errCancelledElsewhere once cancelled reports true, checking
// every cancelPoll until ctx ends.
func (s *Service) watchCancelled(ctx context.Context, cancel context.CancelCauseFunc, cancelled func(context.Context) (bool, error)) {
	go pollStore(ctx, cancelPoll, func() bool {
		if yes, err := cancelled(ctx); err == nil && yes {
			cancel(errCancelledElsewhere)
			return true
		}
		return false
	})
}

// rescanDrives runs on PostgreSQL until ctx ends: every driveRescan it checks the locks'
// connection (lost: every sweep and plan driven here stops, and is taken up again by whichever
// process locks it first) and resumes the sweeps and plans no process drives.
func (s *Service) rescanDrives(ctx context.Context) {
	t := time.NewTicker(s.driveRescan)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		cctx, cancel := storeCtx()
		if err := s.locks.Check(cctx); err != nil {
			s.log.Error("drive locks lost; the sweeps and plans driven here stop and are resumed", "err", err)
			s.stopDriving(errDriveLost)
			s.locks.Reset()
		}
		if err := s.resumePlans(cctx); err != nil {
			s.log.Error("looking for plans to resume failed", "err", err)
		}
		if err := s.resumeSweeps(cctx); err != nil {
			s.log.Error("looking for sweeps to resume failed", "err", err)
		}
		cancel()
	}
}
