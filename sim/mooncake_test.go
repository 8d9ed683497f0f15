package sim

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The built-in Mooncake conversation trace on 16 default workers completes every request, and
// its prefix reuse is plausible: the trace's own README gives a hit ratio of 0.263 for one
// global LRU of 16k 512-token blocks and 0.359 for 64k; 16 workers hold about 41k 512-token
// blocks between G1 and G2 but split the reuse across workers.
func TestMooncakeConversationOn16Workers(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the whole trace (a few seconds)")
	}
	s := mustParse(t, `{"name": "mooncake 16", "fleet": {"workers": 16},
		"workload": {"type": "trace", "trace": {"name": "mooncake-conversation"}}}`)
	rep := mustRun(t, s)
	sum := rep.Summary
	require.Equal(t, int64(12031), sum.Requests.Total)
	assert.Equal(t, sum.Requests.Total, sum.Requests.Completed)
	assert.Zero(t, sum.Requests.Killed)
	tok := sum.Tokens
	assert.Equal(t, tok.Prompt, tok.G1Reused+tok.G2Reused+tok.KVCRPulled+tok.Recomputed)
	reuse := float64(tok.G1Reused+tok.G2Reused+tok.KVCRPulled) / float64(tok.Prompt)
	t.Logf("reuse %.3f (G1 %.3f, G2 %.3f, KVCR %.4f), TTFT p50 %.1f ms p99 %.1f ms, pulls %d",
		reuse, float64(tok.G1Reused)/float64(tok.Prompt), float64(tok.G2Reused)/float64(tok.Prompt),
		float64(tok.KVCRPulled)/float64(tok.Prompt), *sum.TTFTMS.P50, *sum.TTFTMS.P99, rep.KVCR.Staged)
	assert.Greater(t, reuse, 0.15)
	assert.Less(t, reuse, 0.45)
	assert.Greater(t, tok.G1Reused, int64(0))
	assert.Greater(t, tok.G2Reused, int64(0))
	assert.Greater(t, rep.KVCR.Staged, int64(0), "hinted pulls happen on a shared-prefix trace")
	// The trace spans about 3,537 s; the run ends shortly after its last arrival.
	assert.Greater(t, sum.DurationMS, 3_500_000.0)
	assert.Less(t, sum.DurationMS, 3_700_000.0)
	assert.LessOrEqual(t, len(rep.Timeseries.Buckets), 200)
}
