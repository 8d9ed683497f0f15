package runtest

import (
	"runtime/metrics"
	"sync"
	"sync/atomic"
	"time"
)

// HeapPeak samples the heap's live and not yet collected objects every 200 µs until stopped.
type HeapPeak struct {
	peak atomic.Uint64
	stop chan struct{}
	done sync.WaitGroup
}

// HeapObjects reads the bytes of heap objects, live or not yet collected.
func HeapObjects() uint64 {
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// StartHeapPeak starts sampling; End stops it and returns the peak.
func StartHeapPeak() *HeapPeak {
	h := &HeapPeak{stop: make(chan struct{})}
	h.done.Add(1)
	go func() {
		defer h.done.Done()
		t := time.NewTicker(200 * time.Microsecond)
		defer t.Stop()
		for {
			if v := HeapObjects(); v > h.peak.Load() {
				h.peak.Store(v)
			}
			select {
			case <-h.stop:
				return
			case <-t.C:
			}
		}
	}()
	return h
}

func (h *HeapPeak) End() uint64 {
	close(h.stop)
	h.done.Wait()
	return h.peak.Load()
}
