package calibrate

import (
	"bytes"
	"errors"
	"math"
	"testing"
)

// FuzzParse: any input either parses into passes with sane counts, whose fit is finite and
// non-negative, or fails with an *InputError naming lines that exist.
func FuzzParse(f *testing.F) {
	f.Add([]byte(bareLine + "\n"))
	f.Add([]byte(`{"received_at_ns": 1, "metrics": ` + bareLine + "}\n\n{}\n"))
	f.Add([]byte("x\n{\"wall_time\": 1e400}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		read, err := Parse(bytes.NewReader(data), Options{Skip: 1})
		if err != nil {
			var ie *InputError
			if !errors.As(err, &ie) {
				t.Fatalf("not an InputError: %v", err)
			}
			lines := bytes.Count(data, []byte("\n")) + 1
			for _, l := range ie.Lines {
				if l.Line < 1 || l.Line > lines {
					t.Fatalf("line %d of %d", l.Line, lines)
				}
			}
			return
		}
		for _, p := range read.Passes {
			if p.WallTimeS <= 0 || p.PrefillTokens < 0 || p.DecodeRequests < 0 || (p.PrefillTokens == 0 && p.DecodeRequests == 0) {
				t.Fatalf("bad pass %+v", p)
			}
		}
		res := Fit(read)
		for _, v := range coefs(res.Timing) {
			if v < 0 || math.IsNaN(v) || math.IsInf(v, 0) {
				t.Fatalf("coefficient %g", v)
			}
		}
	})
}
