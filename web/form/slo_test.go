package form

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/scalein-planner/scalein/sim"
)

func TestFormSLO(t *testing.T) {
	t.Run("OK", func(t *testing.T) {
		f := Default()
		f.Set(SLOTTFTPath, "3000")
		f.Set(SLOTPOTPath, "100")
		sc, err := Scenario(f, sim.ParseEnv{})
		require.NoError(t, err)
		require.NotNil(t, sc.SLO)
		assert.Equal(t, 3000.0, *sc.SLO.TTFTMS)
		assert.Equal(t, 100.0, *sc.SLO.TPOTMS)

		// Prefilled from that scenario, the form gives it back.
		again, err := Scenario(FromScenario(sc), sim.ParseEnv{})
		require.NoError(t, err)
		assert.Equal(t, sc.ID(), again.ID())
	})

	t.Run("OneLimit", func(t *testing.T) {
		f := Default()
		f.Set(SLOTPOTPath, "80")
		sc, err := Scenario(f, sim.ParseEnv{})
		require.NoError(t, err)
		require.NotNil(t, sc.SLO)
		assert.Nil(t, sc.SLO.TTFTMS)
		assert.Equal(t, 80.0, *sc.SLO.TPOTMS)
	})

	// Both empty is no SLO at all: the default scenario, with its id.
	t.Run("EmptyIsNoSLO", func(t *testing.T) {
		f := Default()
		f.Set(SLOTTFTPath, " ")
		sc, err := Scenario(f, sim.ParseEnv{})
		require.NoError(t, err)
		assert.Nil(t, sc.SLO)
		assert.Equal(t, sim.DefaultScenario().ID(), sc.ID())
	})

	t.Run("ErrPlacedOnField", func(t *testing.T) {
		f := Default()
		f.Set(SLOTTFTPath, "0")
		f.Set(SLOTPOTPath, "fast")
		_, err := Scenario(f, sim.ParseEnv{})
		invalid, ok := err.(*Invalid)
		require.True(t, ok, "want *Invalid, got %v", err)
		assert.Equal(t, 2, invalid.Errs.count, "%v", invalid.Errs.byField)
		require.Len(t, invalid.Errs.byField[SLOTTFTPath], 1)
		assert.Contains(t, invalid.Errs.byField[SLOTTFTPath][0], "must be > 0")
		require.Len(t, invalid.Errs.byField[SLOTPOTPath], 1)
		assert.Contains(t, invalid.Errs.byField[SLOTPOTPath][0], "must be a number")
	})
}
