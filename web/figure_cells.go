package web

import (
	"github.com/scalein-planner/scalein/sim"
	"github.com/scalein-planner/scalein/templates"
	"github.com/scalein-planner/scalein/web/format"
)

// figureCells formats headline figures for the pages.
func figureCells(figs []sim.Figure) []templates.FigureCell {
	out := make([]templates.FigureCell, len(figs))
	for i, f := range figs {
		out[i] = templates.FigureCell{Key: f.Key, Label: f.Label, Value: format.WithUnit(f.Value, f.Unit)}
		if f.Key == sim.HeadlinePullsPartial {
			out[i].Label += " (" + partialShort + ")"
		}
	}
	return out
}
