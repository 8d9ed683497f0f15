package whatif_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/scalein-planner/scalein/sim"
	"github.com/scalein-planner/scalein/sim/whatif"
)

func TestNormalizeRefusesPools(t *testing.T) {
	base, err := sim.Parse([]byte(`{"disaggregation": {"prefill": {"workers": 2}, "decode": {"workers": 2}}, "workload": {"type": "sessions"}}`), sim.ParseEnv{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = whatif.Normalize(base, whatif.Request{Goal: whatif.Goal{Remove: 1}})
	var ve *sim.ValidationError
	if !errors.As(err, &ve) || len(ve.Errors) != 1 || !strings.Contains(ve.Errors[0].Message, "prefill and decode pools") {
		t.Fatalf("want a refusal naming the pools, got %v", err)
	}
}
