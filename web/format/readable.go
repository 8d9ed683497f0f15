package format

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/scalein-planner/scalein/sim"
)

// Readable numbers (issue 28): what a person reads on cards, in sentences and on axes carries
// about three significant digits and a unit chosen by its size; the exact value stays in the
// title attribute, the tables' downloads, the JSON and the API.

// Sig3 writes x to about three significant digits, no trailing zeros, thousands grouped: 786.09
// → "786", 49 130.8 → "49 131", 0.012345 → "0.0123". Integers up to 999 999 keep every digit;
// NaN and infinities print as a dash.
func Sig3(x float64) string {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return Dash
	}
	if x == 0 {
		return "0"
	}
	d := 2 - int(math.Floor(math.Log10(math.Abs(x))))
	var out string
	if d <= 0 {
		out = strconv.FormatFloat(math.Round(x), 'f', 0, 64)
	} else {
		out = strconv.FormatFloat(x, 'f', d, 64)
		if strings.Contains(out, ".") {
			out = strings.TrimRight(strings.TrimRight(out, "0"), ".")
		}
	}
	if out == "-0" {
		out = "0"
	}
	return groupThousands(out)
}

// round3 rounds x to three significant digits (whole numbers from 1,000 up).
func round3(x float64) float64 {
	if x == 0 {
		return 0
	}
	d := 2 - int(math.Floor(math.Log10(math.Abs(x))))
	if d <= 0 {
		return math.Round(x)
	}
	p := math.Pow10(d)
	return math.Round(x*p) / p
}

// Duration writes a time given in ms with a unit chosen by its size: ms below a second, s below
// 1,000 s, min below an hour, then h:mm:ss ("109 ms", "786 s", "49.1 min", "23:56:53 h").
// NaN prints as a dash, never as a number.
func Duration(ms float64) string {
	if math.IsNaN(ms) || math.IsInf(ms, 0) {
		return Dash
	}
	// The unit is chosen by the value as it will read: 999.6 ms is "1 s", not "1000 ms".
	switch a := math.Abs(round3(ms)); {
	case a < 1000:
		return Sig3(ms) + " ms"
	case math.Abs(round3(ms/1000)) < 1000:
		return Sig3(ms/1000) + " s"
	case math.Abs(round3(ms/60000)) < 60:
		return Sig3(ms/60000) + " min"
	}
	sign := ""
	if ms < 0 {
		sign, ms = "-", -ms
	}
	secs := int64(math.Round(ms / 1000))
	return fmt.Sprintf("%s%d:%02d:%02d h", sign, secs/3600, secs/60%60, secs%60)
}

// DurationOpt is Duration of an optional time, a dash for nil.
func DurationOpt(ms *float64) string {
	if ms == nil {
		return Dash
	}
	return Duration(*ms)
}

// GPUHours writes GPU-hours to two decimals: "1.87 GPU-h".
func GPUHours(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return Dash
	}
	r := math.Round(v*100) / 100
	if r == 0 {
		r = 0
	}
	return groupThousands(strconv.FormatFloat(r, 'f', 2, 64)) + " GPU-h"
}

// Bytes writes a size in decimal units by its size: "512 bytes", "3.5 kB", "1.2 MB", "34.4 GB".
func Bytes(n float64) string {
	if math.IsNaN(n) || math.IsInf(n, 0) {
		return Dash
	}
	units := []string{"kB", "MB", "GB", "TB", "PB"}
	a := math.Abs(n)
	if a < 1000 {
		return Sig3(n) + " " + Unit(n, "bytes")
	}
	i := -1
	for a >= 999.5 && i < len(units)-1 {
		a /= 1000
		n /= 1000
		i++
	}
	return Sig3(n) + " " + units[i]
}

// Readable writes a figure with its unit for a card, a sentence or a tooltip: times by size,
// GPU-hours to two decimals, sizes in decimal units, whole counts in full and other figures to
// about three significant digits.
func Readable(v float64, unit string) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return Dash
	}
	switch unit {
	case sim.UnitShare:
		return Sig3(v*100) + " %"
	case "ms":
		return Duration(v)
	case "s":
		return Duration(v * 1000)
	case "GPU-h", "GPU-hours":
		return GPUHours(v)
	case "bytes":
		return Bytes(v)
	}
	s := Sig3(v)
	if v == math.Trunc(v) && math.Abs(v) < 1e6 {
		s = Number(v)
	}
	if unit == "" {
		return s
	}
	return s + " " + Unit(v, unit)
}

// ReadableOpt is Readable of an optional figure, a dash for nil.
func ReadableOpt(v *float64, unit string) string {
	if v == nil {
		return Dash
	}
	return Readable(*v, unit)
}

// SignedReadable is Readable with a sign for a difference ("+1.2 s", "-0.37 GPU-h").
func SignedReadable(v float64, unit string) string {
	if unit == sim.UnitShare { // a change of a share is in percentage points
		v, unit = v*100, "points"
	}
	s := Readable(v, unit)
	if v > 0 && s != Dash {
		s = "+" + s
	}
	return s
}

// Cost writes an amount of money with its currency: a symbol before ("$1 234.50", "€2.50"),
// a code after ("2.50 EUR"), nothing when no currency is set ("2.50").
func Cost(v float64, currency string) string {
	m := Money(v)
	switch {
	case currency == "":
		return m
	case len([]rune(currency)) == 1:
		if strings.HasPrefix(m, "-") {
			return "-" + currency + m[1:]
		}
		return currency + m
	}
	return m + " " + currency
}

// Setting writes a time setting given in ms (an interval, a window, a grace period) exactly, in
// the largest unit it reads as without losing a digit: "15 min" for 900,000 ms, "1.5 h",
// "30 s", "2 ms", "0.05 ms". Unlike Duration it never rounds (an input is shown as entered, just
// in a readable unit); a value with more than three decimals in every larger unit stays in ms.
func Setting(ms float64) string {
	if math.IsNaN(ms) || math.IsInf(ms, 0) {
		return Dash
	}
	if ms == 0 {
		return "0 s"
	}
	for _, u := range []struct {
		ms   float64
		name string
	}{{3_600_000, "h"}, {60_000, "min"}, {1000, "s"}} {
		v := ms / u.ms
		if math.Abs(v) < 1 {
			continue
		}
		if r := math.Round(v * 1000); math.Abs(r-v*1000) < 1e-6*math.Max(1, math.Abs(r)) {
			return Number(r/1000) + " " + u.name
		}
	}
	return Number(ms) + " ms"
}

// ClockTime writes an RFC 3339 instant readably, in UTC: "2026-12-03 00:00 UTC" (seconds only
// when it has some). Text that is not an instant is returned as it is.
func ClockTime(s string) string {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return s
	}
	t = t.UTC()
	if t.Second() != 0 || t.Nanosecond() != 0 {
		return t.Format("2006-01-02 15:04:05 UTC")
	}
	return t.Format("2006-01-02 15:04 UTC")
}
