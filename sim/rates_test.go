package sim

import (
	"context"
	"errors"
	"math"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Issue 19 M3: a slower link never simulates faster. The incident preset with the guard off
// pulls from draining peers; as the bandwidth falls, the last removal comes no sooner (and a
// link so slow that the run reaches its virtual-time limit fails, which is not faster either).
func TestSlowerLinkNeverSimulatesFaster(t *testing.T) {
	data, err := os.ReadFile("presets/incident.json")
	require.NoError(t, err)
	base := strings.Replace(string(data), `"reject_draining_sources": true`, `"reject_draining_sources": false`, 1)
	prev := -1.0
	for _, gbps := range []string{"1", "0.1", "0.01", "0.001", "0.0001", "1e-05", "1e-06"} {
		sc := mustParse(t, strings.Replace(base, `"bandwidth_gbps": 1,`, `"bandwidth_gbps": `+gbps+`,`, 1))
		rep, err := Run(context.Background(), sc, RunOptions{})
		if errors.Is(err, ErrLimit) {
			prev = math.Inf(1) // every slower link must fail too
			continue
		}
		require.NoError(t, err, gbps)
		require.False(t, math.IsInf(prev, 1), "bandwidth %s finished although a faster link reached the limit", gbps)
		var latest float64
		for _, f := range Headline(rep) {
			if f.Key == "latest_removal_ms" && f.Value != nil {
				latest = *f.Value
			}
		}
		assert.GreaterOrEqual(t, latest, prev, "bandwidth %s GB/s removed the last worker sooner than a faster link", gbps)
		prev = latest
	}
}

// Rates below MinRateGBps are refused with the bound in the message; a copy lane may still be
// 0 (instant).
func TestRateLowerBound(t *testing.T) {
	data, err := os.ReadFile("presets/incident.json")
	require.NoError(t, err)
	for _, tc := range []struct{ from, to, path string }{
		{`"bandwidth_gbps": 1,`, `"bandwidth_gbps": 1e-12,`, "kvcr.bandwidth_gbps"},
		{`"bandwidth_gbps": 1,`, `"bandwidth_gbps": 4.9e-324,`, "kvcr.bandwidth_gbps"},
		{`"h2d_gbps": 32`, `"h2d_gbps": 1e-300`, "fleet.h2d_gbps"},
		{`"d2h_gbps": 0`, `"d2h_gbps": 1e-7`, "fleet.d2h_gbps"},
	} {
		src := strings.Replace(string(data), tc.from, tc.to, 1)
		require.NotEqual(t, string(data), src, tc.to)
		_, err := Parse([]byte(src), ParseEnv{})
		var ve *ValidationError
		require.ErrorAs(t, err, &ve, tc.to)
		assert.Equal(t, tc.path, ve.Errors[0].Path)
		assert.Contains(t, ve.Errors[0].Message, "1e-06", tc.to)
	}
	_, err = Parse([]byte(strings.Replace(string(data), `"h2d_gbps": 32`, `"h2d_gbps": 0`, 1)), ParseEnv{})
	require.NoError(t, err)
}

// transferNS saturates instead of overflowing.
func TestTransferNSSaturates(t *testing.T) {
	assert.Equal(t, int64(maxTransferNS), transferNS(1e8, 1e-12))
	assert.Equal(t, int64(maxTransferNS), transferNS(1e8, 1e-300))
	assert.Equal(t, int64(0), transferNS(0, 1))
	assert.Equal(t, int64(2), transferNS(3, 2))
	assert.Less(t, transferNS(1e8, 1e-6), transferNS(1e8, 1e-7))
}
