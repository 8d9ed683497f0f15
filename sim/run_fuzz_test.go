package sim

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fuzzRunBudget is the memory estimate above which FuzzParseRun does not simulate an accepted
// scenario: the server refuses such a scenario at admission, so it is never run.
const fuzzRunBudget = 64 << 20

// FuzzParseRun feeds arbitrary bytes to Parse and runs a short simulation of whatever it
// accepts (finding M1 of the 2026-12b probe: no scenario that validates may panic the
// simulator or its memory estimate). The run stops at a small event limit, so the seed corpus
// costs well under a second in go test.
func FuzzParseRun(f *testing.F) {
	for _, pattern := range []string{"testdata/examples/*.json"} {
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
	for base, fields := range sweepFields {
		f.Add([]byte(base))
		for _, path := range fields[:2] {
			f.Add(withField(f, base, path, 1e-10))
			f.Add(withField(f, base, path, math.SmallestNonzeroFloat64))
		}
	}
	traces := memTraces{sha256Hex([]byte(smallTrace)): []byte(smallTrace)}
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := Parse(data, ParseEnv{Traces: traces})
		if err != nil {
			return
		}
		est, err := estimateGuarded(s)
		if err != nil {
			t.Fatalf("memory estimate of an accepted scenario: %v\n%s", err, s.CanonicalJSON())
		}
		if est > fuzzRunBudget {
			return
		}
		if _, err := runGuarded(s, 5_000); err != nil && !errors.Is(err, ErrLimit) {
			t.Fatalf("run of an accepted scenario: %v\n%s", err, s.CanonicalJSON())
		}
	})
}
