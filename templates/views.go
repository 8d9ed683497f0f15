package templates

import "github.com/a-h/templ"

// The types here are view models: web turns sim and store values into display strings (every
// number already carries its unit), so templates stay free of domain logic and import only templ.

// Assets are the cache-busted URLs of the static files a page may load.
type Assets struct {
	CSS       string
	AppJS     string
	ChartsJS  string
	EChartsJS string
	WhatIfJS  string // sweep and plan pages
}

// Page is what the layout needs to know about any page.
type Page struct {
	Title string
	// Nav is the current section: "new", "runs" or "traces" (highlighted in the header).
	Nav    string
	Assets Assets
	// Charts loads echarts and charts.js (only pages with charts pay for them).
	Charts bool
	// RefreshSeconds > 0 reloads the page while a run is in progress, for browsers without
	// JavaScript (inside <noscript>, so app.js's live progress is not interrupted).
	RefreshSeconds int
	// CreatedBy is who created the run, sweep, plan or calibration shown ("" without identities).
	CreatedBy string
	// ReadOnly says the server refuses creating, cancelling and uploading (-read-only).
	ReadOnly bool
}

// Option is one choice of a select.
type Option struct {
	Value, Label string
	Selected     bool
}

// Field is one form control. Name is the scenario's JSON path (fleet.gpu_blocks,
// scale_in[0].at_ms, …) so validation errors from sim.Parse land beside it.
type Field struct {
	Name        string
	Label       string
	Unit        string
	Help        string
	Kind        string // "number", "text", "select" or "textarea"
	Value       string
	Placeholder string
	Options     []Option
	// Error is the field's problem; the control then carries aria-invalid and points at it
	// with aria-describedby.
	Error string
	Wide  bool
	// Attrs are extra attributes of the control (a data-* marker app.js looks for).
	Attrs templ.Attributes
}

// Fieldset groups fields under a legend. Workload, when set, marks the fieldset of one workload
// type so app.js can show only the chosen one.
type Fieldset struct {
	Legend   string
	Note     string
	Workload string
	Fields   []Field
}

// RatePreview is a small step chart of the sessions' rate stages: Points is an SVG polyline in
// a 300 × 60 box.
type RatePreview struct {
	Points  string
	Caption string
	// Warning says that the session count ends the load before the stages do, and when.
	Warning string
}

// ScheduleRow is one scale-in action of the schedule editor.
type ScheduleRow struct {
	Index  int
	Fields []Field
}

// Problem is one entry of a form's error summary.
type Problem struct {
	Href, Text string
}

// PresetLink is one preset offered on the form.
type PresetLink struct {
	Key, Title, Description string
}

// FigureCell is one headline figure, formatted with its unit ("—" when it does not apply).
type FigureCell struct {
	Key, Label, Value string
	// Exact is the value to the nanosecond when Value rounded it (a title to hover), else "".
	Exact string
}

// RunLink is one run in a list.
type RunLink struct {
	ID, Name, Status, Created string
	// CreatedBy is who created the run, on a server with users ("" otherwise).
	CreatedBy string
	Figures   []FigureCell
}

// FormPage is the scenario form (GET /, and its re-render with errors).
type FormPage struct {
	Page Page
	// Notice says where the values came from (a preset, a stored run).
	Notice string
	// Problems is the error summary, in page order: each problem with a link to its field
	// (Href "" for a problem no field shows).
	Problems   []Problem
	ErrorCount int
	General    []Fieldset
	Schedule   []ScheduleRow
	// ScheduleTemplate is an empty row app.js clones when "add row" is pressed.
	ScheduleTemplate ScheduleRow
	ScheduleError    string
	// SelectionNote explains the selection policies of a counted action, once for all rows.
	SelectionNote string
	// ScaleInMode chooses the schedule or the autoscaler (docs/model.md#model-3); Autoscaler is its fields.
	ScaleInMode Field
	Autoscaler  Fieldset
	// PoolsMode chooses one aggregated fleet or prefill and decode pools
	// (docs/model.md#model-5); Pools is the prefill pool, the decode pool and the handoff.
	PoolsMode Field
	Pools     []Fieldset
	// FleetWarning says that fleet.workers lies outside the autoscaler's bounds
	// (sim.FleetOutsideBounds); shown before anything else.
	FleetWarning string
	// NoticeError styles the notice as an error (an import that was refused).
	NoticeError bool
	// OriginKey is the stored import (store.PutOrigin) the scenario's autoscaler came from, kept
	// in a hidden field so that the run and its plan write into the user's own file.
	OriginKey string
	// AvgWarning is shown when an external source averages (KEDA then divides an average by the
	// replicas); app.js shows and hides it as the source and aggregate change.
	AvgWarning bool
	// Behavior is the HPA behavior's editor; Shorthand, when set, the model-3 shorthand fields a
	// behavior cannot hold exactly.
	Behavior  BehaviorEditor
	Shorthand *Fieldset
	// HPAManifest is the manifest pasted into the autoscaler's "Import an HPA manifest", kept
	// when the import failed; HPAProblems is what the last import could not represent.
	HPAManifest string
	HPAProblems []string
	// HPANote is what the last import filled, in the form's labels. It and HPAProblems ride along
	// in hidden fields through the form's other actions until the user dismisses them.
	HPANote string
	// HPAChoices are the autoscalers of the last imported stream when it holds several (the one
	// read selected): choosing another re-imports the manifest (kept in HPAManifest) with it.
	// HPAChoiceFor is the SHA-256 of that manifest, so a choice is applied only to it.
	HPAChoices   []HPAChoice
	HPAChoiceFor string
	// PromAnswer, PromReading and PromTolerance are the "Load from Prometheus" inputs, kept
	// when the answer could not be read; PromReplicas is the replicas at the start of the night.
	PromAnswer, PromReading, PromTolerance, PromReplicas string
	// DayHelper are the day-shaped load helper's inputs; RatePreview draws the rate stages.
	DayHelper    []Field
	RatePreview  *RatePreview
	WorkloadType Field
	Workloads    []Fieldset
	RawJSON      Field
	Presets      []PresetLink
	Recent       []RunLink
}

// BehaviorEditor is "no behavior" or a behavior, per direction.
type BehaviorEditor struct {
	Mode       Field
	Directions []BehaviorDirection
}

// BehaviorDirection is one direction of a behavior: its fields, its policy rows, and the
// number of rows shown (posted back so that "Add policy" keeps them).
type BehaviorDirection struct {
	Key      string // scale_up or scale_down
	Legend   string
	Note     string
	Fields   []Field
	Policies []PolicyRow
	RowsName string
}

// PolicyRow is one policy (type, value, period) with what it allows in words.
type PolicyRow struct {
	Index  int
	Fields []Field
	Help   string
}

// Column is a table column; Num right-aligns it.
type Column struct {
	Label string
	Num   bool
	// RunLink: the column's cells are run ids, each shown as a link to its run.
	RunLink bool
}

// DataTable is a plain table of preformatted cells.
type DataTable struct {
	Caption string
	Columns []Column
	Rows    [][]string
}

// RunPage is a run's permalink.
type RunPage struct {
	Page Page
	// FleetWarning says that the scenario's fleet.workers lies outside its autoscaler's
	// bounds (sim.FleetOutsideBounds); shown before anything else.
	FleetWarning string
	// OriginKey is the stored import the run's scenario came from (?origin=), passed on to the
	// plan form.
	OriginKey string
	ID        string
	Name      string
	Status    string
	Error     string
	Progress  float64
	Created   string
	Started   string
	Finished  string
	Attempts  int
	Figures   []FigureCell
	Charts    []Chart
	// Workers is the per-worker table; AllWorkers says whether every worker is shown or only
	// the drained ones.
	Workers      DataTable
	AllWorkers   bool
	DrainedCount int
	WorkerCount  int
	WorkersShown string // which workers the table lists, and which this page shows
	ScaleIn      DataTable
	Summary      DataTable
	// Result pages (issue 8).
	Cards        []Card
	Verdicts     []string
	Scenario     []ScenarioGroup
	Related      []RelatedRun
	WorkersPager Pager
	// LargeDrain says the removal chart is an aggregate (too many drained workers for a row each).
	LargeDrain bool
	// Cost is the run's GPU-hours at the page's price.
	Cost CostView
	// Glance and FleetChart lead an autoscaler run's page (GPU-hours and money, p99s, workers,
	// scale events, killed); the drain cards follow them. With autoscaled pools the cards are
	// per pool and FleetChart is the pools chart (taken out of Pools).
	Glance     []Card
	FleetChart []Chart
	// Ideal is the diagnose plan whose ideal fleet the fleet chart draws, and that fleet's run
	// (empty: none).
	Ideal IdealFleetLink
	// AttainmentChart follows the autoscaler's decisions on an autoscaler run (the attainment
	// of each time bucket); on other runs it is among Charts.
	AttainmentChart []Chart
	// Autoscaler is the autoscaler's section; nil for a run without one.
	Autoscaler *AutoscalerView
	// Pools is the prefill and decode pools' section (docs/model.md#model-5); nil for an
	// aggregated run, whose page it leaves unchanged.
	Pools *PoolsView

	// PoolAutoscaled says the run's prefill and decode pools have autoscalers: its autoscaler
	// pair holds each pool at its autoscaler's maximum, with no size to name.
	PoolAutoscaled bool
}

// PoolsView is a run with prefill and decode pools: the handoff figures, the verdicts in
// words, the pools over time, the drained prefill workers with their removal deadlines and
// how long they waited for handoffs, and TTFT split into its parts (or why it cannot be).
type PoolsView struct {
	Cards     []Card
	Verdicts  []string
	Chart     []Chart
	Drained   DataTable
	TTFTSplit DataTable
	// TTFTNote says what the split covers, or why the page has none (no per-request rows).
	TTFTNote string
}

// AutoscalerView is a run's autoscaler section (docs/model.md#model-3): its key figures, verdicts in words
// and its decisions, paginated and filterable to the decisions that changed the fleet.
type AutoscalerView struct {
	Cards              []Card
	Verdicts           []string
	Decisions          DataTable
	Pager              Pager
	Total              int
	Changes            int
	ChangesOnly        bool
	Shown              string // which decisions the table lists, and which this page shows
	AllURL, ChangesURL string
}

// RunSide is one run of a comparison.
type RunSide struct {
	// Label names the run by what differs (kvcr.bandwidth_gbps 25); Name is the run's own name.
	ID, Name, Status, Error, Label string
	Progress                       float64
}

// DiffRow is one scenario field that differs between the compared runs.
type DiffRow struct {
	Path, A, B string
}

// CompareFigure is one headline figure of both runs with its deltas. Trend is "better", "worse" or
// "" and only colours the delta.
type CompareFigure struct {
	Key, Label, A, B, Delta, DeltaPct, Trend string
	// AExact and BExact are the figures as the report has them (with their unit), the cells'
	// titles; empty where the shown value is already exact.
	AExact, BExact string
}

// ComparePage compares two runs side by side.
type ComparePage struct {
	Page       Page
	A, B       RunSide
	Ready      bool
	Diffs      []DiffRow
	OnlyToggle bool
	// ToggleExtra warns that a hint/guard pair differs in more than its toggle.
	ToggleExtra bool
	// Differs names what differs, for the title ("kvcr.bandwidth_gbps 25 / 100").
	Differs  string
	Figures  []CompareFigure
	Charts   []Chart
	Cards    []Card
	Verdicts []string
	// Pools has the pool columns (worker-seconds and handoffs of each pool) when either run
	// has prefill and decode pools; no rows otherwise.
	Pools DataTable
	// PoolVerdicts say in words what differs per pool when both runs have pools, after
	// PoolVerdictsLead, which names the sides.
	PoolVerdictsLead string
	PoolVerdicts     []string
	// Cost is both runs' GPU-hours at the page's price.
	Cost CostView
}

// RunsPage is the paginated list of runs.
type RunsPage struct {
	Page Page
	// Query filters by name; With is the run a "compare with…" choice starts from (its name in
	// WithName), in which case each row offers "compare" instead of a checkbox.
	Query, With, WithName string
	// Error explains a "Compare selected" that did not have exactly two runs.
	Error    string
	Runs     []RunLink
	Total    int
	PageNum  int
	PrevURL  string
	NextURL  string
	FromItem int
	ToItem   int
}

// TraceItem is one uploaded trace.
type TraceItem struct {
	SHA256, Short, Name, Size, Rows, Created, UseURL string
	// CreatedBy is who uploaded the trace, on a server with users ("" otherwise).
	CreatedBy string
}

// TracesPage lists uploaded traces and offers the upload form.
type TracesPage struct {
	Page     Page
	Traces   []TraceItem
	Builtins []string
	Notice   string
	Error    string
	Name     string
}

// ErrorPage is the designed page for every error status.
type ErrorPage struct {
	Page    Page
	Status  int
	Title   string
	Message string
	Details []string
}

// planFromRun is the plan form's address for a run's scenario, with the stored import it came
// from (so a tune plan writes into the user's own file).
func planFromRun(id, originKey string) string {
	if originKey == "" {
		return "/plans/new?from=" + id
	}
	return "/plans/new?from=" + id + "&origin=" + originKey
}

// HPAChoice is one autoscaler of an imported stream: its metadata.name, what the choice says
// (kind and name) and whether it is the one read.
type HPAChoice struct {
	Name, Label string
	Selected    bool
}

// IdealFleetLink names the diagnose plan that found a run's ideal fleet, and the ideal fleet's
// run.
type IdealFleetLink struct {
	PlanID, RunID string
}
