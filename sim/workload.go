package sim

import (
	"cmp"
	"hash/fnv"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
)

// arrival is one request as the workload hands it to the engine.
type arrival struct {
	id           string
	atNS         int64
	keys         []uint64 // chained keys of the prompt's complete blocks
	promptTokens int
	outputTokens int
	routeTo      int // -1: none
	session      int32
	turn         int32
	order        int64 // position in input order; -1: the order of arrival
}

// name is the request's id; a session turn's ("s<session>-t<turn>", turns from 1) is made
// only when asked for, as most runs report no per-request rows.
func (a *arrival) name() string {
	if a.id == "" && a.session >= 0 {
		return "s" + strconv.Itoa(int(a.session)) + "-t" + strconv.Itoa(int(a.turn)+1)
	}
	return a.id
}

// source yields arrivals in time order, then input order.
type source interface {
	// peek returns the time of the next arrival.
	peek() (int64, bool)
	// pop returns the next arrival; its index in input order is assigned by the engine.
	pop() arrival
	// ended tells the source a request left the system, so a session can schedule its next turn.
	ended(a *arrival, atNS int64, completed bool)
	// total is the number of requests expected (an upper bound), for progress.
	total() int64
}

// mix64 is a 64-bit finaliser with full avalanche (splitmix64).
func mix64(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

// chainKey is key[j] = H(key[j-1], content[j]) (docs/model.md#blocks).
func chainKey(prev, content uint64) uint64 {
	return mix64(mix64(prev^0x6a09e667f3bcc909) ^ content)
}

const keyRoot = 0x243f6a8885a308d3

func labelHash(label string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(label))
	return mix64(h.Sum64())
}

// FNV-1a's 64-bit offset basis and prime (the hash labelHash takes from hash/fnv), for
// scriptedKeys, which hashes a repeated label's copies from the state after "X#" without
// building their strings.
const (
	fnvOffset64 = 14695981039346656037
	fnvPrime64  = 1099511628211
)

func fnvAdd[T string | []byte](h uint64, b T) uint64 {
	for i := range len(b) {
		h = (h ^ uint64(b[i])) * fnvPrime64
	}
	return h
}

// scriptedKeys chains a scripted request's block keys: one per label of ExpandBlockLabels
// (labels assumed valid, as there), each labelHash'd, made without the expanded labels (a
// probe of 20,000 requests of "P*16" spent half its run formatting "P#0" … "P#15").
func scriptedKeys(labels []string) []uint64 {
	keys := make([]uint64, 0, labelBlockCount(labels))
	prev := uint64(keyRoot)
	var digits [20]byte
	for _, l := range labels {
		base, n, err := splitBlockLabel(l)
		if err != nil || !strings.Contains(l, "*") {
			prev = chainKey(prev, labelHash(l))
			keys = append(keys, prev)
			continue
		}
		h := fnvAdd(fnvAdd(fnvOffset64, base), "#")
		for j := range n {
			prev = chainKey(prev, mix64(fnvAdd(h, strconv.AppendInt(digits[:0], int64(j), 10))))
			keys = append(keys, prev)
		}
	}
	return keys
}

func nsToMS(ns int64) float64 { return float64(ns) / 1e6 }

// scriptedSource replays a "requests" workload.
type scriptedSource struct {
	reqs []*arrival
	next int
}

func newScriptedSource(s *Scenario) *scriptedSource {
	bs := s.Fleet.BlockSize
	src := &scriptedSource{}
	for _, r := range s.Workload.Requests {
		keys := scriptedKeys(r.Blocks)
		route := -1
		if r.RouteTo != nil {
			route = *r.RouteTo
		}
		src.reqs = append(src.reqs, &arrival{
			id: r.ID, atNS: msToNS(r.AtMS), keys: keys,
			promptTokens: len(keys)*bs + r.TailTokens, outputTokens: r.OutputTokens,
			routeTo: route, session: -1, order: int64(len(src.reqs)),
		})
	}
	// Stable by time: same-instant arrivals keep input order.
	slices.SortStableFunc(src.reqs, func(a, b *arrival) int { return cmp.Compare(a.atNS, b.atNS) })
	return src
}

func (s *scriptedSource) peek() (int64, bool) {
	if s.next >= len(s.reqs) {
		return 0, false
	}
	return s.reqs[s.next].atNS, true
}

func (s *scriptedSource) pop() arrival {
	a := s.reqs[s.next]
	s.reqs[s.next] = nil
	s.next++
	return *a
}

func (s *scriptedSource) ended(*arrival, int64, bool) {}
func (s *scriptedSource) total() int64                { return int64(len(s.reqs)) }

// traceSource replays a Mooncake-format trace. Engine block j takes its content from trace
// block j × block_size / trace_block_tokens and its position inside that block (docs/model.md#workloads).
type traceSource struct {
	rows      []TraceRow
	next      int
	bs, tbt   int
	speedup   float64
	offsetMS  float64
	remaining int64
	nextAt    int64 // arrival of rows[next], computed once: the engine peeks at every instant
}

func newTraceSource(s *Scenario, rows []TraceRow) *traceSource {
	t := s.Workload.Trace
	src := &traceSource{rows: rows, bs: s.Fleet.BlockSize, tbt: t.TraceBlockTokens,
		speedup: t.Speedup, offsetMS: t.OffsetMS, remaining: int64(len(rows))}
	src.advance(0)
	return src
}

// advance moves to row i and computes its arrival instant.
func (s *traceSource) advance(i int) {
	s.next = i
	if i < len(s.rows) {
		s.nextAt = s.atNS(&s.rows[i])
	}
}

func (s *traceSource) atNS(r *TraceRow) int64 {
	return msToNS(float64(r.TimestampMS/s.speedup) + s.offsetMS)
}

func (s *traceSource) peek() (int64, bool) {
	if s.next >= len(s.rows) {
		return 0, false
	}
	return s.nextAt, true
}

func (s *traceSource) pop() arrival {
	r := &s.rows[s.next]
	at := s.nextAt
	s.advance(s.next + 1)
	n := r.InputLength / s.bs
	keys := make([]uint64, n)
	prev := uint64(keyRoot)
	per := s.tbt / s.bs
	tb, off := 0, 0 // j / per and j % per, counted rather than divided
	for j := 0; j < n; j++ {
		var content uint64
		if tb < len(r.HashIDs) {
			content = mix64(uint64(r.HashIDs[tb])*0x100000001b3 ^ uint64(off))
		} else {
			// The row names no content for this block: make it unique to the row.
			content = mix64(uint64(s.next)<<20 ^ uint64(j) ^ 0x5bd1e995)
		}
		prev = chainKey(prev, content)
		keys[j] = prev
		if off++; off == per {
			tb, off = tb+1, 0
		}
	}
	return arrival{id: "L" + strconv.Itoa(r.Line), atNS: at, keys: keys,
		promptTokens: r.InputLength, outputTokens: r.OutputLength, routeTo: -1, session: -1, order: -1}
}

func (s *traceSource) ended(*arrival, int64, bool) {}
func (s *traceSource) total() int64                { return int64(len(s.rows)) }

// sessionSource generates the seeded multi-turn workload (docs/model.md#workloads): sessions arrive as a
// Poisson process; a turn's prompt is the group's system prompt, every earlier turn's input and
// output, then new input; the next turn arrives think_time after the previous one completes.
type sessionSource struct {
	cfg     Sessions
	bs      int
	starts  sessionStarts
	started int // sessions whose first turn has been generated
	groups  []int32
	pending arrivalHeap
	// held keeps the pending arrivals the heap's entries name (by index), and spare the free
	// places: the heap moves 24-byte entries, not arrivals.
	held    []arrival
	spare   []int32
	seq     int64
	thinkNS int64
	sysKeys [][]uint64 // by group: its system prompt's keys (systemKeys)
	// feed, when set, draws the starts and makes the keys on another goroutine (sessionfeed.go)
	feed *sessionFeed
	// filled: fill has run since the last pop, so no session start not yet drawn is due before
	// the earliest pending arrival (a push from ended only makes that one earlier); peek, at
	// every instant, then costs a load
	filled bool
}

func newSessionSource(s *Scenario) *sessionSource {
	cfg := *s.Workload.Sessions
	return &sessionSource{cfg: cfg, bs: s.Fleet.BlockSize, starts: newSessionStarts(s),
		thinkNS: msToNS(cfg.ThinkTimeMS)}
}

// sessionStarts draws the sessions' prefix groups and first-turn arrivals (a Poisson process)
// from the scenario's seed, in the order the session source uses them; the memory model replays
// it to know how many turns can have arrived by an instant.
type sessionStarts struct {
	rng    *rand.Rand
	rate   float64
	groups int
	next   int64 // arrival of the next session's first turn; noMoreStarts after the last stage
	stages *stageClock
}

func newSessionStarts(s *Scenario) sessionStarts {
	c := s.Workload.Sessions
	d := sessionStarts{rng: rand.New(rand.NewPCG(uint64(s.Seed), 0x5e55105)), rate: c.RatePerS, groups: c.PrefixGroups}
	if len(c.RateStages) > 0 {
		d.stages = newStageClock(c.RateStages)
		d.next = d.stages.after(0, d.rng)
		return d
	}
	d.next = d.gap()
	return d
}

// gap draws one exponential inter-arrival time in ns.
func (d *sessionStarts) gap() int64 {
	return msToNS(float64(d.rng.ExpFloat64()/d.rate) * 1000)
}

// draw returns the next session's prefix group and the arrival of its first turn.
func (d *sessionStarts) draw() (group int32, atNS int64) {
	group = int32(d.rng.IntN(d.groups))
	atNS = d.next
	if d.stages != nil {
		d.next = d.stages.after(atNS, d.rng)
	} else {
		d.next = addNS(d.next, d.gap())
	}
	return group, atNS
}

// turnArrival makes a turn's arrival. Block j's content depends only on the session (or, inside
// the system prompt, its group) and j, so a turn's keys begin with the previous turn's, given
// as known (nil for a first turn, which begins with its group's system prompt keys): only the
// blocks past them are hashed. Keys are never written once made, so the turns of a session
// share one array, made at the first turn with room for the last: a later turn's keys extend
// it past the previous turn's length.
func (s *sessionSource) turnArrival(session, group int32, turn int32, atNS int64, known []uint64) arrival {
	c := s.cfg
	prompt := c.SystemPromptTokens + int(turn)*(c.NewInputTokens+c.OutputTokens) + c.NewInputTokens
	n := prompt / s.bs
	var keys []uint64
	from := 0
	if known != nil && cap(known) >= n {
		keys, from = known[:n], len(known)
	} else {
		last := (c.SystemPromptTokens + (c.Turns-1)*(c.NewInputTokens+c.OutputTokens) + c.NewInputTokens) / s.bs
		keys = make([]uint64, n, max(n, last))
		if known == nil {
			known = s.systemKeys(group)
		}
		from = copy(keys, known)
	}
	s.chainKeys(keys[:n], from, session, group)
	return s.turn(session, turn, atNS, keys)
}

// turn is a turn's arrival with its prompt's keys (the session's first n of them).
func (s *sessionSource) turn(session, turn int32, atNS int64, keys []uint64) arrival {
	c := s.cfg
	prompt := c.SystemPromptTokens + int(turn)*(c.NewInputTokens+c.OutputTokens) + c.NewInputTokens
	return arrival{atNS: atNS, keys: keys[:prompt/s.bs], // its id is made when a report names it (arrival.name)
		promptTokens: prompt, outputTokens: c.OutputTokens, routeTo: -1,
		session: session, turn: turn, order: -1}
}

// chainKeys makes keys[from:] of a session's prompt, keys[:from] being made.
func (s *sessionSource) chainKeys(keys []uint64, from int, session, group int32) {
	c := s.cfg
	prev := uint64(keyRoot)
	if from > 0 {
		prev = keys[from-1]
	}
	for j := from; j < len(keys); j++ {
		var content uint64
		if (j+1)*s.bs <= c.SystemPromptTokens {
			content = mix64(uint64(group)<<32 ^ uint64(j) ^ 0x9a7)
		} else {
			content = mix64(uint64(session)<<24 ^ uint64(j) ^ 0x5e5<<52)
		}
		prev = chainKey(prev, content)
		keys[j] = prev
	}
}

func (s *sessionSource) fill() {
	if s.feed != nil {
		for s.started < s.cfg.Count {
			fs, ok := s.feed.next()
			if !ok || len(s.pending) > 0 && fs.atNS > s.pending[0].atNS {
				break
			}
			s.feed.pos++
			s.groups = append(s.groups, fs.group)
			s.push(s.turn(int32(s.started), 0, fs.atNS, fs.keys))
			s.started++
		}
		return
	}
	// Generate the next first turn lazily, so memory follows sessions in flight.
	// (noMoreStarts is after every arrival, so it only needs checking with nothing pending.)
	for s.started < s.cfg.Count && (len(s.pending) == 0 && s.starts.next != noMoreStarts || len(s.pending) > 0 && s.starts.next <= s.pending[0].atNS) {
		g, at := s.starts.draw()
		s.groups = append(s.groups, g)
		s.push(s.turnArrival(int32(s.started), g, 0, at, nil))
		s.started++
	}
}

func (s *sessionSource) push(a arrival) {
	var i int32
	if n := len(s.spare); n > 0 {
		i, s.spare = s.spare[n-1], s.spare[:n-1]
		s.held[i] = a
	} else {
		i = int32(len(s.held))
		s.held = append(s.held, a)
	}
	s.pending.push(heapArrival{atNS: a.atNS, seq: s.seq, i: i})
	s.seq++
}

func (s *sessionSource) peek() (int64, bool) {
	if !s.filled {
		s.fill()
		s.filled = true
	}
	if len(s.pending) == 0 {
		return 0, false
	}
	return s.pending[0].atNS, true
}

func (s *sessionSource) pop() arrival {
	if !s.filled {
		s.fill()
	}
	s.filled = false
	i := s.pending.pop().i
	a := s.held[i]
	s.held[i] = arrival{} // its keys are the request's now
	s.spare = append(s.spare, i)
	return a
}

func (s *sessionSource) ended(a *arrival, atNS int64, completed bool) {
	if !completed || int(a.turn)+1 >= s.cfg.Turns {
		return
	}
	if s.feed != nil { // the feed made every turn's keys (sessionfeed.go)
		s.push(s.turn(a.session, a.turn+1, addNS(atNS, s.thinkNS), a.keys[:cap(a.keys)]))
		return
	}
	s.push(s.turnArrival(a.session, s.groups[a.session], a.turn+1, addNS(atNS, s.thinkNS), a.keys))
}

// systemKeys returns the chained keys of the blocks wholly inside the system prompt of a group
// (the same for every session of the group), made once.
func (s *sessionSource) systemKeys(group int32) []uint64 {
	if s.sysKeys == nil {
		s.sysKeys = make([][]uint64, s.cfg.PrefixGroups)
	}
	if k := s.sysKeys[group]; k != nil {
		return k
	}
	k := make([]uint64, s.cfg.SystemPromptTokens/s.bs)
	prev := uint64(keyRoot)
	for j := range k {
		prev = chainKey(prev, mix64(uint64(group)<<32^uint64(j)^0x9a7))
		k[j] = prev
	}
	s.sysKeys[group] = k
	return k
}

func (s *sessionSource) total() int64 { return int64(s.cfg.Count) * int64(s.cfg.Turns) }

// heapArrival is a pending arrival's place in the heap: its instant and sequence, and where
// the source holds it (sessionSource.held); the engine copies the arrival into its request.
type heapArrival struct {
	atNS int64
	seq  int64
	i    int32
}

// arrivalHeap is a binary min-heap by (atNS, seq).
type arrivalHeap []heapArrival

func (h arrivalHeap) less(i, j int) bool {
	if h[i].atNS != h[j].atNS {
		return h[i].atNS < h[j].atNS
	}
	return h[i].seq < h[j].seq
}

func (h *arrivalHeap) push(a heapArrival) {
	*h = append(*h, a)
	s := *h
	for i := len(s) - 1; i > 0; {
		p := (i - 1) / 2
		if !s.less(i, p) {
			break
		}
		s[i], s[p] = s[p], s[i]
		i = p
	}
}

func (h *arrivalHeap) pop() heapArrival {
	s := *h
	top := s[0]
	n := len(s) - 1
	s[0] = s[n]
	s[n] = heapArrival{}
	s = s[:n]
	for i := 0; ; {
		c := 2*i + 1
		if c >= n {
			break
		}
		if c+1 < n && s.less(c+1, c) {
			c++
		}
		if !s.less(c, i) {
			break
		}
		s[i], s[c] = s[c], s[i]
		i = c
	}
	*h = s
	return top
}
