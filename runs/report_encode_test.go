package runs

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/scalein-planner/scalein/internal/runtest"
	"github.com/scalein-planner/scalein/sim"
)

// TestEncodeReportIsMarshal: the report encoded row by row is json.Marshal's output byte for
// byte: with rows, without, and with characters json.Marshal escapes.
func TestEncodeReportIsMarshal(t *testing.T) {
	sc, err := sim.Parse([]byte(runtest.PerRequestScenario("encode <&>", 300)), sim.ParseEnv{})
	require.NoError(t, err)
	rep, err := sim.Run(context.Background(), sc, sim.RunOptions{})
	require.NoError(t, err)
	require.Len(t, rep.Requests, 300)
	rep.Requests[7].ID = "<script>&\u2028\x00"

	noRows := *rep
	noRows.Requests = nil
	for name, r := range map[string]*sim.Report{"rows": rep, "no rows": &noRows} {
		want, err := json.Marshal(r)
		require.NoError(t, err)
		var got bytes.Buffer
		require.NoError(t, encodeReport(&got, r))
		assert.Equal(t, string(want), got.String(), name)
	}
}
