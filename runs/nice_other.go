//go:build !linux

package runs

import "errors"

// lowerThreadPriority is Linux only: elsewhere a process's threads share one priority.
func lowerThreadPriority(int) error { return errors.ErrUnsupported }

func threadNice() (int, error) { return 0, errors.ErrUnsupported }

func threadID() int { return 0 }

const threadPrioritySupported = false
