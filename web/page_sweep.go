package web

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"strings"

	"github.com/go-chi/chi/v5"
	"github.com/scalein-planner/scalein/runs"
	"github.com/scalein-planner/scalein/sim"
	"github.com/scalein-planner/scalein/sim/whatif"
	"github.com/scalein-planner/scalein/store"
	"github.com/scalein-planner/scalein/templates"
	"github.com/scalein-planner/scalein/web/format"
)

// sweepTableKeys are the headline figures the sweep table shows.
var sweepTableKeys = []string{sim.HeadlineLatestRemovalMS, sim.HeadlineTotalPinWaitMS, sim.HeadlineTTFTP99MS, sim.HeadlineRequestsKilled, sim.HeadlineWorkerSeconds}

// maxFormAxes is how many axis rows the sweep form offers (the API's limit).
const maxFormAxes = whatif.MaxAxes

// maxRangeValues bounds the values a start/stop/step range expands to.
const maxRangeValues = 1000

// handleSweep is GET /sweeps/{id}. The page is cached per sweep version (store.SweepVersion),
// checked on every request: a running sweep's page changes only when a point does.
func (s *Server) handleSweep(w http.ResponseWriter, r *http.Request) error {
	id := chi.URLParam(r, "id")
	return s.servePage(w, r, "/sweeps/"+id, func(ctx context.Context, _ *cachedPage) (string, error) {
		return s.store.SweepVersion(ctx, id)
	}, func(ctx context.Context) (builtPage, error) {
		return s.buildSweepPage(ctx, id)
	})
}

// buildSweepPage builds the page of sweep id for the cache.
func (s *Server) buildSweepPage(ctx context.Context, id string) (builtPage, error) {
	// Read before the page is built: a point that changes meanwhile gives a newer version.
	gen, checked := s.pages.gen.Load(), s.now()
	version, err := s.store.SweepVersion(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return builtPage{}, notFound("no sweep has this id; check the link")
	}
	if err != nil {
		return builtPage{}, err
	}
	sw, err := s.loadSweep(ctx, id)
	if err != nil {
		return builtPage{}, err
	}
	labels := map[string]string{}
	var figures []templates.Option
	outcomes := sim.Headline(nil)
	if sweepsAutoscaler(sw.Axes) {
		// GPU-hours and the fleet's figures, which the runs of an autoscaler store beside the
		// headline: lines of GPU-hours against the target, one line per window.
		outcomes = append(outcomes, sim.AutoscalerFigures(nil)...)
	}
	for _, f := range outcomes {
		labels[f.Key] = f.Label + " (" + f.Unit + ")"
		figures = append(figures, templates.Option{Value: f.Key, Label: labels[f.Key], Selected: f.Key == sim.HeadlineLatestRemovalMS})
	}
	p := templates.SweepPage{Page: s.pageOwnedBy(ctx, "Sweep: "+sw.Name, "runs", store.OwnedSweep, sw.ID), ID: sw.ID, Name: sw.Name, Status: sw.Status,
		Done: sw.Done, Total: len(sw.Points), Final: runs.IsFinal(sw.Status), APIURL: "/api/v1/sweeps/" + sw.ID, CSVURL: sw.CSVURL,
		Figures: figures, ColumnKeys: strings.Join(sweepTableKeys, ",")}
	p.Page.Charts = true
	if !p.Final {
		p.Page.RefreshSeconds = 3
	}
	for _, k := range sweepTableKeys {
		p.Columns = append(p.Columns, labels[k])
	}
	for i, ax := range sw.Axes {
		vals := make([]string, len(ax.Values))
		numeric := true
		for j, v := range ax.Values {
			vals[j] = whatif.ValueText(v)
			if _, ok := v.(json.Number); !ok {
				numeric = false
			}
		}
		_ = i
		p.Axes = append(p.Axes, templates.SweepAxisView{Path: ax.Path, Numeric: numeric, Values: strings.Join(vals, ", ")})
	}
	for _, pt := range sw.Points {
		row := templates.SweepPointRow{RunID: pt.RunID, Status: pt.Status}
		for _, v := range pt.Values {
			row.Values = append(row.Values, whatif.ValueText(v))
		}
		var figs []sim.Figure
		if len(pt.Headline) > 0 {
			_ = json.Unmarshal(pt.Headline, &figs)
		}
		for _, k := range sweepTableKeys {
			row.Figures = append(row.Figures, format.WithUnit(sim.FigureValue(figs, k), ""))
		}
		p.Rows = append(p.Rows, row)
	}
	b, err := cachedPageOf(ctx, version, gen, checked, nil, templates.SweepView(p))
	if b.page != nil {
		b.page.recheck = 0 // checked on every request
	}
	return b, err
}

// handleCancelSweep is POST /sweeps/{id}/cancel.
func (s *Server) handleCancelSweep(w http.ResponseWriter, r *http.Request) error {
	id := chi.URLParam(r, "id")
	if err := s.cancelSweep(r.Context(), id); err != nil {
		return err
	}
	http.Redirect(w, r, "/sweeps/"+id, http.StatusSeeOther)
	return nil
}

// handleNewSweep is GET and POST /sweeps/new.
func (s *Server) handleNewSweep(w http.ResponseWriter, r *http.Request) error {
	p, err := s.whatIfFormPage(r, "sweep")
	if err != nil {
		return err
	}
	return s.render(w, r, http.StatusOK, templates.WhatIfNewView(p))
}

// formAxes reads the sweep form's axis rows: a list of values, or start, stop and step.
func formAxes(r *http.Request) ([]whatif.Axis, []string) {
	var axes []whatif.Axis
	var errs []string
	for i := range maxFormAxes {
		name := "axis" + strconv.Itoa(i)
		path := strings.TrimSpace(r.PostForm.Get(name + ".path"))
		list := strings.TrimSpace(r.PostForm.Get(name + ".values"))
		start, stop, step := r.PostForm.Get(name+".start"), r.PostForm.Get(name+".stop"), r.PostForm.Get(name+".step")
		if path == "" {
			continue
		}
		ax := whatif.Axis{Path: path}
		switch {
		case list != "":
			for _, tok := range strings.Split(list, ",") {
				ax.Values = append(ax.Values, whatif.ParseValue(strings.TrimSpace(tok)))
			}
		case start != "" || stop != "" || step != "":
			vals, err := valueRange(start, stop, step)
			if err != "" {
				errs = append(errs, fmt.Sprintf("field %d (%s): %s", i+1, path, err))
				continue
			}
			ax.Values = vals
		default:
			errs = append(errs, fmt.Sprintf("field %d (%s): give a list of values, or a start, stop and step", i+1, path))
			continue
		}
		axes = append(axes, ax)
	}
	return axes, errs
}

// valueRange expands start, stop, step into numbers (stop included when the steps land on it).
// Every bound is checked before the loop: the numbers must be finite, and each step must move
// the value (at 1e300 a step of 1 does not), so the loop ends after at most maxRangeValues.
func valueRange(start, stop, step string) ([]any, string) {
	a, err1 := strconv.ParseFloat(strings.TrimSpace(start), 64)
	b, err2 := strconv.ParseFloat(strings.TrimSpace(stop), 64)
	d, err3 := strconv.ParseFloat(strings.TrimSpace(step), 64)
	finite := func(v float64) bool { return !math.IsInf(v, 0) && !math.IsNaN(v) }
	switch {
	case err1 != nil && !errors.Is(err1, strconv.ErrRange), err2 != nil && !errors.Is(err2, strconv.ErrRange),
		err3 != nil && !errors.Is(err3, strconv.ErrRange):
		return nil, "start, stop and step must all be numbers"
	case !finite(a) || !finite(b) || !finite(d):
		return nil, "start, stop and step must be finite numbers (not NaN, Inf or beyond ±1.8e308)"
	case d <= 0:
		return nil, "step must be a positive number"
	case b < a:
		return nil, "stop must not be below start"
	case (b-a)/d+1 > maxRangeValues:
		return nil, fmt.Sprintf("the range gives more than %d values; use a larger step", maxRangeValues)
	case a != b && (a+d == a || b-d == b):
		return nil, "the step is too small for numbers this large: each step must change the value; use a larger step"
	}
	var out []any
	for k := 0; k < maxRangeValues; k++ {
		v := a + float64(k)*d
		if v > b+d*1e-9 {
			break
		}
		if r := math.Round(v*1e9) / 1e9; finite(r) { // 0.1 + 0.2 is 0.3 here
			v = r
		}
		out = append(out, json.Number(strconv.FormatFloat(v, 'f', -1, 64)))
		if a == b {
			break
		}
	}
	return out, ""
}

// handleCreateSweep is POST /sweeps (the sweep form): it starts the sweep and shows it, or
// shows the form again with every problem.
func (s *Server) handleCreateSweep(w http.ResponseWriter, r *http.Request) error {
	if err := r.ParseForm(); err != nil {
		return badRequest("the form could not be read: " + err.Error())
	}
	axes, errs := formAxes(r)
	scenario := r.PostForm.Get("scenario")
	if len(errs) == 0 {
		id, _, _, err := s.createSweep(r.Context(), sweepRequest{Scenario: json.RawMessage(scenario), Axes: axes})
		if err == nil {
			http.Redirect(w, r, "/sweeps/"+id, http.StatusSeeOther)
			return nil
		}
		msgs, ok := problemMessages(err)
		if !ok {
			return err
		}
		errs = msgs
	}
	p, _ := s.whatIfFormPage(&http.Request{Method: http.MethodGet, URL: r.URL}, "sweep")
	p.Errors, p.Scenario, p.Notice = errs, scenario, ""
	for i := range maxFormAxes {
		name := "axis" + strconv.Itoa(i)
		p.AxisPaths[i], p.AxisLists[i] = r.PostForm.Get(name+".path"), r.PostForm.Get(name+".values")
		p.AxisStarts[i], p.AxisStops[i], p.AxisSteps[i] = r.PostForm.Get(name+".start"), r.PostForm.Get(name+".stop"), r.PostForm.Get(name+".step")
	}
	return s.render(w, r, http.StatusBadRequest, templates.WhatIfNewView(p))
}

// sweepsAutoscaler says whether a sweep varies an autoscaler field (its runs have one).
func sweepsAutoscaler(axes []whatif.Axis) bool {
	for _, ax := range axes {
		if strings.HasPrefix(ax.Path, "autoscaler.") {
			return true
		}
	}
	return false
}
