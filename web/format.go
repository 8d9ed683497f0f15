package web

import (
	"fmt"
	"math"
	"time"

	"github.com/scalein-planner/scalein/sim"
	"github.com/scalein-planner/scalein/templates"
)

// dash stands for a value that does not apply (a worker that was never drained, an empty
// distribution).
const dash = "—"

// formatNumber prints a value as everywhere else: sim.FormatNumber.
func formatNumber(v float64) string { return sim.FormatNumber(v) }

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
		if f.Key == "pulls_partial" {
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
