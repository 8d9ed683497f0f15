package sim

import (
	"bytes"
	"crypto/sha256"
	"encoding/base32"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// CanonicalJSON is the complete scenario as deterministic, compact JSON: members in a fixed
// order (the struct's), every default present, numbers in Go's shortest round-trip form (Parse
// turns −0 into 0). It is what a stored scenario holds and what its id hashes.
func (s *Scenario) CanonicalJSON() []byte {
	if len(s.Workload.Requests) >= scriptedByHand {
		if data, ok := s.canonicalScripted(); ok {
			return data
		}
	}
	// MarshalJSON directly: json.Marshal(s) calls it and then compacts (re-scans) its output,
	// which is compact already, a third of the time of an id for 20,000 scripted requests
	// (TestCanonicalJSONIsMarshal checks the bytes are the same).
	data, err := s.MarshalJSON()
	if err != nil {
		// Only a non-finite number, which Parse never produces, makes Marshal fail. Return a
		// deterministic text that cannot collide with a real scenario's JSON.
		return fmt.Appendf(nil, "unencodable scenario: %v", err)
	}
	return data
}

// lowerBase32 is RFC 4648 base32 in lower case without padding, so ids fit in URLs as they are.
var lowerBase32 = base32.NewEncoding(strings.ToLower("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567")).WithPadding(base32.NoPadding)

// ID is the scenario_id: the first 16 characters of lower-case base32 of
// SHA-256(canonical JSON + ModelVersion). A new model version gives new ids, so old reports are
// never confused with results of changed semantics.
func (s *Scenario) ID() string {
	h := sha256.New()
	h.Write(s.CanonicalJSON())
	h.Write([]byte(ModelVersion))
	return lowerBase32.EncodeToString(h.Sum(nil))[:16]
}

// scriptedByHand is how many scripted requests make CanonicalJSON write them itself
// (canonicalScripted): a capacity probe's 20,000 took encoding/json 8–10 ms, the most of a
// probe's cost to the planner besides its run.
const scriptedByHand = 256

// canonicalScripted is CanonicalJSON for a scripted workload: the scenario without its requests
// through MarshalJSON, and the requests written here, with the bytes encoding/json writes for
// them (TestCanonicalScriptedIsMarshal). It declines (false) whatever it would write
// differently, leaving it to encoding/json: a string that needs an escape, a number that
// encoding/json writes with an exponent, or a non-finite one.
func (s *Scenario) canonicalScripted() ([]byte, bool) {
	c := *s
	c.Workload.Requests = nil
	head, err := c.MarshalJSON()
	if err != nil {
		return nil, false
	}
	// "requests" is omitted when empty and follows "type" in a workload.
	marker := []byte(`"workload":{"type":"requests"`)
	i := bytes.Index(head, marker)
	if i < 0 || bytes.Contains(head[i+1:], marker) {
		return nil, false
	}
	at := i + len(marker)
	out := make([]byte, 0, len(head)+len(s.Workload.Requests)*112)
	out = append(append(out, head[:at]...), `,"requests":[`...)
	for k := range s.Workload.Requests {
		if k > 0 {
			out = append(out, ',')
		}
		var ok bool
		if out, ok = appendScripted(out, &s.Workload.Requests[k]); !ok {
			return nil, false
		}
	}
	return append(append(out, ']'), head[at:]...), true
}

// appendScripted appends r as encoding/json writes a ScriptedRequest, or reports false.
func appendScripted(out []byte, r *ScriptedRequest) ([]byte, bool) {
	out, ok := appendPlainString(append(out, `{"id":`...), r.ID)
	if !ok || math.IsNaN(r.AtMS) || math.IsInf(r.AtMS, 0) {
		return out, false
	}
	if a := math.Abs(r.AtMS); a != 0 && (a < 1e-6 || a >= 1e21) {
		return out, false // encoding/json writes an exponent
	}
	out = strconv.AppendFloat(append(out, `,"at_ms":`...), r.AtMS, 'f', -1, 64)
	out = append(out, `,"blocks":`...)
	if r.Blocks == nil {
		out = append(out, "null"...)
	} else {
		out = append(out, '[')
		for j, b := range r.Blocks {
			if j > 0 {
				out = append(out, ',')
			}
			if out, ok = appendPlainString(out, b); !ok {
				return out, false
			}
		}
		out = append(out, ']')
	}
	out = strconv.AppendInt(append(out, `,"tail_tokens":`...), int64(r.TailTokens), 10)
	out = strconv.AppendInt(append(out, `,"output_tokens":`...), int64(r.OutputTokens), 10)
	if r.RouteTo != nil {
		out = strconv.AppendInt(append(out, `,"route_to":`...), int64(*r.RouteTo), 10)
	}
	return append(out, '}'), true
}

// appendPlainString appends s quoted if it needs no escape from encoding/json (printable
// ASCII but the quote, the backslash and its HTML-escaped <, > and &), or reports false.
func appendPlainString(out []byte, s string) ([]byte, bool) {
	for i := range len(s) {
		if c := s[i]; c < 0x20 || c > 0x7e || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			return out, false
		}
	}
	return append(append(append(out, '"'), s...), '"'), true
}
