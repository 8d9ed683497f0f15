package templates

// CapacitySection is a capacity plan's answer on the plan page (and the capacity a diagnose
// plan found): the sentence and the attainment-versus-rate curve.
type CapacitySection struct {
	Answer string
	Curve  Chart
}

// DiagnoseSection is a diagnose plan's answer: the fleets side by side, the lags' Shapley
// shares as bars and the 8 runs behind them.
type DiagnoseSection struct {
	Comparison string
	Answer     string
	// IdealNote says how the ideal fleet was made and what it is not.
	IdealNote string
	Fleets    DataTable
	Bound     string
	// FleetChart draws the scenario's, the ideal and the static fleet over time (ID "" until
	// the plan is done).
	FleetChart Chart
	Shares     Chart
	Subsets    DataTable
}
