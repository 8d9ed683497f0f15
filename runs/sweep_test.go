package runs

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/scalein-planner/scalein/store"
)

func TestSweepStatus(t *testing.T) {
	pts := func(statuses ...string) []store.SweepPoint {
		var out []store.SweepPoint
		for _, s := range statuses {
			out = append(out, store.SweepPoint{Status: s})
		}
		return out
	}
	cases := []struct {
		cancelled bool
		points    []store.SweepPoint
		want      string
	}{
		{false, pts("queued", "queued"), "queued"},
		{false, pts("done", "queued"), "running"},
		{false, pts("running", "queued"), "running"},
		{false, pts("done", "done"), "done"},
		{false, pts("done", "failed"), "failed"},
		{false, pts("done", "cancelled"), "cancelled"},
		{true, pts("done", "queued"), "cancelled"},
	}
	for _, tc := range cases {
		got, _ := sweepStatus(store.Sweep{Cancelled: tc.cancelled}, tc.points)
		assert.Equal(t, tc.want, got, "%v", tc.points)
	}
}
