package form

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/scalein-planner/scalein/sim"
)

// The start time round-trips through the form: empty leaves it out, a time is kept.
func TestStartsAtThroughTheForm(t *testing.T) {
	for _, c := range []struct{ in, want string }{{"", ""}, {"2026-12-03T00:15:00Z", "2026-12-03T00:15:00Z"}} {
		f := Default()
		f.values["workload.type"] = sim.WorkloadSessions
		f.values[StartsAtPath] = c.in
		doc, errs := f.JSON()
		require.Empty(t, errs)
		sc, err := sim.Parse(doc, sim.ParseEnv{})
		require.NoError(t, err, string(doc))
		assert.Equal(t, c.want, sc.Workload.Sessions.StartsAt)
		if c.in == "" {
			assert.NotContains(t, string(doc), "starts_at")
		}
	}
}
