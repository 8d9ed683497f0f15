package web

import (
	"github.com/scalein-planner/scalein/sim"
	"github.com/scalein-planner/scalein/templates"
)

// runCharts builds the charts of one run's page (SPEC §5).
func runCharts(rep *sim.Report) []templates.Chart {
	return nil
}

// compareCharts builds the charts of the compare page: both runs on shared axes.
func compareCharts(a, b *sim.Report, labelA, labelB string) []templates.Chart {
	return nil
}
