package web

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/scalein-planner/scalein/sim"
	"github.com/scalein-planner/scalein/sim/whatif"
)

// The "your settings" table says what a scale-down policy allows, as pods or percent per period.
func TestSettingsTableDescribesPolicies(t *testing.T) {
	one := 1
	pct := &sim.Autoscaler{Target: 8, Select: sim.SelectHighestID, Behavior: &sim.Behavior{ScaleDown: &sim.ScalingRules{
		Policies: []sim.ScalingPolicy{{Type: sim.PolicyTypePercent, Value: 10, PeriodMS: 60000}}}}}
	min := &sim.Autoscaler{Target: 8, Select: sim.SelectHighestID, Behavior: &sim.Behavior{ScaleDown: &sim.ScalingRules{Select: sim.SelectPolicyMin,
		Policies: []sim.ScalingPolicy{{Type: sim.PolicyTypePods, Value: 2, PeriodMS: 30000}, {Type: sim.PolicyTypePercent, Value: 50, PeriodMS: 60000}}}}}
	step := &sim.Autoscaler{Target: 8, Select: sim.SelectHighestID, MaxRemovePerTick: sim.PerTickOf(one)}
	m := 0
	rows := func(a, b *sim.Autoscaler) []string {
		tab, _ := settingsTable(whatif.Candidate{Autoscaler: a, MigrationLimit: &m}, whatif.Candidate{Autoscaler: b, MigrationLimit: &m})
		for _, r := range tab.Rows {
			if r[0] == "scale-down policy" || r[0] == "scale-down policy (changed)" {
				return r
			}
		}
		return nil
	}
	r := rows(pct, step)
	assert.Equal(t, []string{"scale-down policy (changed)", "at most 10 % of the workers removed per 60 s", "at most 1 worker removed per decision"}, r)
	r = rows(min, &sim.Autoscaler{Target: 8})
	assert.Equal(t, "at most 2 workers removed per 30 s or 50 % of the workers removed per 60 s (the smaller)", r[1])
	assert.Equal(t, "no limit", r[2])
}
