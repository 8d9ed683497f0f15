package sim

import "sync"

// sessionFeed draws the sessions' starts (prefix group and first-turn arrival) and makes all
// of each session's prompt keys on a goroutine of its own, when the run has a spare core
// (RunOptions.SpareCore; issue 35, second round). Neither depends on the simulation: the starts
// come from the seed alone, and block j's key from the session (or its group) and j only
// (turnArrival), so the session source gets exactly what it would have made itself, in the
// same order, a batch at a time; only when each later turn arrives depends on the run, and
// that stays with the engine.
type sessionFeed struct {
	ch   chan []feedSession
	done chan struct{}
	stop sync.Once
	cur  []feedSession
	pos  int
	// over: the producer has sent its last batch
	over bool
}

// feedSession is one session as the feed makes it: its prefix group, its first turn's
// arrival, and the keys of its last turn's prompt, which every earlier turn's keys begin.
type feedSession struct {
	group int32
	atNS  int64
	keys  []uint64
}

// feedBatch is how many sessions the feed sends at once; two batches may wait in the channel,
// so the feed runs at most about three batches ahead of the run.
const feedBatch = 256

// startFeed starts the producer on a copy of the source's start process, which the source no
// longer draws from itself.
func (s *sessionSource) startFeed() {
	f := &sessionFeed{ch: make(chan []feedSession, 2), done: make(chan struct{})}
	for g := range s.cfg.PrefixGroups {
		s.systemKeys(int32(g)) // made here: the producer only reads them
	}
	starts := s.starts
	s.starts = sessionStarts{}
	go func() {
		defer close(f.ch)
		batch := make([]feedSession, 0, feedBatch)
		send := func() bool {
			select {
			case f.ch <- batch:
				batch = make([]feedSession, 0, feedBatch)
				return true
			case <-f.done:
				return false
			}
		}
		for i := 0; i < s.cfg.Count && starts.next != noMoreStarts; i++ {
			g, at := starts.draw()
			batch = append(batch, feedSession{group: g, atNS: at, keys: s.allKeys(int32(i), g)})
			if len(batch) == feedBatch && !send() {
				return
			}
		}
		if len(batch) > 0 {
			send()
		}
	}()
	s.feed = f
}

// next returns the next session of the feed without taking it; false once there are no more.
func (f *sessionFeed) next() (*feedSession, bool) {
	for f.pos == len(f.cur) {
		if f.over {
			return nil, false
		}
		b, ok := <-f.ch
		if !ok {
			f.over = true
			return nil, false
		}
		f.cur, f.pos = b, 0
	}
	return &f.cur[f.pos], true
}

// close stops the producer (at the end of the run, or when it stops early).
func (f *sessionFeed) close() { f.stop.Do(func() { close(f.done) }) }

// allKeys makes a session's keys up to its last turn's prompt, as turnArrival would turn by turn.
func (s *sessionSource) allKeys(session, group int32) []uint64 {
	c := s.cfg
	n := (c.SystemPromptTokens + (c.Turns-1)*(c.NewInputTokens+c.OutputTokens) + c.NewInputTokens) / s.bs
	keys := make([]uint64, n)
	from := copy(keys, s.sysKeys[group])
	s.chainKeys(keys, from, session, group)
	return keys
}
