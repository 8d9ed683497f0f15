package templates

// View models of the result pages' widgets: key-figure cards, verdicts, the scenario summary
// and the runs a run is related to.

// Card is one key figure at the top of a result page. Note says what the number means where a
// reader would otherwise misread it (why pulls are partial).
type Card struct {
	Key, Label, Value, Note string
	// Exact is the unrounded value when Value is rounded (shown as the value's title).
	Exact string
	// Help explains a term of the card, folded under the question HelpTitle.
	HelpTitle, Help string
	// A, B and Delta are set on the compare page instead of Value.
	A, B, Delta, Trend string
}

// ScenarioItem is one input of a run's scenario, formatted with its unit.
type ScenarioItem struct {
	Label, Value string
	Title        string // the exact value when Value reads it otherwise ("900000 ms" for "15 min")
}

// ScenarioGroup is one section of the scenario summary, named like the form's sections.
type ScenarioGroup struct {
	Title string
	Items []ScenarioItem
}

// RelatedRun is a link from a run page to a pair or a comparison it belongs to.
type RelatedRun struct {
	// Kind says how the runs are related ("hinted vs no-hint pair", "comparison").
	Kind, URL, Title, Status string
}

// Pager is a page-through control of a long table.
type Pager struct {
	Label            string
	PrevURL, NextURL string
	Page, Pages      int
	// From and To are the rows of this page (1-based, inclusive) of Rows in all.
	From, To, Rows int
}
