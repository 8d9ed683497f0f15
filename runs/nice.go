package runs

import "runtime"

// Simulations are batch work beside interactive requests: on a machine they share with the
// server (serve's own workers) or with other processes (a worker beside a server and its
// database), a run must not make pages wait for the CPU. So the work of a run, from the
// simulation to its report's encoding, runs on an OS thread of its own whose priority is
// lowered by Config.SimNice (Linux nice levels, -sim-nice): the kernel then gives the CPU to
// the server's requests and the database first, and to simulations what is left. The thread
// serves that run alone: the goroutine locks it and ends without unlocking it, so the Go
// runtime ends the thread too, and no other goroutine ever runs at the lowered priority. (The
// one exception is the process's main thread: a run that started on it leaves it parked for
// good rather than ended, still lowered, and idle; runtime.mexit.)
// Nothing on that thread holds a database write (a progress save goes through a goroutine of
// its own, attempt.go): a write it held while the kernel kept it waiting would make every other
// write wait too.

// DefaultSimNice is -sim-nice's default: a simulation's thread gets about a tenth of the CPU a
// request's thread gets when both want it, and all of it when nothing else does.
const DefaultSimNice = 10

// lowPriority runs fn on a thread of its own at the simulations' priority and waits for it; a
// panic in fn is raised again in the caller. Without a lowered priority (SimNice 0, or an OS
// without per-thread priorities) fn runs in the caller. ownThread tells fn which (for
// sim.RunOptions.OwnThread).
func (s *Service) lowPriority(fn func(ownThread bool)) {
	if s.cfg.SimNice <= 0 || !threadPrioritySupported {
		fn(false)
		return
	}
	var panicked any
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer func() { panicked = recover() }()
		runtime.LockOSThread() // never unlocked: the thread ends with this goroutine
		if err := lowerThreadPriority(s.cfg.SimNice); err != nil {
			s.warnNiceOnce.Do(func() {
				s.log.Warn("simulations run at the server's priority: lowering a thread's priority failed", "err", err)
			})
		}
		fn(true)
	}()
	<-done
	if panicked != nil {
		panic(panicked)
	}
}
