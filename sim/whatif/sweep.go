package whatif

import (
	"context"
	"encoding/csv"
	"io"

	"github.com/scalein-planner/scalein/sim"
)

// SweepResult is a finished sweep: the axes and one entry per point in row-major order.
type SweepResult struct {
	Axes   []Axis        `json:"axes"`
	Points []PointResult `json:"points"`
}

// PointResult is one point's values and its run's outcome.
type PointResult struct {
	Values     []any        `json:"values"`
	ScenarioID string       `json:"scenario_id"`
	RunID      string       `json:"run_id,omitempty"`
	Status     string       `json:"status"`
	Error      string       `json:"error,omitempty"`
	Digest     string       `json:"digest,omitempty"`
	Headline   []sim.Figure `json:"headline"`
}

// RunSweep simulates every point through the runner (in one batch, so a parallel runner keeps
// every slot busy) and returns the results in the points' order.
func RunSweep(ctx context.Context, r Runner, axes []Axis, points []Point) (*SweepResult, error) {
	scenarios := make([]*sim.Scenario, len(points))
	for i, p := range points {
		scenarios[i] = p.Scenario
	}
	outs, err := r.Run(ctx, scenarios)
	if err != nil {
		return nil, err
	}
	res := &SweepResult{Axes: axes, Points: make([]PointResult, len(points))}
	for i, p := range points {
		o := outs[i]
		res.Points[i] = PointResult{Values: p.Values, ScenarioID: o.ScenarioID, RunID: o.RunID,
			Status: o.Status, Error: o.Error, Digest: o.Digest, Headline: o.Headline}
	}
	return res, nil
}

// HeadlineKeys are the keys of the headline figures, in display order.
func HeadlineKeys() []string {
	figs := sim.Headline(nil)
	keys := make([]string, len(figs))
	for i, f := range figs {
		keys[i] = f.Key
	}
	return keys
}

// WriteCSV writes one column per axis (headed by its path), then run_id, status and one column
// per headline key; one row per point. A figure without a value is an empty cell.
func WriteCSV(w io.Writer, axes []Axis, points []PointResult) error {
	cw := csv.NewWriter(w)
	keys := HeadlineKeys()
	header := make([]string, 0, len(axes)+2+len(keys))
	for _, ax := range axes {
		header = append(header, ax.Path)
	}
	header = append(header, "run_id", "status")
	header = append(header, keys...)
	if err := cw.Write(header); err != nil {
		return err
	}
	for _, p := range points {
		row := make([]string, 0, len(header))
		for _, v := range p.Values {
			row = append(row, ValueText(v))
		}
		row = append(row, p.RunID, p.Status)
		for _, k := range keys {
			cell := ""
			if v := figure(p.Headline, k); v != nil {
				cell = formatFloat(*v)
			}
			row = append(row, cell)
		}
		if err := cw.Write(row); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}
