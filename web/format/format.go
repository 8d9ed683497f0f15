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

	"github.com/scalein-planner/scalein/sim"
)

// Dash stands for a value that does not apply (a worker that was never drained, an empty
// distribution).
const Dash = "—"

// Number prints a value as every page and sentence does: sim.FormatNumber (at most six
// decimals, since report times are whole nanoseconds in milliseconds; thousands grouped). The
// planner's sentences, written in sim/whatif, use the same function.
func Number(v float64) string { return sim.FormatNumber(v) }

// WithUnit prints a number and its unit, or a dash for nil.
func WithUnit(v *float64, unit string) string {
	if v == nil {
		return Dash
	}
	if unit == "" {
		return Number(*v)
	}
	if unit == sim.UnitShare {
		return Number(*v*100) + " %"
	}
	return Number(*v) + " " + Unit(*v, unit)
}

// CardValue prints a figure for a card the way a person reads it (Readable: a unit by size,
// about three significant digits), and the exact value when rounding changed it (the card's
// title).
func CardValue(v *float64, unit string) (shown, exact string) {
	if v == nil {
		return Dash, ""
	}
	full := WithUnit(v, unit)
	shown = Readable(*v, unit)
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
	if unit == sim.UnitShare { // a change of a share is in percentage points
		v, unit = v*100, "points"
	}
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
	"decisions": "decision", "drains": "drain", "moves": "move", "stages": "stage", "GPUs": "GPU",
	"handoffs": "handoff", "prompts": "prompt",
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

// ShortMS prints a time given in ms for a sentence, with a unit by its size ("86.6 ms", "786 s").
func ShortMS(v float64) string {
	return Duration(v)
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

// Table formats a number for a chart's table, as a person reads it: about three significant
// digits, whole numbers in full, thousands grouped (Sig3); the exact figures are in the
// report's downloads.
func Table(v float64) string {
	return Sig3(v)
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

// Coefficient rounds a fitted coefficient to six significant digits (measurements carry no more)
// and prints it without an exponent, as the form expects.
func Coefficient(v float64) string {
	r, err := strconv.ParseFloat(strconv.FormatFloat(v, 'g', 6, 64), 64)
	if err != nil || r == 0 {
		return "0"
	}
	return strconv.FormatFloat(r, 'f', -1, 64)
}

// Significant prints an optional number to digits significant digits, a dash where it does
// not apply (a fit's R² and MAPE).
func Significant(v *float64, digits int) string {
	if v == nil {
		return Dash
	}
	return strconv.FormatFloat(*v, 'g', digits, 64)
}

// Share prints a fraction as a percentage with at most one decimal ("37.5 %").
func Share(x float64) string {
	return strconv.FormatFloat(math.Round(x*1000)/10, 'f', -1, 64) + " %"
}

// TwoDecimals prints a number with at most two decimals and no trailing zeros, for a caption.
func TwoDecimals(x float64) string {
	s := fmt.Sprintf("%.2f", x)
	s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	return s
}

// groupThousands puts thin spaces between thousands of a number's integer part (sim.GroupThousands).
func groupThousands(s string) string { return sim.GroupThousands(s) }
