package templates

// TuneRow is one candidate or baseline of a tune plan.
type TuneRow struct {
	Rank         int
	Label        string
	Stage        string
	RunID        string
	Status       string
	Feasible     bool
	Pareto       bool
	GPUHours     string
	Cost         string
	SavedVsFixed string
	TTFTP99      string
	Killed       string
	Migrated     string
	Changes      string
	Violations   string
	HPAURL       string
}

// TunePlanPage is the permalink of a tune plan (goal.tune "autoscaler").
type TunePlanPage struct {
	// Relax is the way out when nothing is feasible.
	Relax       RelaxLink
	Page        Page
	ID          string
	Name        string
	Status      string
	Error       string
	Final       bool
	APIURL      string
	Constraints string
	// Baseline names the fixed fleet every saving is measured against ("a fixed fleet of 5
	// workers, the autoscaler's maximum").
	Baseline       string
	Recommendation string
	Reason         string
	RecommendedID  string
	YoursID        string
	HPAURL         string
	// HasOrigin says the plan writes into an imported file; without one the download's names
	// are placeholders and the page says so.
	HasOrigin bool
	// Settings compares the recommended settings with the scenario's.
	Settings DataTable
	// SettingsApart holds what the manifests cannot carry: which pods go first.
	SettingsApart DataTable
	// Money: the price per GPU-hour (kept in the URL) and what the recommendation saves.
	Price       string // the input's value
	PriceError  string
	PriceNote   string // "at 2.5 a GPU-hour"
	Savings     DataTable
	FleetChart  Chart
	Scatter     Chart
	Baselines   []TuneRow
	Candidates  []TuneRow
	Submitted   []RunLink
	Notes       []string
	Runs        int
	Reused      int
	PriceSuffix string // "&price=2.5" or "", for links that keep the price
}

// trimAmp drops a leading "&" so a query suffix can start a query.
func trimAmp(s string) string {
	if len(s) > 0 && s[0] == '&' {
		return s[1:]
	}
	return s
}

// CostView is the cost of one or two runs at a price per GPU-hour, with the price field (a GET
// form, so the price stays in the page's address and a shared link shows the same figures).
type CostView struct {
	Action     string   // the page's path
	Keep       []Option // query parameters the form keeps (Value: name, Label: value)
	Price      string
	PriceError string
	Table      DataTable
}
