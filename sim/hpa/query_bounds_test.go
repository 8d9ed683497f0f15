package hpa_test

import (
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/scalein-planner/scalein/sim"
	"github.com/scalein-planner/scalein/sim/hpa"
)

// withQuery is the KEDA manifest with its trigger's query replaced (single-quoted YAML).
func withQuery(q string) string {
	return strings.Replace(keda, `query: sum(vllm:num_requests_waiting{model_name="llama"}) or vector(0)`,
		`query: '`+strings.ReplaceAll(q, `'`, `''`)+`'`, 1)
}

// TestQueryBounds replays finding M1 of the 2026-12c probe: queries that cost Prometheus' parser
// seconds to minutes are refused before it sees them, with the bound in the message; queries
// within the bounds are still read.
func TestQueryBounds(t *testing.T) {
	const w = "vllm:num_requests_waiting"
	refused := map[string]struct{ q, want string }{
		"200 KB of parentheses": {strings.Repeat("(", 100000) + "sum(" + w + ")" + strings.Repeat(")", 100000), "at most 4096 are read"},
		"a long query":          {"sum(" + w + `{model_name="` + strings.Repeat("x", 5000) + `"})`, "at most 4096 are read"},
		"65 parentheses":        {strings.Repeat("(", 65) + "sum(" + w + ")" + strings.Repeat(")", 65), "deeper than 64 levels"},
		"65 abs( calls":         {"sum(" + strings.Repeat("abs(", 65) + w + strings.Repeat(")", 65) + ")", "deeper than 64 levels"},
		"unary signs":           {"sum(" + strings.Repeat("-", 1000) + w + ")", "deeper than 64 levels"},
		"spaced unary signs":    {"sum(" + strings.Repeat("- ", 100) + w + ")", "deeper than 64 levels"},
	}
	for name, c := range refused {
		t.Run(name, func(t *testing.T) {
			_, err := hpa.Import([]byte(withQuery(c.q)), sim.Autoscaler{})
			require.Error(t, err)
			assert.Contains(t, err.Error(), "metadata.query")
			assert.Contains(t, err.Error(), c.want)
			assert.Less(t, len(err.Error()), 2000, "the message does not echo the query whole")
		})
	}
	read := map[string]string{
		"62 parentheses":            strings.Repeat("(", 62) + "sum(" + w + ")" + strings.Repeat(")", 62),
		"brackets in a label value": "sum(" + w + `{model_name="` + strings.Repeat("(", 100) + `"})`,
		"a binary plus":             "sum(vllm:num_requests_running) + sum(" + w + ")",
	}
	for name, q := range read {
		t.Run(name, func(t *testing.T) {
			im, err := hpa.Import([]byte(withQuery(q)), sim.Autoscaler{})
			require.NoError(t, err)
			require.NotNil(t, im)
		})
	}
}

// TestTooManyTriggers: each trigger's query is parsed, so a ScaledObject's triggers are bounded.
func TestTooManyTriggers(t *testing.T) {
	trigger := `  - type: prometheus
    metadata:
      query: sum(vllm:num_requests_waiting)
      threshold: "5"
`
	doc := strings.Replace(keda, "  triggers:\n", "  triggers:\n"+strings.Repeat(trigger, 17), 1)
	_, err := hpa.Import([]byte(doc), sim.Autoscaler{})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "spec.triggers: "+strconv.Itoa(18)+" triggers; at most 16")
}
