package sim

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestDefaultScenario pins a sample of the defaults of docs/model.md#precise-rules as DefaultScenario reports
// them, and checks that it is the scenario of the smallest document.
func TestDefaultScenario(t *testing.T) {
	s := DefaultScenario()
	assert.Equal(t, DefaultScenarioName, s.Name)
	assert.Equal(t, int64(42), s.Seed)
	assert.Equal(t, 16, s.Fleet.Workers)
	assert.Equal(t, 4096, s.Fleet.GPUBlocks)
	assert.Equal(t, 16384, s.Fleet.HostBlocks)
	assert.Equal(t, 0.05, s.Fleet.Timing.DecodeMSPerSeq)
	assert.Equal(t, 50.0, s.KVCR.BandwidthGBps)
	assert.True(t, s.KVCR.RejectDrainingSources)
	assert.Equal(t, PolicyKVAware, s.Router.Policy)
	assert.Equal(t, 0.75, s.Router.HostHitWeight)
	assert.Empty(t, s.ScaleIn)
	require.NotNil(t, s.Workload.Sessions)
	assert.Equal(t, WorkloadSessions, s.Workload.Type)
	assert.Equal(t, 100, s.Workload.Sessions.Count)
	assert.Equal(t, 5000.0, s.Workload.Sessions.ThinkTimeMS)

	again, err := Parse([]byte(`{"workload": {"type": "sessions", "sessions": {}}, "scale_in": []}`), ParseEnv{})
	require.NoError(t, err)
	assert.Equal(t, again.ID(), s.ID(), "an explicitly empty sessions object and schedule are the defaults too")
}

func TestDefaultTrace(t *testing.T) {
	tr := DefaultTrace()
	assert.Equal(t, TraceSpec{TraceBlockTokens: 512, Speedup: 1}, tr)
}

// TestModelDocShowsTheDefaultScenario keeps the default scenario printed in docs/model.md equal
// to DefaultScenario, member for member.
func TestModelDocShowsTheDefaultScenario(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "docs", "model.md"))
	require.NoError(t, err)
	_, after, ok := strings.Cut(string(doc), "<!-- default-scenario")
	require.True(t, ok, "docs/model.md has lost its default-scenario marker")
	_, after, ok = strings.Cut(after, "```json\n")
	require.True(t, ok)
	block, _, ok := strings.Cut(after, "```")
	require.True(t, ok)

	var inDoc, want any
	require.NoError(t, json.Unmarshal([]byte(block), &inDoc), "the block in docs/model.md is not JSON")
	require.NoError(t, json.Unmarshal(DefaultScenario().CanonicalJSON(), &want))
	assert.Equal(t, want, inDoc, "docs/model.md's default scenario differs from DefaultScenario")
}
