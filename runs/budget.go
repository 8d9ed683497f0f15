package runs

import (
	"context"
	"fmt"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sync/semaphore"

	"github.com/scalein-planner/scalein/sim"
)

// Memory safety of runs, kept apart from the queue so that any queue (this process's, or a
// job queue's worker) calls the same three things:
//
//   - admit, at submit time: a scenario whose memory estimate (sim.EstimateMemory) exceeds the
//     per-run budget is refused with the fields that drive it;
//   - memoryBudget.acquire, before a run starts: the estimates of the runs running at once fit
//     the total budget (a weighted semaphore, first come first served);
//   - the backstop (watchMemory): a run during which the heap really grows past its budget is
//     cancelled with errMemoryBudget and ends failed, while the process stays up.
//
// After big runs and big requests, memory is handed back to the system once the server is idle
// (debug.FreeOSMemory), so a burst does not leave the process gigabytes large for minutes.

// MachineMemory returns the memory this process may use: the cgroup limit if one is set (v2
// or v1, see machineMemory), else the machine's MemTotal; 0 when neither can be read.
func MachineMemory() int64 { return machineMemory("/") }

// fallbackMachineMemory is assumed when MachineMemory cannot read the machine's memory.
const fallbackMachineMemory = 8 << 30

// DefaultMemoryBudgets derives the budgets from the machine's memory: a quarter of it per run
// (6 GiB on a 24 GiB machine) and half of it for all runs at once, leaving the other half to
// the rest of the process (requests, pages, SQLite's cache) and to the system.
func DefaultMemoryBudgets() (perRun, total int64) {
	m := MachineMemory()
	if m <= 0 {
		m = fallbackMachineMemory
	}
	return m / 4, m / 2
}

// DefaultMaxAttempts is how many times a run is started in all: a run whose process died under
// it that many times is failed ("interrupted N times") instead of started again, so a scenario
// that kills the process cannot make it crash in a loop.
const DefaultMaxAttempts = 3

// Admit refuses a scenario whose memory estimate exceeds the per-run budget, with a
// *sim.ValidationError naming the driving fields (the web server shows them beside the form's
// fields, or lists them in the API's answer).
func (s *Service) Admit(sc *sim.Scenario) error { return s.check.Admit(sc) }

// errMemoryBudget is the cause a run is cancelled with when the heap grows past its budget.
type errMemoryBudget struct{ grew, budget int64 }

func (e errMemoryBudget) Error() string {
	return fmt.Sprintf("stopped: the server's heap grew by %s during this run, past the %s this server allows per run; make the fleet's caches or the workload smaller",
		sim.FormatBytes(e.grew), sim.FormatBytes(e.budget))
}

// memoryBudget holds the total budget of running runs and what each running run was granted.
type memoryBudget struct {
	total int64
	sem   *semaphore.Weighted
	// granted is what the grants hold now (GET /metrics).
	granted atomic.Int64

	mu      sync.Mutex
	running map[string]grantedRun
	// busySince is set while runs or big requests may have left memory to hand back.
	handBack bool
	lastBusy time.Time
}

type grantedRun struct {
	estimate int64
	started  time.Time
	cancel   context.CancelCauseFunc
}

func newMemoryBudget(total int64) *memoryBudget {
	return &memoryBudget{total: total, sem: semaphore.NewWeighted(total), running: map[string]grantedRun{}}
}

// acquire waits until estimate bytes fit the total budget beside the running runs (an estimate
// above the total waits for the whole budget), or until ctx is done. The returned release
// gives them back.
func (b *memoryBudget) acquire(ctx context.Context, estimate int64) (release func(), err error) {
	n := min(max(estimate, 1), b.total)
	if err := b.sem.Acquire(ctx, n); err != nil {
		return nil, err
	}
	b.granted.Add(n)
	var once sync.Once
	return func() {
		once.Do(func() {
			b.granted.Add(-n)
			b.sem.Release(n)
		})
	}, nil
}

// track records a run that started, so the backstop can cancel it; untrack forgets it.
func (b *memoryBudget) track(id string, estimate int64, cancel context.CancelCauseFunc) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.running[id] = grantedRun{estimate: estimate, started: time.Now(), cancel: cancel}
}

func (b *memoryBudget) untrack(id string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if r, ok := b.running[id]; ok && r.estimate >= handBackAfterBytes {
		b.handBack = true
	}
	delete(b.running, id)
	b.lastBusy = time.Now()
}

// NoteBigRequest notes a big request (a body above 1 MiB parsed), after which memory is handed
// back to the system once the process is idle.
func (s *Service) NoteBigRequest() { s.budget.busy() }

// busy notes a big request, after which memory is handed back once the server is idle.
func (b *memoryBudget) busy() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.handBack = true
	b.lastBusy = time.Now()
}

// Tuning of the backstop and of handing memory back.
const (
	memorySampleInterval = 250 * time.Millisecond
	// handBackAfterBytes: runs estimated above this, and big request bodies (NoteBigRequest),
	// are followed by handing memory back.
	handBackAfterBytes = 64 << 20
	// handBackIdle is how long the server must be idle (no run running, no big request)
	// before memory is handed back.
	handBackIdle = 2 * time.Second
)

// heapObjectsBytes reads the bytes of heap objects, live or not yet collected.
func heapObjectsBytes() int64 {
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	return int64(s[0].Value.Uint64())
}

// liveHeapBytes collects garbage and then reads the heap: what the runs really hold.
func liveHeapBytes() int64 {
	runtime.GC()
	return heapObjectsBytes()
}

// watchMemory is the backstop and the hand-back loop; it runs until ctx is done.
func (s *Service) watchMemory(ctx context.Context) {
	tick := time.NewTicker(memorySampleInterval)
	defer tick.Stop()
	baseline := s.heapBytes()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		b := s.budget
		b.mu.Lock()
		n := len(b.running)
		var largest string
		var largestEst int64 = -1
		for id, r := range b.running {
			if r.estimate > largestEst {
				largest, largestEst = id, r.estimate
			}
		}
		handBack := b.handBack && n == 0 && time.Since(b.lastBusy) >= handBackIdle
		if handBack {
			b.handBack = false
		}
		b.mu.Unlock()

		if n == 0 {
			if handBack {
				debug.FreeOSMemory()
			}
			baseline = s.heapBytes()
			continue
		}
		// Every running run may use the per-run budget, and all of them the total budget.
		limit := min(int64(n)*s.cfg.MaxRunMemory, s.cfg.MaxTotalMemory)
		grew := s.heapBytes() - baseline
		if grew <= limit {
			continue
		}
		// Garbage counts until it is collected: look again at what is really live.
		if grew = s.liveHeapBytes() - baseline; grew <= limit {
			continue
		}
		b.mu.Lock()
		r, ok := b.running[largest]
		b.mu.Unlock()
		if ok {
			s.log.Warn("run stopped by the memory backstop", "run", largest, "heap_grew", grew, "limit", limit)
			r.cancel(errMemoryBudget{grew: grew, budget: s.cfg.MaxRunMemory})
		}
	}
}
