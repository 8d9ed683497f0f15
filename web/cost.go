package web

import (
	"net/http"

	"github.com/scalein-planner/scalein/sim"
	"github.com/scalein-planner/scalein/templates"
	"github.com/scalein-planner/scalein/web/format"
)

// costView prices one run (b nil) or two (A and B, with B − A) at the page's price per
// GPU-hour: GPU-hours, the cost of the run, and of a day of the load it models.
func (s *Server) costView(r *http.Request, keep []string, a, b *sim.Report) templates.CostView {
	price, field, problem := s.pagePrice(r)
	c := templates.CostView{Action: r.URL.Path, Price: field, PriceError: problem}
	for _, k := range keep {
		if v := r.URL.Query().Get(k); v != "" {
			c.Keep = append(c.Keep, templates.Option{Value: k, Label: v})
		}
	}
	type figures struct{ hours, run, day float64 }
	of := func(rep *sim.Report) (figures, bool) {
		f := figures{hours: rep.Summary.GPUHours, run: rep.Summary.GPUHours * price}
		d, ok := perDay(f.run, rep.Summary.DurationMS)
		f.day = d
		return f, ok
	}
	fa, okA := of(a)
	money1 := func(v float64) string { return format.Cost(v, s.cfg.Currency) }
	money := func(v float64, ok bool) string {
		if !ok {
			return format.Dash
		}
		return format.Cost(v, s.cfg.Currency)
	}
	if b == nil {
		c.Table = templates.DataTable{Caption: "At " + format.Cost(price, s.cfg.Currency) + " per GPU-hour",
			Columns: []templates.Column{{Label: "Figure"}, {Label: "Value", Num: true}}}
		c.Table.Rows = [][]string{
			{"GPU-hours", format.GPUHours(fa.hours)},
			{"Cost of this run", money1(fa.run)},
			{"Cost of a day of this load", money(fa.day, okA)},
		}
		return c
	}
	fb, okB := of(b)
	c.Table = templates.DataTable{Caption: "At " + format.Cost(price, s.cfg.Currency) + " per GPU-hour",
		Columns: []templates.Column{{Label: "Figure"}, {Label: "A", Num: true}, {Label: "B", Num: true}, {Label: "B − A", Num: true}}}
	c.Table.Rows = [][]string{
		{"GPU-hours", format.GPUHours(fa.hours), format.GPUHours(fb.hours), format.SignedReadable(fb.hours-fa.hours, "GPU-h")},
		{"Cost of the run", money1(fa.run), money1(fb.run), money1(fb.run - fa.run)},
		{"Cost of a day of its load", money(fa.day, okA), money(fb.day, okB), money(fb.day-fa.day, okA && okB)},
	}
	return c
}
