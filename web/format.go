package web

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/scalein-planner/scalein/sim"
	"github.com/scalein-planner/scalein/templates"
)

// dash stands for a value that does not apply (a worker that was never drained, an empty
// distribution).
const dash = "—"

// formatNumber prints a value with at most six decimals: report times are whole nanoseconds in
// milliseconds, so six decimals print them exactly.
func formatNumber(v float64) string {
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

// withUnit prints a number and its unit, or a dash for nil.
func withUnit(v *float64, unit string) string {
	if v == nil {
		return dash
	}
	if unit == "" {
		return formatNumber(*v)
	}
	return formatNumber(*v) + " " + unitFor(*v, unit)
}

// cardDigits is how many significant digits a key-figure card shows: enough for every figure of
// the worked examples (86.554432 ms) while a large figure (229 613.415898 worker-seconds) still
// fits a phone-width card on one line. The exact value is the card's title and in the tables.
const cardDigits = 8

// cardValue prints a figure for a card, rounded to cardDigits significant digits (never fewer
// than the integer part, never more than six decimals), and the exact value when rounding
// changed it.
func cardValue(v *float64, unit string) (shown, exact string) {
	if v == nil {
		return dash, ""
	}
	full := withUnit(v, unit)
	decimals := 6
	if a := math.Abs(*v); a >= 1 {
		decimals = max(0, min(6, cardDigits-1-int(math.Floor(math.Log10(a)))))
	}
	r := math.Round(*v*math.Pow10(decimals)) / math.Pow10(decimals)
	shown = withUnit(&r, unit)
	if shown == full {
		return shown, ""
	}
	return shown, full
}

func ptr(v float64) *float64 { return &v }

// figureCells formats headline figures for the pages.
func figureCells(figs []sim.Figure) []templates.FigureCell {
	out := make([]templates.FigureCell, len(figs))
	for i, f := range figs {
		out[i] = templates.FigureCell{Key: f.Key, Label: f.Label, Value: withUnit(f.Value, f.Unit)}
		if f.Key == sim.HeadlinePullsPartial {
			out[i].Label += " (" + partialShort + ")"
		}
	}
	return out
}

func formatTime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format("2006-01-02 15:04:05 UTC")
}

func formatSigned(v float64, unit string) string {
	s := formatNumber(v)
	if v > 0 {
		s = "+" + s
	}
	if unit != "" {
		s += " " + unit
	}
	return s
}

func formatPct(v *float64) string {
	if v == nil {
		return dash
	}
	return fmt.Sprintf("%+.1f %%", *v)
}
