package form

// The SLO in the form (issue 27): two optional limits that judge a run without changing it.

// SLO field paths.
const (
	SLOTTFTPath = "slo.ttft_ms"
	SLOTPOTPath = "slo.tpot_ms"
)

var sloGroup = fieldGroup{Legend: "Service-level objective",
	Note: "Optional. A request meets the SLO when its time to first token and its time per output token are both within these limits (a killed request never does); " +
		"the run reports the share that met it, overall and per time bucket by arrival. It changes nothing in the simulation. Leave both empty for no SLO.",
	Fields: []fieldSpec{
		{Path: SLOTTFTPath, Label: "TTFT limit", Unit: "ms", Kind: kindFloat,
			Help: "Longest acceptable time from a request's arrival to its first token (> 0), e.g. 3000. Empty = TTFT not judged."},
		{Path: SLOTPOTPath, Label: "TPOT limit", Unit: "ms", Kind: kindFloat,
			Help: "Longest acceptable time per output token after the first: (done − first token) ÷ (output tokens − 1), 0 for a one-token answer (> 0), e.g. 100. Empty = TPOT not judged."},
	}}

// dropEmptySLO removes the slo object the field table opened when both limits were left empty:
// no limit means no SLO, which the scenario says by leaving slo out.
func dropEmptySLO(root map[string]any) {
	if m, ok := root["slo"].(map[string]any); ok && len(m) == 0 {
		delete(root, "slo")
	}
}
