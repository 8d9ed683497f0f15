package templates

import (
	"bytes"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"
	"github.com/a-h/templ"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func render(t *testing.T, c templ.Component) *goquery.Document {
	t.Helper()
	var buf bytes.Buffer
	require.NoError(t, c.Render(t.Context(), &buf))
	doc, err := goquery.NewDocumentFromReader(&buf)
	require.NoError(t, err)
	return doc
}

func testID(doc *goquery.Document, id string) *goquery.Selection {
	return doc.Find(`[data-testid="` + id + `"]`)
}

// A run with autoscaled pools leads with its glance and the pools chart; the pools section then
// has no chart of its own, and the drains are not said to be KV pulls.
func TestRunViewPoolsLead(t *testing.T) {
	p := RunPage{Status: "done", ID: "r1",
		Glance:     []Card{{Key: "glance_prefill_workers", Label: "Prefill workers", Value: "peak 4 workers", Note: "started with 4, final 1; bounds 1–8"}},
		Autoscaler: &AutoscalerView{Verdicts: []string{"Prefill: in 3 decisions its autoscaler drained 1 worker in 1 decision."}},
		FleetChart: []Chart{{ID: "pool-fleet", Title: "Prefill and decode workers over time"}},
		Pools:      &PoolsView{},
	}
	doc := render(t, RunView(p))
	card := testID(doc, "glance").Find(`[data-testid="card-glance_prefill_workers"]`)
	require.Equal(t, 1, card.Length())
	assert.Equal(t, "peak 4 workers", strings.TrimSpace(card.Find(".kcard-value").Text()))
	assert.Contains(t, testID(doc, "autoscaler-words").Text(), "Prefill: in 3 decisions")
	assert.Equal(t, 1, testID(doc, "fleet-chart-lead").Find(`[data-testid="chart-pool-fleet"]`).Length())
	assert.Equal(t, 1, testID(doc, "pools-section").Length())
	assert.Equal(t, 0, testID(doc, "pool-chart").Length(), "no empty chart block in the pools section")
	assert.Equal(t, "Drains", strings.TrimSpace(doc.Find("h2#drains").Text()))

	// Without pools the drains are still the drains and KV pulls.
	p.Pools = nil
	doc = render(t, RunView(p))
	assert.Equal(t, "Drains and KV pulls", strings.TrimSpace(doc.Find("h2#drains").Text()))
}

// The compare page says per pool in words what differs, under the pools heading and above
// their table; nothing when it has no such words.
func TestCompareViewPoolVerdicts(t *testing.T) {
	p := ComparePage{Ready: true,
		Pools:            DataTable{Columns: []Column{{Label: "Figure"}}, Rows: [][]string{{"Handoffs made"}}},
		PoolVerdictsLead: "Each pool, A against B:",
		PoolVerdicts:     []string{"Prefill: peak 4 workers against 8.", "Decode: peak 8 workers against 16."},
	}
	var buf bytes.Buffer
	require.NoError(t, CompareView(p).Render(t.Context(), &buf))
	page := buf.String()
	doc, err := goquery.NewDocumentFromReader(strings.NewReader(page))
	require.NoError(t, err)
	sec := testID(doc, "compare-pool-verdicts")
	require.Equal(t, 1, sec.Length())
	assert.Equal(t, "Each pool, A against B:", strings.TrimSpace(sec.Find("p").Text()))
	var words []string
	sec.Find(`[data-testid="pool-verdict"]`).Each(func(_ int, s *goquery.Selection) { words = append(words, s.Text()) })
	assert.Equal(t, p.PoolVerdicts, words)
	assert.Less(t, strings.Index(page, `id="pools"`), strings.Index(page, `data-testid="compare-pool-verdicts"`))
	assert.Less(t, strings.Index(page, `data-testid="compare-pool-verdicts"`), strings.Index(page, `data-testid="compare-pools"`))

	p.PoolVerdicts, p.PoolVerdictsLead = nil, ""
	assert.Equal(t, 0, testID(render(t, CompareView(p)), "compare-pool-verdicts").Length())
}
