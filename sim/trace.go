package sim

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync"
)

// MaxTraceBytes bounds one trace file (upload or local path).
const MaxTraceBytes = 64 << 20

// builtinTraceBlockTokens is the token count per hash id in the Mooncake traces.
const builtinTraceBlockTokens = 512

// minTraceRowBytes is the length of the shortest valid row,
// {"timestamp":0,"input_length":1,"output_length":1,"hash_ids":[]}.
const minTraceRowBytes = 64

// maxTraceLength bounds input_length and output_length so sums never overflow; the scenario
// check applies the much smaller per-request limit.
const maxTraceLength = 1 << 40

//go:embed traces/mooncake_conversation.jsonl
var mooncakeConversationJSONL []byte

// builtinTrace parses an embedded trace once, on first use, and shares the rows: callers must
// not modify them.
type builtinTrace struct {
	data []byte
	once sync.Once
	rows []TraceRow
	err  error
}

func (b *builtinTrace) load() ([]TraceRow, error) {
	b.once.Do(func() { b.rows, b.err = parseTraceRows(b.data, builtinTraceBlockTokens) })
	return b.rows, b.err
}

// builtinTraces maps built-in names to embedded traces. It is written only here, at package
// initialisation, and read-only afterwards.
var builtinTraces = map[string]*builtinTrace{
	BuiltinMooncakeConversation: {data: mooncakeConversationJSONL},
}

// BuiltinTraces lists the names a scenario may use in workload.trace.name.
func BuiltinTraces() []string {
	return []string{BuiltinMooncakeConversation}
}

func isBuiltinTrace(name string) bool {
	_, ok := builtinTraces[name]
	return ok
}

func builtinTraceRows(name string) ([]TraceRow, error) {
	b, ok := builtinTraces[name]
	if !ok {
		return nil, fmt.Errorf("no built-in trace is named %q; built-in traces: %s", name, strings.Join(BuiltinTraces(), ", "))
	}
	return b.load()
}

// TraceError lists the problems found in a trace, each starting with its line number.
type TraceError struct {
	Problems []string
}

func (e *TraceError) Error() string { return strings.Join(e.Problems, "\n") }

// ParseTrace parses a Mooncake-format JSONL trace: one object per line with timestamp (ms),
// input_length, output_length and hash_ids (one id per 512-token block, at least one per
// complete block). Blank lines and unknown keys are allowed; timestamps must not decrease.
// On bad input it returns a *TraceError naming up to 20 problems by line.
func ParseTrace(data []byte) ([]TraceRow, error) {
	return parseTraceRows(data, builtinTraceBlockTokens)
}

// traceLine holds one row's members undecoded, so each can be checked and reported on its own.
type traceLine struct {
	Timestamp    lineField `json:"timestamp"`
	InputLength  lineField `json:"input_length"`
	OutputLength lineField `json:"output_length"`
	HashIDs      lineField `json:"hash_ids"`
}

// lineField is a field's JSON text as a slice of the line being decoded, not a copy of it
// (json.RawMessage copies): parseTraceLine reads it before the line is gone. A trace has a
// line per request, so the four copies a line were most of its parse's allocations.
type lineField []byte

func (f *lineField) UnmarshalJSON(data []byte) error {
	*f = data
	return nil
}

func parseTraceRows(data []byte, blockTokens int) ([]TraceRow, error) {
	if len(data) > MaxTraceBytes {
		return nil, &TraceError{Problems: []string{fmt.Sprintf("the trace is %d bytes; the limit is %d MiB (cut it, or use limit on a shorter file)", len(data), MaxTraceBytes>>20)}}
	}
	te := &TraceError{}
	problem := func(line int, format string, args ...any) bool {
		te.Problems = append(te.Problems, fmt.Sprintf("line %d: ", line)+fmt.Sprintf(format, args...))
		return len(te.Problems) >= maxTraceRowErrors
	}
	// Pre-size for the rows the data can hold: a valid row is at least minTraceRowBytes long,
	// so a file of blank lines cannot make this allocation huge.
	rows := make([]TraceRow, 0, min(bytes.Count(data, []byte{'\n'})+1, len(data)/minTraceRowBytes+1))
	prevTS := 0.0
	lineNo := 0
	for len(data) > 0 {
		var line []byte
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			line, data = data[:i], data[i+1:]
		} else {
			line, data = data, nil
		}
		lineNo++
		line = bytes.TrimSpace(line)
		if len(line) == 0 {
			continue
		}
		row, msg := parseTraceLine(line, blockTokens)
		if msg != "" {
			if problem(lineNo, "%s", msg) {
				break
			}
			continue
		}
		if row.TimestampMS < prevTS {
			if problem(lineNo, "timestamp: %s is earlier than the previous row's %s; sort the trace by timestamp", fmtNum(row.TimestampMS), fmtNum(prevTS)) {
				break
			}
			continue
		}
		prevTS = row.TimestampMS
		row.Line = lineNo
		rows = append(rows, row)
	}
	if len(te.Problems) >= maxTraceRowErrors {
		te.Problems = append(te.Problems, fmt.Sprintf("stopped after %d problems", maxTraceRowErrors))
	}
	if len(te.Problems) > 0 {
		return nil, te
	}
	if len(rows) == 0 {
		return nil, &TraceError{Problems: []string{`the trace has no rows; expected one JSON object per line like {"timestamp": 0, "input_length": 700, "output_length": 20, "hash_ids": [0, 1]}`}}
	}
	return rows, nil
}

// parseTraceLine decodes one non-blank line; msg says what is wrong with it, if anything.
func parseTraceLine(line []byte, blockTokens int) (row TraceRow, msg string) {
	if line[0] != '{' {
		return row, "must be a JSON object {…}"
	}
	var tl traceLine
	if err := json.Unmarshal(line, &tl); err != nil {
		var se *json.SyntaxError
		if errors.As(err, &se) {
			return row, fmt.Sprintf("invalid JSON at column %d: %s", se.Offset, strings.TrimPrefix(se.Error(), "json: "))
		}
		return row, "invalid JSON: " + strings.TrimPrefix(err.Error(), "json: ")
	}
	if tl.Timestamp == nil {
		return row, "timestamp: required (arrival in ms)"
	}
	ts, err := strconv.ParseFloat(string(tl.Timestamp), 64)
	if err != nil || !isJSONNumber(tl.Timestamp) || math.IsInf(ts, 0) || ts < 0 {
		return row, "timestamp: must be a number ≥ 0 (ms)"
	}
	if ts > maxTimeMS {
		return row, fmt.Sprintf("timestamp: %s ms is beyond the %s ms (about 115 days) a run may last; timestamps are milliseconds from the trace's start", fmtNum(ts), fmtNum(maxTimeMS))
	}
	in, ok := jsonInteger(tl.InputLength)
	if !ok || in < 1 || in > maxTraceLength {
		return row, "input_length: must be an integer ≥ 1"
	}
	out, ok := jsonInteger(tl.OutputLength)
	if !ok || out < 1 || out > maxTraceLength {
		return row, "output_length: must be an integer ≥ 1"
	}
	ids, ok := parseHashIDs(tl.HashIDs)
	if !ok {
		return row, "hash_ids: must be a list of integers ≥ 0"
	}
	if need := in / int64(blockTokens); int64(len(ids)) < need {
		return row, fmt.Sprintf("hash_ids: has %d ids but input_length %d needs at least %d (one per complete %d-token block)", len(ids), in, need, blockTokens)
	}
	return TraceRow{TimestampMS: ts + 0, InputLength: int(in), OutputLength: int(out), HashIDs: ids}, ""
}

// checkHashIDCounts re-checks rows parsed for one trace block size against another.
func checkHashIDCounts(rows []TraceRow, blockTokens int) error {
	te := &TraceError{}
	for _, r := range rows {
		if need := r.InputLength / blockTokens; len(r.HashIDs) < need {
			te.Problems = append(te.Problems, fmt.Sprintf("line %d: hash_ids: has %d ids but input_length %d needs at least %d at trace_block_tokens %d", r.Line, len(r.HashIDs), r.InputLength, need, blockTokens))
			if len(te.Problems) >= maxTraceRowErrors {
				break
			}
		}
	}
	if len(te.Problems) > 0 {
		return te
	}
	return nil
}

func isJSONNumber(raw []byte) bool {
	return len(raw) > 0 && (raw[0] == '-' || (raw[0] >= '0' && raw[0] <= '9'))
}

// jsonInteger reads a JSON number literal that is an exact integer (7, 7.0 or 7e0).
func jsonInteger(raw []byte) (int64, bool) {
	if !isJSONNumber(raw) {
		return 0, false
	}
	if n, ok := smallDigits(raw); ok {
		return n, true
	}
	if i, err := strconv.ParseInt(string(raw), 10, 64); err == nil {
		return i, true
	}
	f, err := strconv.ParseFloat(string(raw), 64)
	if err != nil || f != math.Trunc(f) || math.Abs(f) > 9e18 {
		return 0, false
	}
	return int64(f), true
}

// smallDigits reads a literal of 1 to 18 decimal digits (most of a trace's numbers) without
// strconv's conversion to a string.
func smallDigits(raw []byte) (int64, bool) {
	if len(raw) == 0 || len(raw) > 18 {
		return 0, false
	}
	n := int64(0)
	for _, c := range raw {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	return n, true
}

// parseHashIDs reads a JSON list of non-negative integers without allocating per element; the
// line was already validated as JSON, so only the element types need checking.
func parseHashIDs(raw []byte) ([]int64, bool) {
	raw = bytes.TrimSpace(raw)
	if len(raw) < 2 || raw[0] != '[' || raw[len(raw)-1] != ']' {
		return nil, false
	}
	body := bytes.TrimSpace(raw[1 : len(raw)-1])
	if len(body) == 0 {
		return []int64{}, true
	}
	ids := make([]int64, 0, bytes.Count(body, []byte{','})+1)
	for len(body) > 0 {
		var elem []byte
		if i := bytes.IndexByte(body, ','); i >= 0 {
			elem, body = body[:i], body[i+1:]
		} else {
			elem, body = body, nil
		}
		id, ok := jsonInteger(bytes.TrimSpace(elem))
		if !ok || id < 0 {
			return nil, false
		}
		ids = append(ids, id)
	}
	return ids, true
}

// loadTrace returns the rows a trace workload uses: the rows Parse kept, or the trace named
// by the scenario (built-in, or uploaded through src) with limit applied. Speedup and offset
// are the engine's business. The rows may be shared: callers must not modify them.
func (s *Scenario) loadTrace(src TraceSource) ([]TraceRow, error) {
	if s.trace != nil {
		return s.trace, nil
	}
	t := s.Workload.Trace
	if s.Workload.Type != WorkloadTrace || t == nil {
		return nil, errors.New("sim: the scenario has no trace workload")
	}
	var rows []TraceRow
	var err error
	switch {
	case t.Name != "":
		rows, err = builtinTraceRows(t.Name)
		if err == nil && t.TraceBlockTokens != builtinTraceBlockTokens {
			err = checkHashIDCounts(rows, t.TraceBlockTokens)
		}
	case t.SHA256 != "":
		if src == nil {
			return nil, fmt.Errorf("sim: trace %s: no trace source to load it from; upload the trace first", t.SHA256)
		}
		var data []byte
		if data, err = src.Trace(t.SHA256); err == nil {
			rows, err = parseTraceRows(data, t.TraceBlockTokens)
		}
	default:
		return nil, fmt.Errorf("sim: trace path %q was not resolved; parse the scenario with ParseEnv.ReadFile", t.Path)
	}
	if err != nil {
		return nil, fmt.Errorf("sim: load trace: %w", err)
	}
	if t.Limit > 0 && t.Limit < len(rows) {
		rows = rows[:t.Limit]
	}
	return rows, nil
}
