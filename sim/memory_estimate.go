package sim

import (
	"cmp"
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
	// Per request in flight: the request record (its arrival copied in), its id, its arrival
	// held by value until it arrives with its place in the arrival heap, a share of the event
	// heaps, transfers and pulls.
	requestBytes = 832
	// Per handoff (model 5): its record and its pull.
	handoffBytes = 320
	// Per prompt block of a request in flight: its chained key (8), its G1 slot number (4,
	// appended: up to 2×), and the slot numbers of its pull (source and destination), restore,
	// landed entries and write-through transfer (4 each); per output block, its G1 slot
	// number.
	requestBlockBytes       = 8 + 2*4 + 5*4
	requestOutputBlockBytes = 2 * 4
	// Per request of the run: TTFT, its instant and E2E (3 × 8 bytes, appended: up to 2×, and
	// the copy while growing), and the sorted copies the report takes.
	resultBytes = 3*8*3 + 2*8
	// The report's JSON is held up to jsonCopies times its length while it is encoded: the
	// encoder's buffer doubles as it fills, so it is at most twice the text and the arrays it
	// outgrew at most as much again (a small run is never collected), and Marshal returns a
	// copy. (The digest streams its JSON into the hash and keeps no copy.)
	jsonCopies = 5
	// Per request with per-request rows: the row (RequestRow, its pointers' targets and id)
	// and its JSON (about 250 bytes).
	requestRowBytes     = 232
	requestRowJSONBytes = 400
	// Per worker: its record, caches (with their two memos of 4 KiB, kvcache's memo.go),
	// per-worker gauges of the engine and router, its pass event and its report row; and the
	// row's JSON (about 250 bytes).
	workerBytes        = 2048 + 2*kvcache.MemoBytes
	workerRowJSONBytes = 400
	// Per worker removed and its slot taken again (workerslots.go): only its report row is
	// kept (WorkerRow and its nine pointers' targets, 256 bytes), in a list that grows by
	// append (up to 2×).
	goneWorkerRowBytes = 2 * 256
	// Per trace row held by the scenario: the row and its hash ids (8 bytes each).
	traceRowBytes    = 64
	traceHashIDBytes = 8
	// The time series: three families of maxBuckets buckets, each allocated once.
	seriesBucketBytes = 160
	// The report's buckets, at most maxBuckets (a run of D ns has D/w + 1 buckets of the
	// smallest family width w with D/w < 200), each with its TTFT median's float and its SLO
	// attainment's float.
	reportBucketBytes = 112 + 8 + 8
	// A bucket's JSON: the field names and punctuation (132 bytes); its instant in ms, i × w
	// with i < 200 and w = 1, 2 or 5 × 10^k µs, so at most 4 significant digits and 14
	// characters; a TTFT in ms, whole ns over 1e6, at most 18 characters; two counts of workers
	// (active, draining) and six of requests (waiting, running, completed, and pulls staged,
	// landed and rejected, of which a request has at most one each).
	bucketJSONFixedBytes = 132 + 14 + 18 + 24 + sloBucketJSONBytes // model 3: "starting" and "migrated"
	// A bucket's SLO attainment: `,"attainment":` and a fraction of at most 20 characters.
	sloBucketJSONBytes = 14 + 20
	// An slo's tracker: three families of maxBuckets arrival buckets of two counts.
	sloTrackerBytes = 3 * maxBuckets * 16
	// The engine, its event heaps' first arrays, the report's summary, KVCR counts and
	// scale-in rows (a run of the e2 preset allocates 14 kB outside its series, buckets and
	// JSON), and the block index's watch filter of 8 KiB (the routing walk's memo).
	engineFixedBytes = 40 << 10
)

// estimator adds up the drivers of a MemoryEstimate.
type estimator struct {
	s       *Scenario
	w       workloadShape
	workers int64
	m       MemoryEstimate
}

func (e *estimator) add(field, what string, bytes int64) {
	if bytes > 0 {
		e.m.Drivers = append(e.m.Drivers, MemoryDriver{Field: field, What: what, Bytes: bytes})
	}
}

// EstimateMemory bounds the heap a run of s needs at once. s must come from Parse (a trace
// workload's rows loaded).
//
// The caches are counted at the capacity the workload can actually reach, not the configured
// one: a worker's G1 never holds more slots than the blocks of the requests routed to it, and a
// block key k is held by at most min(workers, n(k)) workers, n(k) being the requests whose prompt
// holds it (see workloadShape).
func EstimateMemory(s *Scenario) MemoryEstimate { return estimateMemory(s, true) }

// EstimateMemoryBound is EstimateMemory without generating a requests or trace workload's
// prompt keys (which costs a sort of every prompt block: a quarter of a Mooncake run's time
// through the command): they are counted as if no two prompt blocks were alike, so the figure
// is at least EstimateMemory's, and the same for a sessions workload. It answers "could this
// run be large?" cheaply.
func EstimateMemoryBound(s *Scenario) MemoryEstimate { return estimateMemory(s, false) }

func estimateMemory(s *Scenario, exact bool) MemoryEstimate {
	e := &estimator{s: s, w: s.shape(exact), workers: s.cacheWorkers()}
	g1 := e.gpuCaches()
	g2 := e.hostCaches()
	e.blockIndex(g1 + g2)
	e.drainTables()
	e.requestsInFlight()
	e.perRequestRows()
	e.autoscalerRows()
	e.add("fleet.workers", fmt.Sprintf("%s workers' records and report rows", groupDigits(e.workers)),
		e.workers*(workerBytes+workerRowJSONBytes*jsonCopies))
	if e.w.traceRows > 0 {
		e.add("workload.trace", fmt.Sprintf("the uploaded trace's %s rows", groupDigits(e.w.traceRows)),
			e.w.traceRows*traceRowBytes+e.w.traceHashIDs*traceHashIDBytes)
	}
	e.add("", "the engine, time series and report's fixed parts", e.fixedParts())

	slices.SortStableFunc(e.m.Drivers, func(a, b MemoryDriver) int { return cmp.Compare(b.Bytes, a.Bytes) })
	for _, d := range e.m.Drivers {
		e.m.Bytes = satAdd(e.m.Bytes, d.Bytes)
	}
	return e.m
}

// fixedParts counts what every run has whatever its size: the engine, the time series, and the
// report's buckets with their JSON.
func (e *estimator) fixedParts() int64 {
	digits := func(n int64) int64 { return int64(len(strconv.FormatInt(max(n, 0), 10))) }
	bucketJSON := bucketJSONFixedBytes + 3*digits(e.workers) + 7*digits(e.w.requests)
	fixed := engineFixedBytes + 3*maxBuckets*seriesBucketBytes + maxBuckets*(reportBucketBytes+bucketJSON*jsonCopies)
	if e.s.SLO != nil {
		fixed += sloTrackerBytes
	}
	return fixed
}

// tierBytes is the memory of n slots of a tier spread over the fleet's workers, each of at most
// capacity: per slot the array (up to twice its length) and the free list; each worker's first
// 64-slot array; one worker's old array while it grows.
func (e *estimator) tierBytes(n, capacity int64) int64 {
	return n*(2*slotRecordBytes+3*freeEntryBytes) + min(e.workers, max(n, 1))*64*slotRecordBytes +
		min(capacity, n)*slotRecordBytes
}

// gpuCaches counts the G1 slots the workload can reach: min(workers × gpu_blocks, Σ over
// requests of their blocks). A slot is keyed or held by a running request; duplicates of a
// key computed at once and output blocks are unkeyed, so the (worker, key) bound does not
// apply here.
func (e *estimator) gpuCaches() int64 {
	f, w := e.s.cacheFleet(), e.w
	g1 := min(e.workers*int64(f.GPUBlocks), w.blocks)
	e.add("fleet.gpu_blocks", fmt.Sprintf("G1 caches of %s workers × %s blocks: %s block slots reachable by %s",
		groupDigits(e.workers), groupDigits(int64(f.GPUBlocks)), groupDigits(g1), w.what), e.tierBytes(g1, int64(f.GPUBlocks)))
	return g1
}

// hostCaches counts the G2 entries the workload can reach: every entry is a (worker, key)
// pair, so at most min(workers × host_blocks, the workload's pairs).
func (e *estimator) hostCaches() int64 {
	f, w := e.s.cacheFleet(), e.w
	if f.HostBlocks <= 0 {
		return 0
	}
	g2 := min(e.workers*int64(f.HostBlocks), w.records)
	e.add("fleet.host_blocks", fmt.Sprintf("G2 caches of %s workers × %s blocks: %s entries reachable by %s",
		groupDigits(e.workers), groupDigits(int64(f.HostBlocks)), groupDigits(g2), w.what), e.tierBytes(g2, int64(f.HostBlocks)))
	return g2
}

// blockIndex counts the fleet-wide block index: an entry per distinct key (4 table slots at the
// lowest load, with the old table while growing); for keys two or more workers hold, a list
// header (with the lists' slack) and each record's room in its list: twice its size sorted, or
// the whole fleet's once dense. A key one worker holds keeps its record in its entry. A large
// table takes up to 2 MB more, to start on a 2 MB boundary (kvcache.HugePadBytes).
func (e *estimator) blockIndex(slots int64) {
	f, w := e.s.cacheFleet(), e.w
	records := min(e.workers*int64(f.GPUBlocks+f.HostBlocks), w.records, slots)
	distinct := min(w.keys, records)
	multi := min(w.multiRecords, records)
	lists := min(w.multiKeys, multi/2)
	bytes := distinct*4*indexEntryBytes + lists*holderListBytes*9/4 + multi*2*holderRecBytes*3/2
	if distinct*4*indexEntryBytes >= kvcache.HugeTableBytes {
		bytes += 2 * kvcache.HugePadBytes // the table and the old one, each on a 2 MB boundary
	}
	if d := denseAt(e.workers); d > 0 {
		bytes += min(w.denseKeys, multi/d) * e.workers * holderRecBytes
	}
	e.add("fleet.workers", fmt.Sprintf("the block index: up to %s (worker, block) records of %s keys",
		groupDigits(records), groupDigits(distinct)), bytes)
}

// drainTables counts the tables draining workers move their keys to. A draining worker gets no
// new requests, so its keys are those of requests that arrived by its mark: the pairs of an
// action's workers are at most min(their caches, the prompt blocks arrived by then).
func (e *estimator) drainTables() {
	f := e.s.cacheFleet()
	var draining, keys, lastNS int64
	for _, a := range e.s.ScaleIn {
		n := min(int64(len(a.Workers)+a.Count), e.workers)
		at := msToNS(a.AtMS)
		draining += n
		keys += min(n*int64(f.GPUBlocks+f.HostBlocks), e.s.promptBlocksBy(at))
		lastNS = max(lastNS, at)
	}
	if draining == 0 {
		return
	}
	draining = min(draining, e.workers)
	keys = min(keys, e.w.records, e.s.promptBlocksBy(lastNS))
	e.add("scale_in", fmt.Sprintf("tables of %s draining workers: up to %s keys", groupDigits(draining), groupDigits(keys)),
		keys*4*drainEntryBytes)
}

// requestsInFlight counts the requests that exist at once and every request's TTFT and E2E.
func (e *estimator) requestsInFlight() {
	w := e.w
	if e.s.Disaggregation != nil {
		// Each request in flight may have a handoff, its pull and its block list on the decode
		// worker; with per-request rows every request keeps its last handoff.
		n := w.inFlight
		if e.s.Report.PerRequest {
			n = w.requests
		}
		e.add("disaggregation", fmt.Sprintf("handoffs of up to %s requests", groupDigits(n)),
			n*handoffBytes+w.inFlightBlocks*4)
	}
	e.add(w.field, fmt.Sprintf("requests in flight: up to %s of %s, %s blocks",
		groupDigits(w.inFlight), w.what, groupDigits(w.inFlightBlocks)),
		w.inFlight*requestBytes+w.inFlightPromptBlocks*requestBlockBytes+
			(w.inFlightBlocks-w.inFlightPromptBlocks)*requestOutputBlockBytes)
	e.add(w.field, fmt.Sprintf("TTFT and E2E of %s requests", groupDigits(w.requests)), w.requests*resultBytes)
}

// perRequestRows counts what a report with per_request keeps: every finished request's record
// to the end of the run (a finished request drops its keys and slot lists; a killed one keeps
// its G1 slot numbers), its row and the row's JSON.
func (e *estimator) perRequestRows() {
	w := e.w
	if !e.s.Report.PerRequest {
		return
	}
	retained := w.requests - w.inFlight
	e.add("report.per_request", fmt.Sprintf("per-request rows of %s requests, kept to the end and encoded as JSON", groupDigits(w.requests)),
		retained*requestBytes+(w.blocks-w.inFlightBlocks)*requestOutputBlockBytes+
			w.requests*(requestRowBytes+requestRowJSONBytes*jsonCopies))
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
