// Package calibrate fits the pass timing model of docs/model.md#passes step 4 (five coefficients) to
// measured forward passes: ForwardPassMetrics (FPM) JSON lines as Dynamo records them for vLLM
// and SGLang workers, one line per scheduler iteration. It also writes simulated passes in the
// same line format, so measured and simulated passes can be compared like with like.
//
// docs/calibration.md says where FPM's counts and the model's differ and what the fit assumes.
package calibrate

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
)

// Pass is one forward pass with the counts the fit uses.
type Pass struct {
	Line            int     // 1-based line of the input
	WorkerID        string  // FPM worker_id ("" when absent)
	DPRank          int64   // FPM dp_rank (0 when absent)
	WallTimeS       float64 // seconds
	PrefillRequests int64   // scheduled_requests.num_prefill_requests
	PrefillTokens   int64   // scheduled_requests.sum_prefill_tokens (P)
	DecodeRequests  int64   // scheduled_requests.num_decode_requests (D)
	DecodeKVTokens  int64   // scheduled_requests.sum_decode_kv_tokens (K)
}

// Options select the passes to fit.
type Options struct {
	// Worker keeps only the lines whose worker_id equals it ("" keeps every line).
	Worker string
	// Skip drops the first Skip passes (after idle heartbeats and other workers are dropped),
	// typically warm-up passes (CUDA graph capture, first allocations).
	Skip int
}

// Limits of the input.
const (
	MaxLineBytes = 1 << 20 // one FPM line is a few hundred bytes
	maxLineErrs  = 20      // a bad file reports its first problems, not thousands
	maxCount     = 1 << 53 // counts must be exact in a double
	maxWallTimeS = 3600.0  // a forward pass longer than an hour is not a measurement
)

// LineError is a problem on one input line.
type LineError struct {
	Line int    `json:"line"`
	Msg  string `json:"message"`
}

func (e LineError) String() string { return fmt.Sprintf("line %d: %s", e.Line, e.Msg) }

// InputError lists the bad lines of an input (the first 20) or says why it has no passes.
type InputError struct {
	Lines []LineError
	More  int    // bad lines beyond those listed
	Msg   string // a problem of the whole input (no lines listed)
}

func (e *InputError) Error() string {
	if e.Msg != "" {
		return e.Msg
	}
	var b strings.Builder
	for i, l := range e.Lines {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(l.String())
	}
	if e.More > 0 {
		fmt.Fprintf(&b, "\n… and %d more bad lines", e.More)
	}
	return b.String()
}

// Read is what Parse found: the passes kept and counts of what was dropped.
type Read struct {
	Passes       []Pass
	Lines        int // non-blank lines
	Heartbeats   int // wall_time 0, dropped
	Empty        int // wall_time > 0 but no scheduled work, dropped
	Skipped      int // dropped by Options.Skip
	OtherWorkers int // other workers' lines, dropped by Options.Worker
	Workers      int // distinct (worker_id, dp_rank) among the kept passes
}

// Parse reads FPM JSON lines: each line is either a bare metrics object or an envelope
// {"received_at_ns": …, "metrics": {…}}. The metrics need wall_time (seconds) and
// scheduled_requests with num_prefill_requests, sum_prefill_tokens, num_decode_requests and
// sum_decode_kv_tokens; other members are ignored. Blank lines are ignored. Every bad line is
// reported (the first 20) with its line number in an *InputError.
func Parse(r io.Reader, opt Options) (*Read, error) {
	if opt.Skip < 0 {
		return nil, &InputError{Msg: fmt.Sprintf("skip is %d; it counts passes to drop and must be 0 or more", opt.Skip)}
	}
	br := bufio.NewReaderSize(r, 64<<10)
	out := &Read{}
	var bad InputError
	addErr := func(line int, format string, a ...any) {
		if len(bad.Lines) < maxLineErrs {
			bad.Lines = append(bad.Lines, LineError{Line: line, Msg: fmt.Sprintf(format, a...)})
		} else {
			bad.More++
		}
	}
	workers := map[string]bool{}
	skip := opt.Skip
	for line := 1; ; line++ {
		raw, err := readLine(br)
		if errors.Is(err, errLineTooLong) {
			addErr(line, "longer than %d bytes; an FPM line is one JSON object of a few hundred bytes", MaxLineBytes)
			continue
		}
		if err != nil && !errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("calibrate: read line %d: %w", line, err)
		}
		if len(bytes.TrimSpace(raw)) > 0 {
			out.Lines++
			p, msg := parseLine(raw)
			switch {
			case msg != "":
				addErr(line, "%s", msg)
			case p.WallTimeS == 0:
				out.Heartbeats++
			case opt.Worker != "" && p.WorkerID != opt.Worker:
				out.OtherWorkers++
			case p.PrefillTokens == 0 && p.DecodeRequests == 0:
				out.Empty++
			case skip > 0:
				skip--
				out.Skipped++
			default:
				p.Line = line
				out.Passes = append(out.Passes, p)
				workers[p.WorkerID+"\x00"+strconv.FormatInt(p.DPRank, 10)] = true
			}
		}
		if errors.Is(err, io.EOF) {
			break
		}
	}
	out.Workers = len(workers)
	if len(bad.Lines) > 0 {
		return nil, &bad
	}
	if len(out.Passes) == 0 {
		msg := fmt.Sprintf("no pass to fit: %d lines, %d idle heartbeats (wall_time 0), %d passes without scheduled work", out.Lines, out.Heartbeats, out.Empty)
		if opt.Worker != "" {
			msg += fmt.Sprintf(", %d lines of other workers than %q", out.OtherWorkers, opt.Worker)
		}
		if opt.Skip > 0 {
			msg += fmt.Sprintf(", %d skipped", out.Skipped)
		}
		return nil, &InputError{Msg: msg + "; give FPM lines with wall_time > 0 and scheduled work"}
	}
	return out, nil
}

var errLineTooLong = errors.New("line too long")

// readLine returns the next line without its newline; a line over MaxLineBytes is consumed and
// reported with errLineTooLong.
func readLine(br *bufio.Reader) ([]byte, error) {
	var buf []byte
	for {
		chunk, err := br.ReadSlice('\n')
		if len(buf)+len(chunk) > MaxLineBytes+1 {
			for errors.Is(err, bufio.ErrBufferFull) {
				_, err = br.ReadSlice('\n')
			}
			if err != nil && !errors.Is(err, io.EOF) {
				return nil, err
			}
			return nil, errLineTooLong
		}
		buf = append(buf, chunk...)
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		return bytes.TrimSuffix(buf, []byte("\n")), err
	}
}

// parseLine decodes one line; msg says what is wrong with it.
func parseLine(raw []byte) (p Pass, msg string) {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(raw, &top); err != nil {
		if len(bytes.TrimSpace(raw)) > 0 && bytes.TrimSpace(raw)[0] != '{' {
			return p, "not a JSON object; each line must be one FPM metrics object or {\"received_at_ns\": …, \"metrics\": {…}}"
		}
		return p, "not valid JSON: " + strings.TrimPrefix(err.Error(), "json: ")
	}
	metrics := top
	if m, ok := top["metrics"]; ok {
		if ns, ok := top["received_at_ns"]; ok {
			if _, err := strconv.ParseFloat(string(ns), 64); err != nil {
				return p, "received_at_ns must be a number"
			}
		}
		metrics = nil
		if err := json.Unmarshal(m, &metrics); err != nil || metrics == nil {
			return p, "metrics must be an object holding wall_time and scheduled_requests"
		}
	}
	wt, ok := metrics["wall_time"]
	if !ok {
		return p, "no wall_time (the pass duration in seconds); is this an FPM file?"
	}
	w, err := strconv.ParseFloat(string(wt), 64)
	switch {
	case err != nil:
		return p, fmt.Sprintf("wall_time must be a number of seconds, got %s", clip(wt))
	case w < 0 || math.IsNaN(w):
		return p, fmt.Sprintf("wall_time is %s; a duration is 0 or more seconds", clip(wt))
	case w > maxWallTimeS:
		return p, fmt.Sprintf("wall_time is %s seconds; FPM gives seconds, and a pass over %g s is not a measurement", clip(wt), maxWallTimeS)
	}
	p.WallTimeS = w
	if id, ok := metrics["worker_id"]; ok && string(id) != "null" {
		if err := json.Unmarshal(id, &p.WorkerID); err != nil {
			// Some writers give numeric ids; keep their text.
			if _, nerr := strconv.ParseFloat(string(id), 64); nerr != nil {
				return p, "worker_id must be a string"
			}
			p.WorkerID = string(id)
		}
	}
	if dp, ok := metrics["dp_rank"]; ok && string(dp) != "null" {
		v, m := count(dp, "dp_rank")
		if m != "" {
			return p, m
		}
		p.DPRank = v
	}
	sr, ok := metrics["scheduled_requests"]
	if !ok {
		return p, "no scheduled_requests object"
	}
	var sched map[string]json.RawMessage
	if err := json.Unmarshal(sr, &sched); err != nil || sched == nil {
		return p, "scheduled_requests must be an object"
	}
	fields := []struct {
		name string
		dst  *int64
	}{
		{"num_prefill_requests", &p.PrefillRequests},
		{"sum_prefill_tokens", &p.PrefillTokens},
		{"num_decode_requests", &p.DecodeRequests},
		{"sum_decode_kv_tokens", &p.DecodeKVTokens},
	}
	for _, f := range fields {
		v, ok := sched[f.name]
		if !ok {
			return p, "scheduled_requests has no " + f.name
		}
		n, m := count(v, "scheduled_requests."+f.name)
		if m != "" {
			return p, m
		}
		*f.dst = n
	}
	if (p.PrefillRequests == 0) != (p.PrefillTokens == 0) {
		return p, fmt.Sprintf("num_prefill_requests %d with sum_prefill_tokens %d: a prefilling request schedules at least one token, and tokens need a request",
			p.PrefillRequests, p.PrefillTokens)
	}
	if p.DecodeRequests == 0 && p.DecodeKVTokens != 0 {
		return p, fmt.Sprintf("sum_decode_kv_tokens %d with no decoding request", p.DecodeKVTokens)
	}
	return p, ""
}

// count parses a non-negative integer (written as an integer or an integral number).
func count(raw json.RawMessage, name string) (int64, string) {
	v, err := strconv.ParseFloat(string(raw), 64)
	switch {
	case err != nil:
		return 0, fmt.Sprintf("%s must be a number, got %s", name, clip(raw))
	case v < 0 || v != math.Trunc(v) || v > maxCount:
		return 0, fmt.Sprintf("%s is %s; it must be a whole number from 0 to 2^53", name, clip(raw))
	}
	return int64(v), ""
}

func clip(raw []byte) string {
	s := string(raw)
	if len(s) > 40 {
		return s[:40] + "…"
	}
	return s
}
