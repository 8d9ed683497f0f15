package web

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"strings"

	"github.com/go-chi/chi/v5"
	"github.com/scalein-planner/scalein/runs"
	"github.com/scalein-planner/scalein/sim"
	"github.com/scalein-planner/scalein/sim/whatif"
	"github.com/scalein-planner/scalein/store"
	"github.com/scalein-planner/scalein/templates"
	"github.com/scalein-planner/scalein/web/form"
	"github.com/scalein-planner/scalein/web/format"
)

// sweepTableKeys are the headline figures the sweep table shows.
var sweepTableKeys = []string{sim.HeadlineLatestRemovalMS, sim.HeadlineTotalPinWaitMS, sim.HeadlineTTFTP99MS, sim.HeadlineRequestsKilled, sim.HeadlineWorkerSeconds}

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
	sw, err := s.runs.Sweep(ctx, id)
	if err != nil {
		return builtPage{}, err
	}
	labels, names := map[string]string{}, map[string]string{}
	var figures []templates.Option
	outcomes := sim.Headline(nil)
	if sweepsAutoscaler(sw.Axes) {
		// GPU-hours and the fleet's figures, which the runs of an autoscaler store beside the
		// headline: lines of GPU-hours against the target, one line per window.
		outcomes = append(outcomes, sim.AutoscalerFigures(nil)...)
	}
	for _, f := range outcomes {
		labels[f.Key] = f.Label + " (" + f.Unit + ")"
		names[f.Key] = f.Label // the table's cells carry their units
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
		p.Columns = append(p.Columns, names[k])
	}
	for _, ax := range sw.Axes {
		vals := make([]string, len(ax.Values))
		numeric := true
		for j, v := range ax.Values {
			vals[j] = whatif.ValueText(v)
			if _, ok := v.(json.Number); !ok {
				numeric = false
			}
		}
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
			// Readable like every other figure (whatif.js' readable() writes the same while the
			// sweep runs), the exact value in the cell's title.
			shown, exact := format.CardValue(sim.FigureValue(figs, k), figureUnit(figs, outcomes, k))
			row.Figures = append(row.Figures, templates.FigureCell{Key: k, Value: shown, Exact: exact})
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
	if err := s.runs.CancelSweep(r.Context(), id); err != nil {
		return err
	}
	http.Redirect(w, r, "/sweeps/"+id, http.StatusSeeOther)
	return nil
}

// handleNewSweep is GET and POST /sweeps/new.
func (s *Server) handleNewSweep(w http.ResponseWriter, r *http.Request) error {
	p, err := s.sweepFormPage(r)
	if err != nil {
		return err
	}
	return s.render(w, r, http.StatusOK, templates.SweepNewView(p))
}

// handleCreateSweep is POST /sweeps (the sweep form): 303 to the sweep, or the sweep form
// again (400) with every problem beside its field.
func (s *Server) handleCreateSweep(w http.ResponseWriter, r *http.Request) error {
	v, err := postedForm(r)
	if err != nil {
		return err
	}
	f := form.SweepFromValues(v)
	done, errs, err := submitJob(w, r, "sweep", f, s.createSweep)
	if done || err != nil {
		return err
	}
	p, _ := s.sweepFormPage(&http.Request{Method: http.MethodGet, URL: &url.URL{Path: r.URL.Path}})
	p.Notice = ""
	f.Fill(&p, errs)
	return s.render(w, r, http.StatusBadRequest, templates.SweepNewView(p))
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

// handleSweepCSV is GET /sweeps/{id}/sweep.csv.
func (s *Server) handleSweepCSV(w http.ResponseWriter, r *http.Request) error {
	sw, err := s.runs.Sweep(r.Context(), chi.URLParam(r, "id"))
	if err != nil {
		return err
	}
	points := make([]whatif.PointResult, len(sw.Points))
	for i, p := range sw.Points {
		points[i] = whatif.PointResult{Values: p.Values, RunID: p.RunID, Status: p.Status}
		if len(p.Headline) > 0 {
			_ = json.Unmarshal(p.Headline, &points[i].Headline)
		}
	}
	var buf bytes.Buffer
	if err := whatif.WriteCSV(&buf, sw.Axes, points); err != nil {
		return err
	}
	w.Header().Set("Content-Type", "text/csv; charset=utf-8")
	w.Header().Set("Content-Disposition", `attachment; filename="sweep-`+sw.ID+`.csv"`)
	_, _ = w.Write(buf.Bytes())
	return nil
}

// figureUnit is the unit of the figure keyed key: the point's own, else the one the page's
// outcome list gives it (a point not yet run has no figures).
func figureUnit(figs, outcomes []sim.Figure, key string) string {
	for _, list := range [][]sim.Figure{figs, outcomes} {
		for _, f := range list {
			if f.Key == key {
				return f.Unit
			}
		}
	}
	return ""
}
