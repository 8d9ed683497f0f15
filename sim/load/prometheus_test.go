package load_test

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/scalein-planner/scalein/sim"
	"github.com/scalein-planner/scalein/sim/load"
)

func read(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// The night file: six one-minute steps of 6, 6.1, 5.9, 3, 3, 9.3 requests/s.
func TestFromPrometheusStages(t *testing.T) {
	tests := []struct {
		name string
		o    load.Options
		want []sim.RateStage
	}{
		{"equal rates merge at tolerance 0", load.Options{Reading: load.ReadSessions, Turns: 3}, nil},
		{"requests divided by 2 turns, 5 % tolerance", load.Options{Turns: 2, Tolerance: 0.05}, []sim.RateStage{
			{DurationMS: 180000, RatePerS: 3}, {DurationMS: 120000, RatePerS: 1.5}, {DurationMS: 60000, RatePerS: 4.65}}},
		{"resampled to 2 stages of 3 steps", load.Options{Reading: load.ReadSessions, MaxStages: 2}, []sim.RateStage{
			{DurationMS: 180000, RatePerS: 6}, {DurationMS: 180000, RatePerS: 5.1}}},
		{"resampled to 4 stages of 2 steps (3 stages)", load.Options{Reading: load.ReadSessions, MaxStages: 4}, []sim.RateStage{
			{DurationMS: 120000, RatePerS: 6.05}, {DurationMS: 120000, RatePerS: 4.45}, {DurationMS: 120000, RatePerS: 6.15}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, err := load.FromPrometheus(read(t, "night_1m.json"), tc.o)
			if err != nil {
				t.Fatal(err)
			}
			want := tc.want
			if want == nil { // the same six steps with 3 and 3 merged
				want = []sim.RateStage{{DurationMS: 60000, RatePerS: 6}, {DurationMS: 60000, RatePerS: 6.1}, {DurationMS: 60000, RatePerS: 5.9},
					{DurationMS: 120000, RatePerS: 3}, {DurationMS: 60000, RatePerS: 9.3}}
			}
			assert.Equal(t, want, c.Stages)
			if c.StepMS != 60000 || c.Samples != 6 || c.Start.Unix() != 1714528800 {
				t.Errorf("step %v, samples %d, start %v", c.StepMS, c.Samples, c.Start)
			}
		})
	}
}

// Merging and resampling keep the expected sessions: Σ rate × duration is the same.
func TestFromPrometheusKeepsTheTotal(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"status":"success","data":{"resultType":"matrix","result":[{"metric":{},"values":[`)
	n := 2500
	for i := range n {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, `[%d,"%g"]`, 1714528800+15*i, float64(i%17)/4)
	}
	b.WriteString(`]}]}}`)
	one, err := load.FromPrometheus([]byte(b.String()), load.Options{Reading: load.ReadSessions, MaxStages: 100000})
	if err != nil {
		t.Fatal(err)
	}
	if len(one.Stages) != 834 { // ceil(2500 / 3): no two adjacent means of three are equal
		t.Fatalf("%d stages; want 834", len(one.Stages))
	}
	merged, err := load.FromPrometheus([]byte(b.String()), load.Options{Reading: load.ReadSessions, Tolerance: 0.3})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []*load.Curve{one, merged} {
		if len(c.Stages) > sim.MaxRateStages {
			t.Errorf("%d stages", len(c.Stages))
		}
		total, dur := 0.0, 0.0
		for _, s := range c.Stages {
			total += s.RatePerS * s.DurationMS / 1000
			dur += s.DurationMS
		}
		want := 0.0
		for i := range n {
			want += float64(i%17) / 4 * 15
		}
		if d := total - want; d > 0.01*want || d < -0.01*want {
			t.Errorf("expected sessions %v, the samples hold %v", total, want)
		}
		if dur != float64(n)*15000 {
			t.Errorf("the stages last %v ms, the samples %v", dur, n*15000)
		}
		if !strings.Contains(strings.Join(c.Notes, "\n"), "resampled to 3 steps (45s) per stage") {
			t.Errorf("notes do not say the curve was resampled: %q", c.Notes)
		}
	}
}

func TestFromPrometheusSumsSeriesWhenAsked(t *testing.T) {
	c, err := load.FromPrometheus(read(t, "two_series.json"), load.Options{Reading: load.ReadSessions, SumSeries: true})
	if err != nil {
		t.Fatal(err)
	}
	assert.Equal(t, []sim.RateStage{{DurationMS: 120000, RatePerS: 6}}, c.Stages)
}

func TestFromPrometheusErrors(t *testing.T) {
	tests := []struct {
		name, file, data string
		want             []string
	}{
		{"vector", "vector.json", "", []string{"data.resultType: vector", "instant query", "/api/v1/query_range"}},
		{"several series", "two_series.json", "", []string{"2 series", `{pod="vllm-0"}`, "sum(rate(vllm:request_success_total[1m]))"}},
		{"NaN", "nan.json", "", []string{"data.result[0].values[1] (2024-05-01T02:01:00Z)", "NaN", "rate(…[5m])"}},
		{"gap", "gap.json", "", []string{"values[2] (2024-05-01T02:04:00Z) follows values[1] (2024-05-01T02:01:00Z) by 3m0s", "2 steps of 1m0s have no sample", "or vector(0)"}},
		{"Prometheus error", "error.json", "", []string{"Prometheus answered with an error (bad_data)", "parse error"}},
		{"duplicate", "", `{"status":"success","data":{"resultType":"matrix","result":[{"metric":{},"values":[[10,"1"],[10,"2"]]}]}}`, []string{"values[1] (1970-01-01T00:00:10Z) repeats the time of values[0]"}},
		{"unsorted", "", `{"status":"success","data":{"resultType":"matrix","result":[{"metric":{},"values":[[20,"1"],[10,"2"]]}]}}`, []string{"values[1] (1970-01-01T00:00:10Z) is before the time of values[0]"}},
		{"negative", "", `{"status":"success","data":{"resultType":"matrix","result":[{"metric":{},"values":[[10,"1"],[20,"-2"]]}]}}`, []string{"values[1]", "-2 is negative", "rate()"}},
		{"infinite", "", `{"status":"success","data":{"resultType":"matrix","result":[{"metric":{},"values":[[10,"+Inf"],[20,"2"]]}]}}`, []string{"values[0]", "+Inf"}},
		{"one sample", "", `{"data":{"resultType":"matrix","result":[{"metric":{},"values":[[10,"1"]]}]}}`, []string{"one sample", "step cannot be told"}},
		{"nothing matched", "", `{"status":"success","data":{"resultType":"matrix","result":[]}}`, []string{"no series", "vllm:request_success_total"}},
		{"uneven step", "", `{"status":"success","data":{"resultType":"matrix","result":[{"metric":{},"values":[[10,"1"],[20,"1"],[35,"1"]]}]}}`, []string{"values[2]", "not a whole number of steps of 10s"}},
		{"not JSON", "", `time,rate`, []string{"not the JSON of a Prometheus query_range answer"}},
		{"number value", "", `{"status":"success","data":{"resultType":"matrix","result":[{"metric":{},"values":[[10,1],[20,"1"]]}]}}`, []string{"values[0]", "not a string"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			data := []byte(tc.data)
			if tc.file != "" {
				data = read(t, tc.file)
			}
			_, err := load.FromPrometheus(data, load.Options{})
			if err == nil {
				t.Fatal("accepted")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
		})
	}
}

// ApplyJSON writes the stages into the user's scenario, raises the count so the stages end the
// arrivals, keeps the seed's digits, and the result parses.
func TestApplyJSON(t *testing.T) {
	base := read(t, "scenario.json")
	parsed, err := sim.Parse(base, sim.ParseEnv{})
	if err != nil {
		t.Fatal(err)
	}
	c, err := load.FromPrometheus(read(t, "night_1m.json"), load.Options{Turns: load.TurnsOf(parsed)})
	if err != nil {
		t.Fatal(err)
	}
	out, notes, err := load.ApplyJSON(base, parsed, c)
	if err != nil {
		t.Fatal(err)
	}
	got, err := sim.Parse(out, sim.ParseEnv{})
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	s := got.Workload.Sessions
	// 6 steps of 60 s at 33.3/2 requests/s … : 0.5 × 60 × (6+6.1+5.9+3+3+9.3) = 999 sessions.
	if c.ExpectedSessions < 998.99 || c.ExpectedSessions > 999.01 {
		t.Errorf("expected sessions %v, want 999", c.ExpectedSessions)
	}
	if want := 999 + 127; s.Count != want { // ceil(999 + 4 √999)
		t.Errorf("count %d, want %d", s.Count, want)
	}
	if s.Turns != 2 || len(s.RateStages) != 5 || s.RateStages[0].RatePerS != 3 {
		t.Errorf("sessions %+v", s)
	}
	// The scenario carries what time 0 stands for: the first sample's time.
	if at, ok := got.StartTime(); !ok || !at.Equal(c.Start) {
		t.Errorf("starts_at %q, want %v", s.StartsAt, c.Start)
	}
	if !strings.Contains(string(out), "12345678901234567") {
		t.Errorf("the seed lost digits:\n%s", out)
	}
	if len(notes) != 2 || !strings.Contains(notes[1], "workload.sessions.count 10 → 1126") {
		t.Errorf("notes %q", notes)
	}
	// The first note says what of the request shape the load did not set, and where to read it.
	for _, want := range []string{"arrival rate only", "workload.sessions.output_tokens from vllm:request_generation_tokens", "fleet.timing from scalein calibrate"} {
		if len(notes) == 0 || !strings.Contains(notes[0], want) {
			t.Errorf("the shape note lacks %q: %q", want, notes)
		}
	}
	var doc map[string]any
	if err := json.Unmarshal(out, &doc); err != nil {
		t.Fatal(err)
	}
	if _, ok := doc["fleet"].(map[string]any)["gpu_blocks"]; ok {
		t.Error("a field the user left out was written")
	}
}
