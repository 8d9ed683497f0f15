package sim

import (
	"math"
	"strconv"
	"strings"
)

// FormatNumber is the one way a number is written for people, on every page and in every
// sentence (plan reasons, labels, messages): at most six decimals, since report times are whole
// nanoseconds in milliseconds and six decimals print them exactly, and thin spaces between
// thousands of the integer part. Machine formats (JSON, CSV) write full precision instead.
func FormatNumber(v float64) string {
	r := math.Round(v*1e6) / 1e6
	if math.IsInf(r, 0) || math.IsNaN(r) {
		r = v // beyond ±1.8e302 rounding overflows; such a value has no decimals anyway
	}
	if r == 0 {
		r = 0 // no "-0"
	}
	return GroupThousands(strconv.FormatFloat(r, 'f', -1, 64))
}

// GroupThousands puts thin spaces between thousands of the integer part, for readability of
// byte counts and worker-seconds.
func GroupThousands(s string) string {
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	intPart, frac, hasFrac := strings.Cut(s, ".")
	if len(intPart) > 4 {
		var b strings.Builder
		lead := len(intPart) % 3
		if lead > 0 {
			b.WriteString(intPart[:lead])
		}
		for i := lead; i < len(intPart); i += 3 {
			if b.Len() > 0 {
				b.WriteString("\u202f")
			}
			b.WriteString(intPart[i : i+3])
		}
		intPart = b.String()
	}
	out := intPart
	if hasFrac {
		out += "." + frac
	}
	if neg {
		out = "-" + out
	}
	return out
}
