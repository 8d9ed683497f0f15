package web

import (
	"github.com/scalein-planner/scalein/sim"
	"github.com/scalein-planner/scalein/templates"
	"github.com/scalein-planner/scalein/web/format"
)

// figureCells formats headline figures for the pages: readable (format.CardValue), the exact
// value kept for the cell's title.
func figureCells(figs []sim.Figure) []templates.FigureCell {
	out := make([]templates.FigureCell, len(figs))
	for i, f := range figs {
		shown, exact := format.CardValue(f.Value, f.Unit)
		out[i] = templates.FigureCell{Key: f.Key, Label: f.Label, Value: shown, Exact: exact}
		if f.Key == sim.HeadlinePullsPartial {
			out[i].Label += " (" + partialShort + ")"
		}
	}
	return out
}
