package whatif

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// Each goal names its kind; a goal with several kinds' fields is the first of diagnose,
// capacity, tune, drain, as Normalize and Plan dispatch it.
func TestGoalKind(t *testing.T) {
	for _, c := range []struct {
		goal Goal
		want Kind
		name string
	}{
		{Goal{Remove: 2, StartMS: 100}, KindDrain, "drain"},
		{Goal{}, KindDrain, "drain"},
		{Goal{Tune: TuneAutoscaler}, KindTune, "tune"},
		{Goal{Capacity: &CapacityGoal{}}, KindCapacity, "capacity"},
		{Goal{Diagnose: &DiagnoseGoal{}}, KindDiagnose, "diagnose"},
		{Goal{Tune: TuneAutoscaler, Capacity: &CapacityGoal{}}, KindCapacity, "capacity"},
		{Goal{Tune: TuneAutoscaler, Diagnose: &DiagnoseGoal{}, Capacity: &CapacityGoal{}}, KindDiagnose, "diagnose"},
	} {
		assert.Equal(t, c.want, c.goal.Kind(), "%+v", c.goal)
		assert.Equal(t, c.name, c.goal.Kind().String())
	}
}
