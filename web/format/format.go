// Package format is the one place the pages write numbers, units and plurals: a report's
// times to the nanosecond, counts with their unit in the right number, figures for cards and
// tables, sizes, instants and the small words of sentences.
package format

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// Dash stands for a value that does not apply (a worker that was never drained, an empty
// distribution).
const Dash = "—"

// Number prints a value with at most six decimals: report times are whole nanoseconds in
// milliseconds, so six decimals print them exactly.
func Number(v float64) string {
	r := math.Round(v*1e6) / 1e6
	if r == 0 {
		r = 0 // no "-0"
	}
	s := strconv.FormatFloat(r, 'f', -1, 64)
	return groupThousands(s)
}

// groupThousands puts thin spaces between thousands of the integer part, for readability of
// byte counts and worker-seconds.
func groupThousands(s string) string {
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

// WithUnit prints a number and its unit, or a dash for nil.
func WithUnit(v *float64, unit string) string {
	if v == nil {
		return Dash
	}
	if unit == "" {
		return Number(*v)
	}
	return Number(*v) + " " + Unit(*v, unit)
}

// cardDigits is how many significant digits a key-figure card shows: enough for every figure of
// the worked examples (86.554432 ms) while a large figure (229 613.415898 worker-seconds) still
// fits a phone-width card on one line. The exact value is the card's title and in the tables.
const cardDigits = 8

// CardValue prints a figure for a card, rounded to cardDigits significant digits (never fewer
// than the integer part, never more than six decimals), and the exact value when rounding
// changed it.
func CardValue(v *float64, unit string) (shown, exact string) {
	if v == nil {
		return Dash, ""
	}
	full := WithUnit(v, unit)
	decimals := 6
	if a := math.Abs(*v); a >= 1 {
		decimals = max(0, min(6, cardDigits-1-int(math.Floor(math.Log10(a)))))
	}
	r := math.Round(*v*math.Pow10(decimals)) / math.Pow10(decimals)
	shown = WithUnit(&r, unit)
	if shown == full {
		return shown, ""
	}
	return shown, full
}

// Time prints an instant in UTC, to the second; "" for the zero time.
func Time(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format("2006-01-02 15:04:05 UTC")
}

// Signed prints a difference with its sign ("+3 ms").
func Signed(v float64, unit string) string {
	s := Number(v)
	if v > 0 {
		s = "+" + s
	}
	if unit != "" {
		s += " " + unit
	}
	return s
}

// Pct prints a relative difference with its sign and one decimal, or a dash for nil.
func Pct(v *float64) string {
	if v == nil {
		return Dash
	}
	return fmt.Sprintf("%+.1f %%", *v)
}

// singularUnits maps plural count units to their singular, so "1 pull" never reads "1 pulls".
var singularUnits = map[string]string{
	"pulls": "pull", "requests": "request", "hints": "hint", "tokens": "token", "blocks": "block",
	"bytes": "byte", "preemptions": "preemption", "workers": "worker", "runs": "run",
	"decisions": "decision", "drains": "drain", "moves": "move",
}

// Unit returns the unit as it reads after v.
func Unit(v float64, unit string) string {
	if v == 1 {
		if s, ok := singularUnits[unit]; ok {
			return s
		}
	}
	return unit
}

// Count prints a count with its unit in the right number: "1 pull", "262 pulls".
func Count(n int64, unit string) string {
	return Number(float64(n)) + " " + Unit(float64(n), unit)
}

// ShortMS prints a time for a sentence: at most two decimals ("86.55 ms", "77 ms").
func ShortMS(v float64) string {
	return Short(v) + " ms"
}

// Short prints a number for a sentence: at most two decimals, none from 1,000 up.
func Short(v float64) string {
	if math.Abs(v) >= 1000 {
		return Number(math.Round(v))
	}
	return Number(math.Round(v*100) / 100)
}

// OnOff prints a switch.
func OnOff(b bool) string {
	if b {
		return "on"
	}
	return "off"
}

// Quantity prints a number with its unit in the right number ("1 worker", "0.5 ms").
func Quantity(v float64, unit string) string {
	if unit == "" {
		return Number(v)
	}
	return Number(v) + " " + Unit(v, unit)
}

// Plural picks the word for n things: one when n is 1, many otherwise.
func Plural(n int64, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// NumberWord writes small counts as words inside a sentence ("one pull"), larger ones as digits.
func NumberWord(n int64) string {
	words := []string{"no", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine"}
	if n >= 0 && n < int64(len(words)) {
		return words[n]
	}
	return Number(float64(n))
}

// Capitalize upper-cases the first letter of an ASCII sentence.
func Capitalize(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// Ordinal prints 1st, 2nd, 3rd, 4th … 11th, 12th, 13th, 21st.
func Ordinal(n int) string {
	suffix := "th"
	switch {
	case n%100 >= 11 && n%100 <= 13:
	case n%10 == 1:
		suffix = "st"
	case n%10 == 2:
		suffix = "nd"
	case n%10 == 3:
		suffix = "rd"
	}
	return strconv.Itoa(n) + suffix
}

// Table formats a number for tables: at most three decimals, no trailing zeros.
func Table(v float64) string {
	return strconv.FormatFloat(math.Round(v*1000)/1000, 'f', -1, 64)
}

// TableOpt formats an optional number, "—" where it does not apply.
func TableOpt(v *float64) string {
	if v == nil {
		return "—"
	}
	return Table(*v)
}

// TableInt formats a count.
func TableInt(v int64) string { return strconv.FormatInt(v, 10) }

// BinaryBytes prints a size in binary units (a request body limit: "64 MiB").
func BinaryBytes(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d bytes", n)
}

// IDs prints worker ids as a list ("14, 15"), or a dash for none.
func IDs(ids []int) string {
	if len(ids) == 0 {
		return Dash
	}
	parts := make([]string, len(ids))
	for i, id := range ids {
		parts[i] = strconv.Itoa(id)
	}
	return strings.Join(parts, ", ")
}
