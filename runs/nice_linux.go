package runs

import "syscall"

// lowerThreadPriority raises the nice level of the calling OS thread by by (to at most 19).
// On Linux a thread has a nice level of its own, so setpriority(PRIO_PROCESS, tid) lowers this
// thread's priority alone; raising a nice level needs no privilege.
func lowerThreadPriority(by int) error {
	tid := syscall.Gettid()
	// The raw getpriority system call answers 20 - nice (1 to 40), not the nice level.
	raw, err := syscall.Getpriority(syscall.PRIO_PROCESS, tid)
	if err != nil {
		return err
	}
	return syscall.Setpriority(syscall.PRIO_PROCESS, tid, min(20-raw+by, 19))
}

// threadID is the calling OS thread's id (for tests).
func threadID() int { return syscall.Gettid() }

// threadNice is the calling thread's nice level (for tests).
func threadNice() (int, error) {
	raw, err := syscall.Getpriority(syscall.PRIO_PROCESS, syscall.Gettid())
	return 20 - raw, err
}

const threadPrioritySupported = true
