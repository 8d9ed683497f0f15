package templates

import (
	"encoding/json"
	"strconv"

	"github.com/a-h/templ"
)

// SweepAxisView is one axis of a sweep as the page shows it.
type SweepAxisView struct {
	Path    string
	Numeric bool
	Values  string // "5, 10, 40"
}

// SweepPointRow is one point in the table (the JS refreshes the table while the sweep runs).
type SweepPointRow struct {
	Values  []string
	RunID   string
	Status  string
	Figures []FigureCell
}

// SweepPage is a sweep's permalink.
type SweepPage struct {
	Page       Page
	ID         string
	Name       string
	Status     string
	Done       int
	Total      int
	Final      bool
	APIURL     string
	CSVURL     string
	Axes       []SweepAxisView
	Figures    []Option // the outcome keys the chart and table offer
	Columns    []string // labels of the figures the table shows
	ColumnKeys string   // their keys, comma-separated, for whatif.js
	Rows       []SweepPointRow
}

// PlanCandidateRow is one ranked candidate.
type PlanCandidateRow struct {
	Rank       int
	Label      string
	RunID      string
	Status     string
	Feasible   bool
	Pareto     bool
	Latest     string
	TTFTP99    string
	Killed     string
	WorkerSecs string
	Violations string
}

// PlanPage is a plan's permalink.
type PlanPage struct {
	// Relax is the way out when nothing is feasible.
	Relax          RelaxLink
	Page           Page
	ID             string
	Name           string
	Status         string
	Error          string
	Final          bool
	APIURL         string
	Goal           string
	Constraints    string
	Recommendation string
	Reason         string
	RecommendedID  string
	RunnerUpID     string
	Schedule       DataTable
	Scatter        Chart
	Candidates     []PlanCandidateRow
	Submitted      []RunLink
	Notes          []string
	Runs, Reused   int
	// A capacity plan's answer, and a diagnose plan's (nil for other plans).
	Capacity *CapacitySection
	Diagnose *DiagnoseSection
}

// JobForm is what the sweep form and the plan form share: the notice, the problems and the
// scenario as JSON.
type JobForm struct {
	Page   Page
	Notice string
	// Errors lists every problem; FieldErrors holds the ones placed beside a field, by the
	// field's name.
	Errors      []string
	FieldErrors map[string]string
	Scenario    string
}

// SweepNewPage is GET /sweeps/new: the scenario and up to three axes, each a path and either a
// list or start/stop/step.
type SweepNewPage struct {
	JobForm
	AxisPaths  []string
	AxisLists  []string
	AxisStarts []string
	AxisStops  []string
	AxisSteps  []string
}

// PlanNewPage is GET /plans/new: the scenario, the plan's goal and its limits.
type PlanNewPage struct {
	JobForm
	Remove, StartMS, TTFTP99MS, MaxKilled, MaxRuns string
	// Goal is the kind of plan ("drain", "tune", "capacity", "diagnose"; whatif.Kind's names).
	Goal string
	// HasAutoscaler offers the tune goal (and, with an slo, the diagnose goal).
	HasAutoscaler bool
	// HasSLO offers the capacity goal (and, with an autoscaler, the diagnose goal).
	HasSLO                       bool
	MinAttainment, RatePerWorker string
	E2EP99MS                     string
	// BaselineWorkers is the fixed fleet a tune or diagnose plan compares with (empty: the
	// autoscaler's max_workers, MaxWorkers).
	BaselineWorkers string
	MaxWorkers      int
	// HasPools offers the pool a drain or tune plan works on (goal.role): a scenario with
	// prefill and decode pools is planned one pool at a time.
	HasPools bool
	Role     string
	// An HPA import: the manifest as given, what it filled, and what the model cannot represent.
	Manifest       string
	Imported       string
	ImportProblems []string
	// Origin is the imported object (hpa.Origin as JSON), carried to the plan so that its
	// manifest download writes the settings back into the user's own object.
	Origin string
	// Searched lists what a tune plan searches (whatif's defaults for the scenario's
	// autoscaler), shown while the goal is tune.
	Searched []SearchedList
}

// Tune says whether the form's goal is tuning the autoscaler.
func (p PlanNewPage) Tune() bool { return p.Goal == "tune" }

// SearchedList is one list a tune plan searches: what it sets and the values tried.
type SearchedList struct {
	Label, Values string
}

// axisLabel is the column label of the i-th swept value (its path), for a stacked row's card.
func axisLabel(axes []SweepAxisView, i int) string {
	if i < len(axes) {
		return axes[i].Path
	}
	return ""
}

// columnLabel is the label of the i-th figure column, for a stacked row's card.
func columnLabel(cols []string, i int) string {
	if i < len(cols) {
		return cols[i]
	}
	return ""
}

// whatIfInvalid marks the control of a field with a problem and points it at the problem.
func whatIfInvalid(p JobForm, name string) templ.Attributes {
	if p.FieldErrors[name] == "" {
		return nil
	}
	return templ.Attributes{"aria-invalid": "true", "aria-describedby": "error-" + name}
}

// originKind is the kind of an imported object held as JSON ("object" when it cannot be told).
func originKind(origin string) string {
	var o struct {
		Kind string `json:"kind"`
	}
	if json.Unmarshal([]byte(origin), &o) != nil || o.Kind == "" {
		return "object"
	}
	return o.Kind
}

// RelaxLink is a plan page's way out of "nothing feasible": the closest candidate, the limit
// it breaks, and the plan form prefilled with that limit relaxed (or the search widened).
type RelaxLink struct {
	Closest, ClosestRunID, Breaks string
	// Action is the link's text; URL opens the prefilled plan form.
	Action, URL string
}

// baselineDefault says what an empty baseline field compares with: "the autoscaler's maximum,
// 5 workers".
func baselineDefault(maxWorkers int) string {
	if maxWorkers <= 0 {
		return "the autoscaler's maximum"
	}
	if maxWorkers == 1 {
		return "the autoscaler's maximum, 1 worker"
	}
	return "the autoscaler's maximum, " + strconv.Itoa(maxWorkers) + " workers"
}
