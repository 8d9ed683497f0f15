package web

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/scalein-planner/scalein/runs"
	"github.com/scalein-planner/scalein/sim"
	"github.com/scalein-planner/scalein/store"
	"github.com/scalein-planner/scalein/templates"
	"github.com/scalein-planner/scalein/web/charts"
	"github.com/scalein-planner/scalein/web/form"
	"github.com/scalein-planner/scalein/web/format"
)

// handleRun is GET /runs/{id}, the permalink.
func (s *Server) handleRun(w http.ResponseWriter, r *http.Request) error {
	id := chi.URLParam(r, "id")
	u := normalPageURL(r.URL, runPageParams()...)
	return s.servePage(w, r, pageKeyOf(u), func(ctx context.Context, c *cachedPage) (string, error) {
		return s.pageVersion(ctx, id, c.counterparts)
	}, func(ctx context.Context) (builtPage, error) {
		return s.buildRunPage(ctx, u, id)
	})
}

// buildRunPage builds the page of run id: for a finished run the page to cache, else the view
// to render per request. u is the request's URL with its query in normal form
// (normalPageURL), which is also the page's cache key.
func (s *Server) buildRunPage(ctx context.Context, u *url.URL, id string) (builtPage, error) {
	q := u.Query()
	run, err := s.store.GetRun(ctx, id)
	if err != nil {
		return builtPage{}, err
	}
	p := templates.RunPage{
		Page:     s.pageOwnedBy(ctx, run.Name, "runs", store.OwnedRun, run.ID),
		ID:       run.ID,
		Name:     run.Name,
		Error:    run.Error,
		Created:  format.Time(run.CreatedAt),
		Started:  format.Time(run.StartedAt),
		Finished: format.Time(run.FinishedAt),
		Attempts: run.Attempts,
	}
	p.Status, p.Progress = s.liveStatus(run)
	if !runs.IsFinal(run.Status) {
		p.Page.RefreshSeconds = 2
	}
	sc, scErr := scenarioOf(run.ScenarioJSON)
	var counterparts []string
	if scErr == nil {
		p.FleetWarning = sim.FleetOutsideBounds(sc)
		if key := q.Get("origin"); store.IsOriginKey(key) && sc.Autoscaler != nil {
			p.OriginKey = key
		}
		p.Scenario = form.ScenarioInputs(sc)
		counterparts = counterpartIDs(sc)
	}
	// Read before the page is built: a pair or comparison added meanwhile gives a newer version
	// and the next request renders again.
	gen, checked := s.pages.gen.Load(), s.now()
	version, err := s.pageVersion(ctx, id, counterparts)
	if err != nil {
		return builtPage{}, err
	}
	related, err := s.relatedRuns(ctx, run.ID, sc)
	if err != nil {
		return builtPage{}, err
	}
	p.Related = related
	if run.Status == store.StatusDone {
		sum, err := s.runs.LoadSummary(ctx, run)
		if err != nil {
			return builtPage{}, err
		}
		rep := &sum.Report
		p.Page.Charts = true
		p.Figures = figureCells(headlineOf(run, rep))
		clock := format.Clock{}
		if scErr == nil {
			clock = format.ClockAt(sc.StartTime())
		}
		p.Cards = runCards(rep, clock)
		p.Verdicts = runVerdicts(rep, scErr == nil && sc.KVCR.RejectDrainingSources)
		all := charts.OfSummary(sum)
		att, hasAtt := charts.AttainmentOverTime(rep)
		if scErr == nil {
			ideal := s.idealFleet(ctx, run.ID)
			var idealSeries *sim.Timeseries
			if ideal.RunID != "" {
				idealSeries = s.runTimeseries(ctx, ideal.RunID)
			}
			if fleet, ok := charts.Fleet(rep, sc.Autoscaler, idealSeries); ok {
				if idealSeries != nil {
					p.Ideal = ideal
				}
				// An autoscaler run leads with the night at a glance (its SLO among them, not
				// under the drains), its fleet chart and attainment.
				price, _, _ := s.pagePrice(&http.Request{URL: u})
				p.Glance = append(glanceCards(rep, sc.Autoscaler, price, s.cfg.Currency), sloCards(rep)...)
				p.Cards = p.Cards[len(sloCards(rep)):]
				p.FleetChart = charts.BoundTables([]templates.Chart{fleet})
				if hasAtt {
					p.AttainmentChart = charts.BoundTables([]templates.Chart{att})
					hasAtt = false
				}
			} else if sc.PoolAutoscalers != nil && sc.Disaggregation != nil && rep.Summary.Disaggregation != nil {
				// Autoscaled pools lead the same way: each pool at a glance, both pools over time
				// (the pools chart, moved up from the pools section), their verdicts and attainment.
				if pc, ok := charts.PoolFleet(rep); ok {
					price, _, _ := s.pagePrice(&http.Request{URL: u})
					p.Glance = append(poolGlanceCards(rep, sc.PoolAutoscalers, sc.Disaggregation, price, s.cfg.Currency), sloCards(rep)...)
					p.Cards = p.Cards[len(sloCards(rep)):]
					p.FleetChart = charts.BoundTables([]templates.Chart{pc})
					if hasAtt {
						p.AttainmentChart = charts.BoundTables([]templates.Chart{att})
						hasAtt = false
					}
				}
			}
		}
		if hasAtt {
			all = append(all, att)
		}
		p.Charts = charts.BoundTables(all)
		p.Cost = s.costView(&http.Request{URL: u}, []string{"workers", "wpage", "decisions", "dpage"}, rep, nil)
		p.LargeDrain = charts.IsLargeDrain(rep)
		p.AllWorkers = q.Get("workers") == "all"
		p.Workers, p.DrainedCount = workersTable(rep, p.AllWorkers, clock)
		p.Workers.Rows, p.WorkersPager = paginateRows(p.Workers.Rows, q, "/runs/"+run.ID)
		p.WorkerCount = len(rep.Workers)
		p.WorkersShown = workersShown(p.WorkersPager, p.AllWorkers, p.DrainedCount, p.WorkerCount)
		p.ScaleIn = scaleInTable(rep, clock)
		p.Summary = summaryTable(rep)
		var a *sim.Autoscaler
		var pools *sim.PoolAutoscalers
		var d *sim.Disaggregation
		if scErr == nil {
			a, pools, d = sc.Autoscaler, sc.PoolAutoscalers, sc.Disaggregation
		}
		p.Autoscaler = autoscalerView(rep, a, pools, d, q, "/runs/"+run.ID, clock)
		p.PoolAutoscaled = scErr == nil && sc.PoolAutoscalers != nil
		if rep.Summary.Disaggregation != nil {
			var full *sim.Report
			if scErr == nil && sc.Report.PerRequest {
				// The stored summary drops the request rows the TTFT split reads.
				if full, err = s.runs.LoadReport(ctx, run.ID); err != nil {
					return builtPage{}, err
				}
			}
			p.Pools = poolsView(rep, full, d, clock)
			if p.Pools != nil && len(p.Glance) > 0 {
				p.Pools.Chart = nil // it leads the page
			}
			// The drain verdicts speak of peers pulling from a drained worker (KVCR); with pools
			// the pool verdicts say what a drain waited for.
			p.Cards = poolDrainCards(p.Cards)
			p.Verdicts = slices.DeleteFunc(p.Verdicts, func(v string) bool { return strings.Contains(v, "pull") })
		}
		var poolCharts []templates.Chart
		if p.Pools != nil {
			poolCharts = p.Pools.Chart
		}
		for _, cs := range [][]templates.Chart{p.FleetChart, p.AttainmentChart, p.Charts, poolCharts} {
			onClock(cs, clock)
		}
		return cachedPageOf(ctx, version, gen, checked, counterparts, templates.RunView(p))
	}
	return builtPage{view: templates.RunView(p)}, nil
}

// runPageKey names a run page in the page cache by its path and the meaning of the query
// parameters it reads (normalPageQuery).
func runPageKey(r *http.Request) string {
	return pageKeyOf(normalPageURL(r.URL, runPageParams()...))
}

// progressOf prefers the live progress of a run this process is running.
func (s *Server) progressOf(run store.Run) float64 {
	_, p := s.liveStatus(run)
	return p
}

// liveStatus is the run's status and progress as the badge and the bar show them: the live
// ones of a run this process is running (the stored row may still say queued), so the two agree.
func (s *Server) liveStatus(run store.Run) (status string, progress float64) {
	if w, ok := s.runs.Progress(run.ID); ok && w.Status == store.StatusRunning && !runs.IsFinal(run.Status) {
		return store.StatusRunning, w.Fraction
	}
	return run.Status, run.Progress
}

// headlineOf reads the headline stored with the run, so a page shows what was computed when the
// run finished; it falls back to computing it from the report.
func headlineOf(run store.Run, rep *sim.Report) []sim.Figure {
	var figs []sim.Figure
	if len(run.HeadlineJSON) > 0 && json.Unmarshal(run.HeadlineJSON, &figs) == nil && len(figs) > 0 {
		return figs
	}
	return sim.Headline(rep)
}

// workersPerPage bounds the per-worker table of one page (a large drain has hundreds).
const workersPerPage = 25

// paginateRows cuts rows to the page ?wpage= asks for (1-based) and builds the pager, whose
// links keep the other query parameters.
func paginateRows(rows [][]string, q url.Values, path string) ([][]string, templates.Pager) {
	return paginateBy(rows, q, path, "wpage", "workers", workersPerPage)
}

// shownRows says which rows of a paged table a page shows: "decisions 1–100 of 5 760" when it
// has more than one page (what names the rows, of the subset they belong to), "" otherwise.
func shownRows(pg templates.Pager, what string) string {
	if pg.Pages <= 1 || pg.Rows == 0 {
		return ""
	}
	return fmt.Sprintf("%s %s–%s of %s", what, format.Number(float64(pg.From)), format.Number(float64(pg.To)), format.Number(float64(pg.Rows)))
}

// workersShown is the sentence above the per-worker table: which workers it lists, and which
// of them this page shows.
func workersShown(pg templates.Pager, all bool, drained, workers int) string {
	n := func(v int) string { return format.Number(float64(v)) }
	switch rows := shownRows(pg, "workers"); {
	case all && rows != "":
		return "Showing " + rows + "."
	case all:
		return "Showing all " + n(workers) + " workers."
	case rows != "":
		return fmt.Sprintf("Showing drained %s (%s workers in all).", rows, n(workers))
	}
	return fmt.Sprintf("Showing the %s drained of %s workers.", n(drained), n(workers))
}

// paginateBy is paginateRows for any table: param is its page parameter, anchor its section.
func paginateBy(rows [][]string, q url.Values, path, param, anchor string, perPage int) ([][]string, templates.Pager) {
	pages := max(1, (len(rows)+perPage-1)/perPage)
	n, err := strconv.Atoi(q.Get(param))
	if err != nil || n < 1 {
		n = 1
	}
	n = min(n, pages)
	pg := templates.Pager{Page: n, Pages: pages}
	link := func(page int) string {
		v := url.Values{}
		for k, vs := range q {
			if k != param {
				v[k] = vs
			}
		}
		if page > 1 {
			v.Set(param, strconv.Itoa(page))
		}
		if len(v) == 0 {
			return path + "#" + anchor
		}
		return path + "?" + v.Encode() + "#" + anchor
	}
	if n > 1 {
		pg.PrevURL = link(n - 1)
	}
	if n < pages {
		pg.NextURL = link(n + 1)
	}
	from := (n - 1) * perPage
	to := min(len(rows), from+perPage)
	pg.From, pg.To, pg.Rows = from+1, to, len(rows)
	pg.Label = fmt.Sprintf("Rows %s–%s of %s", format.Number(float64(from+1)), format.Number(float64(to)), format.Number(float64(len(rows))))
	if len(rows) == 0 {
		pg.Label = ""
	}
	return rows[from:to], pg
}

// workersTable lists drained workers (or all): instants as the run's clock reads them (the
// time of day of a Prometheus load, else from the start), durations with their unit.
func workersTable(rep *sim.Report, all bool, clock format.Clock) (templates.DataTable, int) {
	when := "instants from the start of the run"
	if clock.Known {
		when = "instants in UTC clock time"
	}
	t := templates.DataTable{
		Caption: "Per-worker lifecycle: " + when + ", drain and pin wait as durations; requests completed and killed; pulls served to peers and received from them (workers.csv has every time in ms)",
		Columns: []templates.Column{
			{Label: "Worker"}, {Label: "State"},
			{Label: "Marked", Num: true}, {Label: "Own work ended", Num: true},
			{Label: "Removed", Num: true}, {Label: "Drain", Num: true},
			{Label: "Pin wait", Num: true}, {Label: "Grace deadline", Num: true},
			{Label: "Forced"}, {Label: "Completed", Num: true}, {Label: "Killed", Num: true},
			{Label: "Pulls served", Num: true}, {Label: "Pulls received", Num: true},
		},
	}
	pools := rep.Summary.Disaggregation != nil
	if pools {
		// With prefill and decode pools (docs/model.md#model-5) no KVCR pull is made: the pull
		// columns give way to each worker's role and the blocks its handoffs held.
		t.Caption = "Per-worker lifecycle: " + when + ", drain and pin wait (a prefill worker's wait for decode workers to read its handoffs) as durations; requests completed and killed; the block-seconds held for handoffs, in all and while draining (prefill workers only; workers.csv has every time in ms)"
		t.Columns = append(append([]templates.Column{{Label: "Worker"}, {Label: "Role"}}, t.Columns[1:11]...),
			templates.Column{Label: "Held (block-s)", Num: true}, templates.Column{Label: "Held while draining (block-s)", Num: true})
	}
	drained := 0
	for _, wr := range rep.Workers {
		if wr.MarkedAtMS != nil {
			drained++
		} else if !all {
			continue
		}
		forced := "no"
		if wr.Forced {
			forced = "yes"
		}
		life := []string{wr.FinalState,
			clock.AtOpt(wr.MarkedAtMS), clock.AtOpt(wr.LastWorkMS), clock.AtOpt(wr.RemovedAtMS), format.DurationOpt(wr.DrainMS),
			format.DurationOpt(wr.PinWaitMS), clock.AtOpt(wr.GraceDeadlineMS), forced,
			format.Number(float64(wr.RequestsCompleted)), format.Number(float64(wr.RequestsKilled))}
		if pools {
			held := func(o *sim.OptNumber) string {
				if v, ok := reportNumber(o); ok {
					return format.Number(v)
				}
				return format.Dash
			}
			t.Rows = append(t.Rows, append(append([]string{strconv.Itoa(wr.ID), wr.Role}, life...),
				held(wr.HeldBlockSeconds), held(wr.HeldBlockSecondsDraining)))
			continue
		}
		t.Rows = append(t.Rows, append(append([]string{strconv.Itoa(wr.ID)}, life...),
			format.Number(float64(wr.PullsServed)), format.Number(float64(wr.PullsReceived))))
	}
	return t, drained
}

func scaleInTable(rep *sim.Report, clock format.Clock) templates.DataTable {
	t := templates.DataTable{
		Caption: "Scale-in actions in scenario order",
		Columns: []templates.Column{{Label: "Action"}, {Label: clock.Column("At"), Num: true}, {Label: "Drained (worker ids)"}, {Label: "Skipped (no longer active)"}},
	}
	for i, a := range rep.ScaleIn {
		t.Rows = append(t.Rows, []string{strconv.Itoa(i + 1), clock.At(a.AtMS), format.IDs(a.Drained), format.IDs(a.Skipped)})
	}
	return t
}

func summaryTable(rep *sim.Report) templates.DataTable {
	t := templates.DataTable{Columns: []templates.Column{{Label: "Figure"}, {Label: "Value", Num: true}}}
	add := func(label, value string) { t.Rows = append(t.Rows, []string{label, value}) }
	count := format.Count
	sm := rep.Summary
	add("Requests", count(sm.Requests.Total, "requests"))
	add("Completed", count(sm.Requests.Completed, "requests"))
	add("Killed", count(sm.Requests.Killed, "requests"))
	for _, d := range []struct {
		name string
		dist sim.Distribution
	}{{"TTFT", sm.TTFTMS}, {"End-to-end latency", sm.E2EMS}} {
		add(d.name+" mean", format.ReadableOpt(d.dist.Mean, "ms"))
		add(d.name+" p50", format.ReadableOpt(d.dist.P50, "ms"))
		add(d.name+" p90", format.ReadableOpt(d.dist.P90, "ms"))
		add(d.name+" p99", format.ReadableOpt(d.dist.P99, "ms"))
		add(d.name+" max", format.ReadableOpt(d.dist.Max, "ms"))
	}
	tk := sm.Tokens
	add("Prompt tokens", count(tk.Prompt, "tokens"))
	add("Reused from GPU cache (G1)", count(tk.G1Reused, "tokens"))
	add("Reused from host cache (G2)", count(tk.G2Reused, "tokens"))
	add("Pulled by KVCR", count(tk.KVCRPulled, "tokens"))
	add("Recomputed", count(tk.Recomputed, "tokens"))
	add("Output tokens", count(tk.Output, "tokens"))
	add("Preemptions", count(sm.Preemptions, "preemptions"))
	add("Duration", format.Duration(sm.DurationMS))
	add("Worker-seconds", format.Readable(sm.WorkerSeconds, "worker-seconds"))
	k := rep.KVCR
	add("Hints", count(k.Hints, "hints"))
	add("Pulls staged", count(k.Staged, "pulls"))
	add("Pulls success", count(k.Success, "pulls"))
	add("Pulls partial ("+partialShort+")", count(k.Partial, "pulls"))
	add("Hints miss", count(k.Miss, "hints"))
	add("Hints not needed", count(k.NotNeeded, "hints"))
	add("Rejected: source draining", count(k.RejectedDraining, "hints"))
	add("Rejected: source removed", count(k.RejectedRemoved, "hints"))
	add("Staged from a draining source", count(k.StagedFromDraining, "pulls"))
	add("Pulls aborted", count(k.Aborted, "pulls"))
	add("Blocks pulled", count(k.Blocks, "blocks"))
	add("Bytes pulled", format.Bytes(float64(k.Bytes)))
	return t
}

func (s *Server) handleScenarioJSON(w http.ResponseWriter, r *http.Request) error {
	run, err := s.store.GetRun(r.Context(), chi.URLParam(r, "id"))
	if err != nil {
		return err
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Disposition", `inline; filename="`+run.ID+`-scenario.json"`)
	_, err = w.Write(run.ScenarioJSON)
	return err
}

// workersCSVHeader names the columns of workers.csv; times are ms, empty where they do not apply.
var workersCSVHeader = []string{"id", "final_state", "marked_at_ms", "last_work_ms", "removed_at_ms", "drain_ms",
	"pin_wait_ms", "grace_deadline_ms", "forced", "requests_completed", "requests_killed", "pulls_served", "pulls_received"}

func (s *Server) handleWorkersCSV(w http.ResponseWriter, r *http.Request) error {
	run, err := s.doneRun(r)
	if err != nil {
		return err
	}
	sum, err := s.runs.LoadSummary(r.Context(), run)
	if err != nil {
		return err
	}
	rep := &sum.Report
	var buf bytes.Buffer
	cw := csv.NewWriter(&buf)
	_ = cw.Write(workersCSVHeader)
	num := func(v *float64) string {
		if v == nil {
			return ""
		}
		return strconv.FormatFloat(*v, 'f', -1, 64)
	}
	for _, wr := range rep.Workers {
		_ = cw.Write([]string{strconv.Itoa(wr.ID), wr.FinalState, num(wr.MarkedAtMS), num(wr.LastWorkMS),
			num(wr.RemovedAtMS), num(wr.DrainMS), num(wr.PinWaitMS), num(wr.GraceDeadlineMS),
			strconv.FormatBool(wr.Forced), strconv.FormatInt(wr.RequestsCompleted, 10),
			strconv.FormatInt(wr.RequestsKilled, 10), strconv.FormatInt(wr.PullsServed, 10),
			strconv.FormatInt(wr.PullsReceived, 10)})
	}
	cw.Flush()
	if err := cw.Error(); err != nil {
		return err
	}
	w.Header().Set("Content-Type", "text/csv; charset=utf-8")
	w.Header().Set("Content-Disposition", `attachment; filename="`+run.ID+`-workers.csv"`)
	_, err = w.Write(buf.Bytes())
	return err
}

// doneRun loads a run whose report exists, or explains why there is none yet.
func (s *Server) doneRun(r *http.Request) (store.Run, error) {
	run, err := s.store.GetRun(r.Context(), chi.URLParam(r, "id"))
	if err != nil {
		return store.Run{}, err
	}
	if run.Status != store.StatusDone {
		return store.Run{}, &Error{Status: http.StatusConflict, Title: "No report yet",
			Message: fmt.Sprintf("run %s is %s, so it has no report; open /runs/%s to follow it", run.ID, run.Status, run.ID)}
	}
	return run, nil
}

// handleCancel is POST /runs/{id}/cancel (see cancelRun).
func (s *Server) handleCancel(w http.ResponseWriter, r *http.Request) error {
	id := chi.URLParam(r, "id")
	live, err := s.runs.CancelRun(r.Context(), id)
	if err != nil {
		return err
	}
	if live {
		s.waitFinal(r, id, 5*time.Second)
	}
	http.Redirect(w, r, "/runs/"+id, http.StatusSeeOther)
	return nil
}

// waitFinal waits (briefly) for a run this process held to end, so the redirect after a
// cancel shows the cancelled state rather than "running".
func (s *Server) waitFinal(r *http.Request, id string, limit time.Duration) {
	ctx, cancel := context.WithTimeout(r.Context(), limit)
	defer cancel()
	states, err := s.runs.Follow(ctx, id)
	if err != nil {
		return
	}
	for range states { // closes after the final state, or at the limit
	}
}

// onClock makes the time axes of a run's charts read in UTC clock time when the run has a start
// time (charts.js labels the axis from data-clock-start-ms; the data stay ms from the start).
func onClock(cs []templates.Chart, clock format.Clock) {
	if !clock.Known {
		return
	}
	for i := range cs {
		c := &cs[i]
		if !strings.Contains(c.OptionJSON, `"formatter":"clockMS"`) && !strings.Contains(c.OptionJSON, `"formatter":"secondsMS"`) {
			continue
		}
		c.ClockStartMS = strconv.FormatInt(clock.Start.UnixMilli(), 10)
		c.OptionJSON = strings.NewReplacer(`"time from the start (h:mm)"`, `"clock time (UTC, h:mm)"`,
			`"time from the start (s)"`, `"clock time (UTC)"`).Replace(c.OptionJSON)
	}
}

// idealFleet is the diagnose plan that found run id's ideal fleet and that fleet's run, as
// recorded when the plan finished (store.IdealFleetOf: one lookup by key, no plan read); empty
// when there is none or it cannot be read (the chart is then drawn without it).
func (s *Server) idealFleet(ctx context.Context, id string) templates.IdealFleetLink {
	f, err := s.store.IdealFleetOf(ctx, id)
	if err != nil {
		if !errors.Is(err, store.ErrNotFound) {
			s.log.Warn("a run's ideal fleet could not be read", "run", id, "err", err)
		}
		return templates.IdealFleetLink{}
	}
	return templates.IdealFleetLink{PlanID: f.PlanID, RunID: f.IdealRunID}
}
