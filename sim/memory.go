package sim

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/scalein-planner/scalein/sim/internal/kvcache"
)

// MemoryEstimate is an upper bound of the heap one run of a scenario needs at once (the
// simulator's tables and the report with its JSON encoding), computed from the scenario alone,
// before running it. docs/performance.md ("Memory model") compares it with measured peaks.
type MemoryEstimate struct {
	// Bytes is the sum of the drivers.
	Bytes int64
	// Drivers are the parts of the bound, largest first; each names the scenario fields that
	// drive it.
	Drivers []MemoryDriver
}

// MemoryDriver is one part of a MemoryEstimate.
type MemoryDriver struct {
	// Field is the scenario field whose value drives this part, as a JSON path
	// ("fleet.gpu_blocks", "workload.sessions.count", "report.per_request").
	Field string
	// What says what the bytes hold, with the numbers ("G1 caches: 16,384 workers × up to
	// 10,000,000 blocks, 3,000,000 reachable by the workload").
	What  string
	Bytes int64
}

// Largest returns the driver with the most bytes.
func (m MemoryEstimate) Largest() MemoryDriver {
	if len(m.Drivers) == 0 {
		return MemoryDriver{}
	}
	return m.Drivers[0]
}

// Bytes per item of the simulator's structures, in one place. Each is at least the size of the
// structure it stands for (memory_test.go checks them against unsafe.Sizeof), times the growth
// slack of the slice that holds it where that applies.
const (
	// A cache slot record (24 bytes): a tier's slot array doubles up to its capacity, so it
	// may be twice its length, and the old array is live while the new one is filled.
	slotRecordBytes = kvcache.SlotBytes
	// A free-list entry (int32) per slot, appended (growth up to 2×, and the copy).
	freeEntryBytes = 4
	// A holder entry of the fleet's block index (16 bytes) per distinct key: the table grows
	// at 3/4 load by doubling, so it is 3/8 to 3/4 full, and the old table is live while
	// it is rehashed.
	indexEntryBytes = kvcache.IndexEntryBytes
	// A holder record (8 bytes) in a list of a key with two or more holders, sorted (slack up
	// to 2×) or dense (fleet size × 8 bytes once an eighth of the fleet holds the key: up to
	// 8 records' room per record).
	holderRecBytes = kvcache.HolderRecordBytes
	// A holder list header (56 bytes), per key with two or more holders; the lists slice grows
	// by append (up to 2×, and the copy).
	holderListBytes = kvcache.HolderListBytes
	// A draining worker's own block table entry (16 bytes), sized like the index.
	drainEntryBytes = kvcache.TableEntryBytes
	// Per request in flight: the request record, its arrival, its id, a heap entry, a share of
	// the event heaps, transfers and pulls.
	requestBytes = 768
	// Per prompt block of a request in flight: its chained key (8), its G1 slot number (4,
	// appended: up to 2×), and the slot numbers of its pull (source and destination), restore,
	// landed entries and write-through transfer (4 each); per output block, its G1 slot
	// number.
	requestBlockBytes       = 8 + 2*4 + 5*4
	requestOutputBlockBytes = 2 * 4
	// Per request of the run: TTFT, its instant and E2E (3 × 8 bytes, appended: up to 2×, and
	// the copy while growing), and the sorted copies the report takes.
	resultBytes = 3*8*3 + 2*8
	// Per request with per-request rows: the row (RequestRow, its pointers' targets and id)
	// and its JSON (about 330 bytes), which the encoder's buffer holds up to twice before the
	// copy it returns.
	requestRowBytes     = 224
	requestRowJSONBytes = 400 * 3
	// Per worker: its record, caches, per-worker gauges of the engine and router, its pass
	// event, its report row and JSON.
	workerBytes = 2048
	// Per trace row held by the scenario: the row and its hash ids (8 bytes each).
	traceRowBytes    = 64
	traceHashIDBytes = 8
	// Everything else: the time series (three families of at most 200 buckets of 80 bytes,
	// with the copies coarsening makes), the report's at most 201 buckets (128 bytes each,
	// about 260 as JSON, which the encoder holds up to three times), the engine and its event
	// heaps' first arrays.
	fixedRunBytes = 3*200*80*3 + 201*128 + 201*260*3 + 64<<10
)

// workloadShape is what the memory model needs to know of a workload.
type workloadShape struct {
	requests int64 // requests of the run
	inFlight int64 // requests that can exist at once
	// blocks is the sum over requests of the blocks they fill, ceil((prompt + output) /
	// block_size): no worker's G1 ever holds more slots than the blocks of the requests routed
	// to it, nor its G2 more entries than their prompt blocks.
	blocks       int64
	promptBlocks int64
	// inFlightBlocks and inFlightPromptBlocks bound the blocks of the requests that exist at
	// once.
	inFlightBlocks, inFlightPromptBlocks int64
	// keys bounds the distinct block keys of the workload; only sharedKeys of them may have more
	// than maxHolders holders (0: no bound), since a session's own blocks are held only by the
	// workers that served one of its turns.
	keys, sharedKeys, maxHolders int64
	traceRows                    int64 // rows of an uploaded trace the scenario holds
	traceHashIDs                 int64
	field                        string // the workload field that sets the request count
	what                         string // the workload in words
}

func ceilDiv64(a, b int64) int64 { return (a + b - 1) / b }

// shape measures the workload. A trace workload's rows must have been loaded (Parse does).
func (s *Scenario) shape() workloadShape {
	bs := int64(max(s.Fleet.BlockSize, 1))
	var w workloadShape
	switch s.Workload.Type {
	case WorkloadRequests:
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
	case WorkloadSessions:
		c := s.Workload.Sessions
		if c == nil {
			break
		}
		count, turns := int64(c.Count), int64(c.Turns)
		var maxBlocks, maxPrompt int64
		for t := int64(0); t < turns; t++ {
			prompt := int64(c.SystemPromptTokens) + t*int64(c.NewInputTokens+c.OutputTokens) + int64(c.NewInputTokens)
			b := ceilDiv64(prompt+int64(c.OutputTokens), bs)
			w.blocks += count * b
			w.promptBlocks += count * (prompt / bs)
			maxBlocks, maxPrompt = max(maxBlocks, b), max(maxPrompt, prompt/bs)
		}
		w.requests = count * turns
		// A session has at most one turn in flight.
		w.inFlight, w.inFlightBlocks, w.inFlightPromptBlocks = count, count*maxBlocks, count*maxPrompt
		// Blocks wholly inside the system prompt are the group's; the rest are the session's.
		sysBlocks := min(int64(c.SystemPromptTokens)/bs, maxPrompt)
		w.sharedKeys = min(int64(c.PrefixGroups), count) * sysBlocks
		w.keys = w.sharedKeys + count*(maxPrompt-sysBlocks)
		w.maxHolders = turns
		w.field = "workload.sessions.count"
		w.what = fmt.Sprintf("%s sessions × %d turns", groupDigits(count), turns)
	case WorkloadTrace:
		rows := s.trace
		if s.Workload.Trace != nil && s.Workload.Trace.Limit > 0 && s.Workload.Trace.Limit < len(rows) {
			rows = rows[:s.Workload.Trace.Limit]
		}
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
	}
	if w.keys == 0 {
		w.keys, w.sharedKeys = w.promptBlocks, w.promptBlocks
		if w.promptBlocks <= maxCountedKeys {
			w.keys, w.sharedKeys = s.countKeys()
			w.maxHolders = 1
		}
	}
	return w
}

// maxCountedKeys bounds the keys countKeys collects (8 bytes each); a larger workload is
// estimated as if no two of its blocks were alike.
const maxCountedKeys = 4 << 20

// countKeys generates the prompt keys of a requests or trace workload as the run will and
// counts the distinct ones and those that appear in more than one request (only those can
// have two holders: a request runs on one worker, and a pull copies blocks another request
// left on its source).
func (s *Scenario) countKeys() (distinct, shared int64) {
	var src source
	switch s.Workload.Type {
	case WorkloadRequests:
		src = newScriptedSource(s)
	case WorkloadTrace:
		rows := s.trace
		if s.Workload.Trace != nil && s.Workload.Trace.Limit > 0 && s.Workload.Trace.Limit < len(rows) {
			rows = rows[:s.Workload.Trace.Limit]
		}
		src = newTraceSource(s, rows)
	default:
		return 0, 0
	}
	var keys []uint64
	for {
		if _, ok := src.peek(); !ok {
			break
		}
		keys = append(keys, src.pop().keys...)
	}
	slices.Sort(keys)
	for i := 0; i < len(keys); {
		j := i + 1
		for j < len(keys) && keys[j] == keys[i] {
			j++
		}
		distinct++
		if j-i > 1 {
			shared++
		}
		i = j
	}
	return distinct, shared
}

// EstimateMemory bounds the heap a run of s needs at once. s must come from Parse (a trace
// workload's rows loaded).
//
// The caches are counted at the capacity the workload can actually reach: a worker's G1 never
// holds more slots than the blocks of the requests routed to it, so the fleet's G1 holds at most
// min(workers × gpu_blocks, Σ blocks of all requests), and likewise G2 with prompt blocks.
func EstimateMemory(s *Scenario) MemoryEstimate {
	f := s.Fleet
	w := s.shape()
	workers := int64(f.Workers)
	var m MemoryEstimate
	add := func(field, what string, bytes int64) {
		if bytes > 0 {
			m.Drivers = append(m.Drivers, MemoryDriver{Field: field, What: what, Bytes: bytes})
		}
	}

	g1Cap := workers * int64(f.GPUBlocks)
	g1 := min(g1Cap, w.blocks)
	// Per slot: the array (up to twice its length), and the free list; plus each worker's
	// first 64-slot array, and one worker's old array while it grows.
	g1Bytes := g1*(2*slotRecordBytes+3*freeEntryBytes) + min(workers, max(g1, 1))*64*slotRecordBytes +
		min(int64(f.GPUBlocks), g1)*slotRecordBytes
	add("fleet.gpu_blocks", fmt.Sprintf("G1 caches of %s workers × %s blocks: %s block slots reachable by %s",
		groupDigits(workers), groupDigits(int64(f.GPUBlocks)), groupDigits(g1), w.what), g1Bytes)

	var g2 int64
	if f.HostBlocks > 0 {
		g2 = min(workers*int64(f.HostBlocks), w.promptBlocks)
		g2Bytes := g2*(2*slotRecordBytes+3*freeEntryBytes) + min(workers, max(g2, 1))*64*slotRecordBytes +
			min(int64(f.HostBlocks), g2)*slotRecordBytes
		add("fleet.host_blocks", fmt.Sprintf("G2 caches of %s workers × %s blocks: %s entries reachable by %s",
			groupDigits(workers), groupDigits(int64(f.HostBlocks)), groupDigits(g2), w.what), g2Bytes)
	}

	// The block index: one record per (worker, key) held in either tier; one entry per
	// distinct key (4 table slots at the lowest load, with the old table while growing); for
	// keys with two or more holders a list header (with the lists' slack) and each record's room
	// in its list: twice its size sorted, or the whole fleet's once dense.
	records := min(workers*int64(f.GPUBlocks+f.HostBlocks), w.promptBlocks, g1+g2)
	distinct := min(w.keys, records)
	lists := min(distinct, records/2)
	if w.maxHolders == 1 {
		lists = min(w.sharedKeys, lists)
	}
	indexBytes := distinct*4*indexEntryBytes + lists*holderListBytes*9/4 +
		records*2*holderRecBytes*3/2
	if denseAt := max(kvcache.MinDense, (workers+kvcache.DenseShare-1)/kvcache.DenseShare); workers >= kvcache.MinDense {
		// A key held by denseAt or more workers may have a dense list of workers × 8 bytes.
		candidates := w.keys
		if w.maxHolders > 0 && w.maxHolders < denseAt || w.maxHolders == 1 {
			candidates = w.sharedKeys
		}
		indexBytes += min(candidates, records/denseAt) * workers * holderRecBytes
	}
	add("fleet.workers", fmt.Sprintf("the block index: up to %s (worker, block) records", groupDigits(records)), indexBytes)

	// Draining workers move their keys to tables of their own; the index keeps its size.
	var drainingWorkers int64
	for _, a := range s.ScaleIn {
		drainingWorkers += int64(len(a.Workers) + a.Count)
	}
	drainingWorkers = min(drainingWorkers, workers)
	if drainingWorkers > 0 {
		keys := min(drainingWorkers*int64(f.GPUBlocks+f.HostBlocks), records)
		add("scale_in", fmt.Sprintf("tables of %s draining workers: up to %s keys", groupDigits(drainingWorkers), groupDigits(keys)),
			keys*4*drainEntryBytes)
	}

	add(w.field, fmt.Sprintf("requests in flight: up to %s of %s, %s blocks",
		groupDigits(w.inFlight), w.what, groupDigits(w.inFlightBlocks)),
		w.inFlight*requestBytes+w.inFlightPromptBlocks*requestBlockBytes+
			(w.inFlightBlocks-w.inFlightPromptBlocks)*requestOutputBlockBytes)
	add(w.field, fmt.Sprintf("TTFT and E2E of %s requests", groupDigits(w.requests)), w.requests*resultBytes)
	if s.Report.PerRequest {
		// Rows keep every request, with its keys and slots, to the end of the run.
		retained := w.requests - w.inFlight
		add("report.per_request", fmt.Sprintf("per-request rows of %s requests, kept to the end and encoded as JSON", groupDigits(w.requests)),
			retained*requestBytes+(w.promptBlocks-w.inFlightPromptBlocks)*requestBlockBytes+
				(w.blocks-w.promptBlocks-w.inFlightBlocks+w.inFlightPromptBlocks)*requestOutputBlockBytes+
				w.requests*(requestRowBytes+requestRowJSONBytes))
	}
	add("fleet.workers", fmt.Sprintf("%s workers' records and report rows", groupDigits(workers)), workers*workerBytes)
	if w.traceRows > 0 {
		add("workload.trace", fmt.Sprintf("the uploaded trace's %s rows", groupDigits(w.traceRows)),
			w.traceRows*traceRowBytes+w.traceHashIDs*traceHashIDBytes)
	}
	add("", "the engine, time series and report's fixed parts", fixedRunBytes)

	slices.SortStableFunc(m.Drivers, func(a, b MemoryDriver) int {
		switch {
		case a.Bytes > b.Bytes:
			return -1
		case a.Bytes < b.Bytes:
			return 1
		}
		return 0
	})
	for _, d := range m.Drivers {
		m.Bytes = satAdd(m.Bytes, d.Bytes)
	}
	return m
}

func satAdd(a, b int64) int64 {
	if a > math.MaxInt64-b {
		return math.MaxInt64
	}
	return a + b
}

// FormatBytes writes a byte count for people, in decimal units: "850 kB", "31 GB", "1.2 TB".
func FormatBytes(n int64) string {
	units := []string{"B", "kB", "MB", "GB", "TB", "PB", "EB"}
	v := float64(n)
	i := 0
	for v >= 1000 && i < len(units)-1 {
		v /= 1000
		i++
	}
	if i == 0 || v >= 10 {
		return strconv.FormatFloat(math.Round(v), 'f', -1, 64) + " " + units[i]
	}
	return strconv.FormatFloat(math.Round(v*10)/10, 'f', -1, 64) + " " + units[i]
}

// groupDigits writes n with thousands separators: 16384 → "16,384".
func groupDigits(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := n < 0
	if neg {
		s = s[1:]
	}
	out := make([]byte, 0, len(s)+len(s)/3)
	for i := range len(s) {
		if i > 0 && (len(s)-i)%3 == 0 {
			out = append(out, ',')
		}
		out = append(out, s[i])
	}
	if neg {
		return "-" + string(out)
	}
	return string(out)
}

// ParseBytes reads a byte count written for people: "6GB", "500 MB", "2GiB", "1.5TB" or a
// plain number of bytes. Units are decimal (kB, MB, GB, TB) or binary (KiB, MiB, GiB, TiB),
// case-insensitive.
func ParseBytes(text string) (int64, error) {
	t := strings.TrimSpace(text)
	i := 0
	for i < len(t) && (t[i] >= '0' && t[i] <= '9' || t[i] == '.') {
		i++
	}
	num, unit := t[:i], strings.ToLower(strings.TrimSpace(t[i:]))
	v, err := strconv.ParseFloat(num, 64)
	if err != nil || num == "" {
		return 0, fmt.Errorf("%q is not a size; write it like 6GB, 500MB or 2GiB", text)
	}
	scale := map[string]float64{"": 1, "b": 1, "k": 1e3, "kb": 1e3, "m": 1e6, "mb": 1e6, "g": 1e9, "gb": 1e9,
		"t": 1e12, "tb": 1e12, "kib": 1 << 10, "mib": 1 << 20, "gib": 1 << 30, "tib": 1 << 40}
	f, ok := scale[unit]
	if !ok {
		return 0, fmt.Errorf("%q has an unknown unit %q; use B, kB, MB, GB, TB or KiB, MiB, GiB, TiB", text, t[i:])
	}
	if v*f >= math.MaxInt64 {
		return 0, fmt.Errorf("%q is too large", text)
	}
	return int64(v * f), nil
}

// Check returns nil when the estimate fits limit bytes, and otherwise a *ValidationError
// naming the fields that drive it, each with its bytes: "fleet.gpu_blocks: G1 caches of … need
// up to 31 GB; this server allows 6 GB per run (45 GB in all)". who says whose limit it is
// ("this server", "-max-memory").
func (m MemoryEstimate) Check(limit int64, who string) error {
	if limit <= 0 || m.Bytes <= limit {
		return nil
	}
	ve := &ValidationError{}
	for _, d := range m.Drivers {
		// Name every driver that alone takes a tenth of the limit, and at least the largest.
		if len(ve.Errors) > 0 && d.Bytes*10 < limit || d.Field == "" {
			continue
		}
		ve.Errors = append(ve.Errors, FieldError{Path: d.Field, Message: fmt.Sprintf(
			"needs up to %s for %s; %s allows %s per run and the scenario needs up to %s in all: lower this value",
			FormatBytes(d.Bytes), d.What, who, FormatBytes(limit), FormatBytes(m.Bytes))})
	}
	if len(ve.Errors) == 0 {
		ve.Errors = append(ve.Errors, FieldError{Message: fmt.Sprintf("this scenario needs up to %s; %s allows %s per run",
			FormatBytes(m.Bytes), who, FormatBytes(limit))})
	}
	return ve
}
