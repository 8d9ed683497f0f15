package sim

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Two scenarios that differ only in their name simulate the same: relabelling one's report
// gives the other's, byte for byte (so a run can be reused by what it simulates).
func TestRelabelGivesTheOtherNamesReport(t *testing.T) {
	data, err := os.ReadFile("presets/incident.json")
	require.NoError(t, err)
	a := mustParse(t, string(data))
	b := mustParse(t, strings.Replace(string(data), `"name": "Queued hint during drain"`, `"name": "Queued hint during drain — sweep: x=1"`, 1))
	require.NotEqual(t, a.ID(), b.ID())
	assert.Equal(t, a.SimulationKey(), b.SimulationKey())

	ra, err := Run(context.Background(), a, RunOptions{})
	require.NoError(t, err)
	rb, err := Run(context.Background(), b, RunOptions{})
	require.NoError(t, err)
	ra.Relabel(b.Name, b.ID())
	ra.Sim, rb.Sim = nil, nil // wall time differs
	ja, _ := json.Marshal(ra)
	jb, _ := json.Marshal(rb)
	assert.Equal(t, string(jb), string(ja))

	other := mustParse(t, strings.Replace(string(data), `"seed": 42`, `"seed": 43`, 1))
	assert.NotEqual(t, a.SimulationKey(), other.SimulationKey(), "anything but the name is part of the key")
}
