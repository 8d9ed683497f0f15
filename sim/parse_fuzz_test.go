package sim

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzParse feeds arbitrary bytes to Parse: it must never panic, and anything it accepts must
// survive a round trip through its canonical JSON with the same id.
func FuzzParse(f *testing.F) {
	for _, pattern := range []string{"testdata/examples/*.json", "testdata/examples/invalid/*.json"} {
		files, _ := filepath.Glob(pattern)
		for _, file := range files {
			if strings.HasSuffix(file, "expected.json") {
				continue
			}
			if data, err := os.ReadFile(file); err == nil {
				f.Add(data)
			}
		}
	}
	for _, p := range Presets() {
		f.Add(p.JSON)
	}
	f.Add([]byte(fullScenario))
	f.Add([]byte(sparseScenario))
	f.Add([]byte(`{"workload": {"type": "trace", "trace": {"sha256": "` + sha256Hex([]byte(smallTrace)) + `"}}}`))
	traces := memTraces{sha256Hex([]byte(smallTrace)): []byte(smallTrace)}
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := Parse(data, ParseEnv{Traces: traces})
		if err != nil {
			if s != nil {
				t.Fatalf("a scenario and an error: %v", err)
			}
			if err.Error() == "" {
				t.Fatal("an error without a message")
			}
			return
		}
		canonical := s.CanonicalJSON()
		again, err := Parse(canonical, ParseEnv{Traces: traces})
		if err != nil {
			t.Fatalf("the canonical JSON of an accepted scenario is refused: %v\n%s", err, canonical)
		}
		if again.ID() != s.ID() {
			t.Fatalf("the canonical JSON does not round-trip:\n%s\n%s", canonical, again.CanonicalJSON())
		}
	})
}

// FuzzParseTrace feeds arbitrary bytes to ParseTrace: it must never panic, and accepted rows
// must satisfy the format's rules.
func FuzzParseTrace(f *testing.F) {
	f.Add([]byte(smallTrace))
	f.Add(mooncakeConversationJSONL[:4096])
	f.Add([]byte("{\"timestamp\": 1e3, \"input_length\": 1.0, \"output_length\": 1, \"hash_ids\": [ 0 , 1 ]}\r\n\n"))
	f.Add([]byte(`{"timestamp": 0, "input_length": 1, "output_length": 1, "hash_ids": ["1,2"]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		rows, err := ParseTrace(data)
		if err != nil {
			return
		}
		prev := 0.0
		for _, r := range rows {
			if r.TimestampMS < prev || r.InputLength < 1 || r.OutputLength < 1 || len(r.HashIDs) < r.InputLength/512 {
				t.Fatalf("accepted a bad row: %+v", r)
			}
			for _, id := range r.HashIDs {
				if id < 0 {
					t.Fatalf("accepted a negative hash id: %+v", r)
				}
			}
			prev = r.TimestampMS
		}
	})
}

// FuzzDecodeTree checks the hand-written JSON reader against encoding/json: both accept the
// same documents (apart from nesting deeper than a scenario allows), and strings and numbers
// come out the same.
func FuzzDecodeTree(f *testing.F) {
	f.Add([]byte(fullScenario))
	f.Add([]byte(`{"a": "\u00e9\n\"", "b": [1, -0.5e+3, true, false, null], "a": {}}`))
	f.Add([]byte(`[01]`))
	f.Add([]byte(`{"x": 1,}`))
	f.Add([]byte("\"\t\""))
	f.Fuzz(func(t *testing.T, data []byte) {
		if !utf8.Valid(data) {
			return // Parse refuses invalid UTF-8 before decoding
		}
		root, err := decodeTree(data, func(string, string) {})
		valid := json.Valid(data)
		if err != nil && strings.Contains(err.Error(), "nested more than") {
			return
		}
		if (err == nil) != valid {
			t.Fatalf("decodeTree err=%v but json.Valid=%v for %q", err, valid, data)
		}
		if err == nil && root.kind == kindString {
			var want string
			if json.Unmarshal(data, &want) == nil && want != root.text {
				t.Fatalf("string %q decoded as %q, want %q", data, root.text, want)
			}
		}
	})
}
