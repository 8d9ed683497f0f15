package sim

import (
	"cmp"
	"fmt"
	"slices"

	lru "github.com/hashicorp/golang-lru/v2"

	"github.com/scalein-planner/scalein/sim/internal/kvcache"
)

// workloadShape is what the memory model needs to know of a workload on a fleet.
//
// The model counts a block key k at most min(workers, n(k)) times in the caches, where n(k) is
// the number of requests whose prompt holds k: a worker keys a block only for a request routed
// to it (or pulled for one), and keys it once per tier.
type workloadShape struct {
	requests int64 // requests of the run
	inFlight int64 // requests that can exist at once
	// blocks is the sum over requests of the blocks they fill, ceil((prompt + output) /
	// block_size): no worker's G1 ever holds more slots than the blocks of the requests routed
	// to it.
	blocks       int64
	promptBlocks int64
	// inFlightBlocks and inFlightPromptBlocks bound the blocks of the requests that exist at
	// once.
	inFlightBlocks, inFlightPromptBlocks int64
	// keys bounds the distinct prompt keys; records bounds the (worker, key) pairs, Σ min(workers,
	// n(k)). multiKeys bounds the keys that two or more workers may hold and multiRecords their
	// pairs; denseKeys the keys that enough workers may hold for a dense holder list.
	keys, records, multiKeys, multiRecords, denseKeys int64
	traceRows                                         int64 // rows of an uploaded trace the scenario holds
	traceHashIDs                                      int64
	field                                             string // the workload field that sets the request count
	what                                              string // the workload in words
}

func ceilDiv64(a, b int64) int64 { return (a + b - 1) / b }

// denseAt is the number of holders at which a key's list may turn dense (kvcache.DenseShare),
// or 0 when the fleet is too small for dense lists.
func denseAt(workers int64) int64 {
	if workers < kvcache.MinDense {
		return 0
	}
	return max(kvcache.MinDense, ceilDiv64(workers, kvcache.DenseShare))
}

// shape measures the workload on the fleet. A trace workload's rows must have been loaded
// (Parse does). With exact false, the prompt keys of a requests or trace workload are not
// generated: they are counted as if no two prompt blocks were alike, which bounds every count
// the exact shape has.
func (s *Scenario) shape(exact bool) workloadShape {
	var w workloadShape
	switch s.Workload.Type {
	case WorkloadRequests:
		w = s.requestsShape(exact)
	case WorkloadSessions:
		if s.Workload.Sessions != nil {
			w = s.sessionsShape()
		}
	case WorkloadTrace:
		w = s.traceShape(exact)
	}
	return w
}

func (s *Scenario) requestsShape(exact bool) workloadShape {
	bs := int64(max(s.Fleet.BlockSize, 1))
	var w workloadShape
	for _, r := range s.Workload.Requests {
		prompt := labelBlockCount(r.Blocks)*bs + int64(r.TailTokens)
		w.requests++
		w.blocks += ceilDiv64(prompt+int64(r.OutputTokens), bs)
		w.promptBlocks += prompt / bs
	}
	// Every scripted arrival exists from the start.
	w.inFlight, w.inFlightBlocks, w.inFlightPromptBlocks = w.requests, w.blocks, w.promptBlocks
	w.field = "workload.requests"
	w.what = fmt.Sprintf("%s scripted requests", groupDigits(w.requests))
	s.countKeys(&w, exact)
	return w
}

func (s *Scenario) traceShape(exact bool) workloadShape {
	bs := int64(max(s.Fleet.BlockSize, 1))
	var w workloadShape
	rows := s.traceRowsUsed()
	for i := range rows {
		r := &rows[i]
		w.blocks += ceilDiv64(int64(r.InputLength)+int64(r.OutputLength), bs)
		w.promptBlocks += int64(r.InputLength) / bs
	}
	w.requests = int64(len(rows))
	w.inFlight, w.inFlightBlocks, w.inFlightPromptBlocks = w.requests, w.blocks, w.promptBlocks
	if s.Workload.Trace != nil && s.Workload.Trace.Name == "" {
		// An uploaded trace's rows belong to this run; a built-in trace's are shared.
		w.traceRows = int64(len(s.trace))
		for i := range s.trace {
			w.traceHashIDs += int64(len(s.trace[i].HashIDs))
		}
	}
	w.field = "workload.trace.limit"
	w.what = fmt.Sprintf("%s trace requests", groupDigits(w.requests))
	s.countKeys(&w, exact)
	return w
}

// traceRowsUsed returns the trace rows the run replays.
func (s *Scenario) traceRowsUsed() []TraceRow {
	rows := s.trace
	if s.Workload.Trace != nil && s.Workload.Trace.Limit > 0 && s.Workload.Trace.Limit < len(rows) {
		rows = rows[:s.Workload.Trace.Limit]
	}
	return rows
}

// sessionPromptTokens is the prompt of turn t: the system prompt, every earlier turn's input and
// output, and new input.
func sessionPromptTokens(c *Sessions, t int64) int64 {
	return int64(c.SystemPromptTokens) + t*int64(c.NewInputTokens+c.OutputTokens) + int64(c.NewInputTokens)
}

// sessionTurnBlocks returns, for each turn of a session, its prompt's whole blocks.
func sessionTurnBlocks(c *Sessions, bs int64) []int64 {
	pb := make([]int64, c.Turns)
	for t := range pb {
		pb[t] = sessionPromptTokens(c, int64(t)) / bs
	}
	return pb
}

// sessionsShape counts a session workload. A turn's prompt is the previous turn's prompt and
// output and new input, so the blocks a turn adds to its prompt are held by the workers that
// serve it or a later turn of the session, at most turns − t of them; the system prompt's blocks
// are the prefix group's, shared by all turns of all its sessions.
func (s *Scenario) sessionsShape() workloadShape {
	c := s.Workload.Sessions
	bs := int64(max(s.Fleet.BlockSize, 1))
	workers := s.cacheWorkers()
	count, turns := int64(c.Count), int64(c.Turns)
	pb := sessionTurnBlocks(c, bs)
	var w workloadShape
	var maxBlocks, maxPrompt int64
	for t := range turns {
		b := ceilDiv64(sessionPromptTokens(c, t)+int64(c.OutputTokens), bs)
		w.blocks += count * b
		w.promptBlocks += count * pb[t]
		maxBlocks, maxPrompt = max(maxBlocks, b), max(maxPrompt, pb[t])
	}
	w.requests = count * turns
	// A session has at most one turn in flight.
	w.inFlight, w.inFlightBlocks, w.inFlightPromptBlocks = count, count*maxBlocks, count*maxPrompt

	// The system prompt's whole blocks: one set per prefix group, each held by at most
	// min(workers, requests of the group) workers; Σ over groups ≤ min(groups × workers,
	// count × turns).
	sysBlocks := min(int64(c.SystemPromptTokens)/bs, maxPrompt)
	groups := min(int64(c.PrefixGroups), count)
	sysHolders := min(groups*workers, count*turns)
	w.keys = groups * sysBlocks
	w.records = sysBlocks * sysHolders
	if workers > 1 && count*turns > 1 {
		w.multiKeys, w.multiRecords = w.keys, w.records
	}
	if d := denseAt(workers); d > 0 && min(workers, count*turns) >= d {
		w.denseKeys = sysBlocks * min(groups, count*turns/d)
	}
	// The blocks turn t adds, [pb(t−1), pb(t)), are the session's own.
	prev := sysBlocks
	for t := range turns {
		added := max(pb[t]-prev, 0)
		holders := min(workers, turns-t)
		w.keys += count * added
		w.records += count * added * holders
		if holders > 1 {
			w.multiKeys += count * added
			w.multiRecords += count * added * holders
		}
		if d := denseAt(workers); d > 0 && holders >= d {
			w.denseKeys += count * added
		}
		prev = max(prev, pb[t])
	}
	w.field = "workload.sessions.count"
	w.what = fmt.Sprintf("%s sessions × %d turns", groupDigits(count), turns)
	return w
}

// maxCountedKeys bounds the keys countKeys collects (8 bytes each); a larger workload is
// counted as if no two of its blocks were alike.
const maxCountedKeys = 4 << 20

// countKeys counts, for each distinct prompt key of a requests or trace workload, the requests
// that hold it (keyCensus), and from that the shape's key and record counts on this fleet. With
// exact false, or beyond maxCountedKeys, it counts them as if no two were alike.
func (s *Scenario) countKeys(w *workloadShape, exact bool) {
	workers := s.cacheWorkers()
	if !exact || w.promptBlocks > maxCountedKeys {
		w.keys, w.records = w.promptBlocks, w.promptBlocks
		w.multiKeys, w.multiRecords = w.promptBlocks/2, w.promptBlocks
		if d := denseAt(workers); d > 0 {
			w.denseKeys = w.promptBlocks / d
		}
		return
	}
	d := denseAt(workers)
	for _, c := range s.keyCensus(w.promptBlocks) {
		holders := min(workers, c.requests)
		w.keys += c.keys
		w.records += c.keys * holders
		if holders > 1 {
			w.multiKeys += c.keys
			w.multiRecords += c.keys * holders
		}
		if d > 0 && holders >= d {
			w.denseKeys += c.keys
		}
	}
}

// keyCount is a line of a key census: keys distinct prompt keys are each held by the prompts of
// requests requests.
type keyCount struct{ requests, keys int64 }

// keyCensus generates the prompt keys of a requests or trace workload as the run will, sorts
// them, and counts how many distinct keys so many requests hold, by increasing requests. It does
// not depend on the fleet's size, so a trace's census is kept (censuses) for the next scenario
// on the same rows and block sizes: a sweep or a plan over a trace estimates each of its
// scenarios, and the census is most of an estimate (about 0.37 s for the Mooncake trace).
func (s *Scenario) keyCensus(promptBlocks int64) []keyCount {
	var id censusID
	if s.Workload.Type == WorkloadTrace {
		id = traceCensusID(s.traceRowsUsed(), s.Fleet.BlockSize, s.Workload.Trace.TraceBlockTokens)
		if c, ok := censuses.Get(id); ok {
			return c
		}
	}
	var src source
	if s.Workload.Type == WorkloadRequests {
		src = newScriptedSource(s)
	} else {
		src = newTraceSource(s, s.traceRowsUsed())
	}
	keys := make([]uint64, 0, promptBlocks)
	for {
		if _, ok := src.peek(); !ok {
			break
		}
		keys = append(keys, src.pop().keys...)
	}
	slices.Sort(keys)
	byRequests := map[int64]int64{}
	for i := 0; i < len(keys); {
		j := i + 1
		for j < len(keys) && keys[j] == keys[i] {
			j++
		}
		byRequests[int64(j-i)]++
		i = j
	}
	census := make([]keyCount, 0, len(byRequests))
	for n, k := range byRequests {
		census = append(census, keyCount{requests: n, keys: k})
	}
	slices.SortFunc(census, func(a, b keyCount) int { return cmp.Compare(a.requests, b.requests) })
	if s.Workload.Type == WorkloadTrace {
		censuses.Add(id, census)
	}
	return census
}

// censusID names a trace's key census: a 128-bit fingerprint of what the keys are made from
// (each row's input length and hash ids, in order) and of the block sizes.
type censusID [2]uint64

func traceCensusID(rows []TraceRow, blockSize, traceBlockTokens int) censusID {
	a, b := uint64(0x9e3779b97f4a7c15), uint64(0xc2b2ae3d27d4eb4f)
	add := func(v uint64) {
		a = mix64(a ^ v)
		b = mix64(b + v*0xff51afd7ed558ccd)
	}
	add(uint64(blockSize))
	add(uint64(traceBlockTokens))
	add(uint64(len(rows)))
	for i := range rows {
		add(uint64(rows[i].InputLength))
		add(uint64(len(rows[i].HashIDs)))
		for _, h := range rows[i].HashIDs {
			add(uint64(h))
		}
	}
	return censusID{a, b}
}

// censuses keeps the key censuses of the last traces estimated (a few hundred bytes each),
// shared by every scenario of a process.
var censuses = func() *lru.Cache[censusID, []keyCount] {
	c, err := lru.New[censusID, []keyCount](16)
	if err != nil {
		panic(err) // only for a size below 1
	}
	return c
}()

// promptBlocksBy bounds the prompt blocks of the requests that arrive at or before atNS. A
// session's turn t arrives no earlier than its first turn plus t think times (each turn arrives
// a think time after the previous one completes); the first turns' arrivals are replayed from
// the seed.
func (s *Scenario) promptBlocksBy(atNS int64) int64 {
	bs := int64(max(s.Fleet.BlockSize, 1))
	var n int64
	switch s.Workload.Type {
	case WorkloadRequests:
		for _, r := range s.Workload.Requests {
			if msToNS(r.AtMS) <= atNS {
				n += (labelBlockCount(r.Blocks)*bs + int64(r.TailTokens)) / bs
			}
		}
	case WorkloadTrace:
		src := newTraceSource(s, nil)
		for _, r := range s.traceRowsUsed() {
			if src.atNS(&r) <= atNS {
				n += int64(r.InputLength) / bs
			}
		}
	case WorkloadSessions:
		c := s.Workload.Sessions
		if c == nil {
			return 0
		}
		pb := sessionTurnBlocks(c, bs)
		cum := make([]int64, len(pb)+1) // cum[t]: prompt blocks of turns 0 … t−1
		for t, b := range pb {
			cum[t+1] = cum[t] + b
		}
		starts := newSessionStarts(s)
		think := msToNS(c.ThinkTimeMS)
		for range c.Count {
			_, at := starts.draw()
			if at > atNS {
				break // first turns arrive in order
			}
			turns := int64(len(pb))
			if think > 0 {
				turns = min(turns, (atNS-at)/think+1)
			}
			n += cum[turns]
		}
	}
	return n
}
