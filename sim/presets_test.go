package sim

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestPresetsParse(t *testing.T) {
	presets := Presets()
	require.NotEmpty(t, presets)
	order := map[string]int{"incident": 0, "e2": 1, "mooncake-16to12": 2, "large-fleet": 3}
	last := -1
	for _, p := range presets {
		t.Run(p.Key, func(t *testing.T) {
			assert.NotEmpty(t, p.Title)
			assert.NotEmpty(t, p.Description)
			s, err := Parse(p.JSON, ParseEnv{})
			require.NoError(t, err)
			assert.NotEqual(t, DefaultScenarioName, s.Name, "a preset names itself")
		})
		pos, known := order[p.Key]
		require.True(t, known, "unexpected preset %q", p.Key)
		assert.Greater(t, pos, last, "presets are in display order")
		last = pos
		got, ok := PresetByKey(p.Key)
		require.True(t, ok)
		assert.Equal(t, p.Title, got.Title)
	}
	_, ok := PresetByKey("nope")
	assert.False(t, ok)
}

func TestPresetContents(t *testing.T) {
	m, ok := PresetByKey("mooncake-16to12")
	require.True(t, ok)
	s, err := Parse(m.JSON, ParseEnv{})
	require.NoError(t, err)
	assert.Equal(t, 16, s.Fleet.Workers)
	require.Len(t, s.ScaleIn, 1)
	assert.Equal(t, 4, s.ScaleIn[0].Count)
	assert.Equal(t, SelectHighestID, s.ScaleIn[0].Select)
	require.NotNil(t, s.ScaleIn[0].GraceMS)
	assert.Equal(t, 30000.0, *s.ScaleIn[0].GraceMS)
	rows, err := s.loadTrace(nil)
	require.NoError(t, err)
	require.Len(t, rows, 3000)
	// The scale-in fires in the middle of the traffic.
	assert.Greater(t, s.ScaleIn[0].AtMS, rows[0].TimestampMS)
	assert.Less(t, s.ScaleIn[0].AtMS, rows[len(rows)-1].TimestampMS)

	l, ok := PresetByKey("large-fleet")
	require.True(t, ok)
	s, err = Parse(l.JSON, ParseEnv{})
	require.NoError(t, err)
	assert.Equal(t, 2048, s.Fleet.Workers)
	assert.Equal(t, 100_000, s.Workload.Sessions.Count*s.Workload.Sessions.Turns)
	assert.Equal(t, 256, s.ScaleIn[0].Count)
	assert.Equal(t, SelectLeastLoaded, s.ScaleIn[0].Select)
}
