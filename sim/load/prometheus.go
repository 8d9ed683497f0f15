package load

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/scalein-planner/scalein/sim"
)

// MaxPrometheusBytes bounds what FromPrometheus reads (Prometheus answers at most 11,000
// points per series; 8 MiB holds several such series).
const MaxPrometheusBytes = 8 << 20

// What the series counts.
const (
	// ReadRequests: requests per second, divided by the turns per session (the default).
	ReadRequests = "requests"
	// ReadSessions: sessions (first turns) per second, taken as they are.
	ReadSessions = "sessions"
)

// Options say how to read the series.
type Options struct {
	// Reading is ReadRequests (the default when empty) or ReadSessions.
	Reading string
	// Turns is the scenario's turns per session (workload.sessions.turns, ≥ 1).
	Turns int
	// Tolerance merges adjacent steps whose rates are within this fraction of their mean
	// (0: only equal rates merge).
	Tolerance float64
	// MaxStages bounds the stages (0 or above sim.MaxRateStages: sim.MaxRateStages).
	MaxStages int
	// SumSeries adds several series sample by sample instead of refusing them.
	SumSeries bool
}

// Curve is the load a query result gave.
type Curve struct {
	Stages []sim.RateStage `json:"rate_stages"`
	// StepMS is the query's step; Samples the samples read; Start the first sample's time.
	StepMS  float64   `json:"step_ms"`
	Samples int       `json:"samples"`
	Start   time.Time `json:"start"`
	// Reading and Turns say how requests became sessions.
	Reading string `json:"reading"`
	Turns   int    `json:"turns"`
	// ExpectedSessions is Σ rate × duration over the stages.
	ExpectedSessions float64 `json:"expected_sessions"`
	// Notes say what was merged or resampled.
	Notes []string `json:"notes"`
}

// promAnswer is the envelope of Prometheus' HTTP API.
type promAnswer struct {
	Status    string          `json:"status"`
	ErrorType string          `json:"errorType"`
	Error     string          `json:"error"`
	Data      json.RawMessage `json:"data"`
	Warnings  []string        `json:"warnings"`
	Infos     []string        `json:"infos"`
}

type promData struct {
	ResultType string          `json:"resultType"`
	Result     json.RawMessage `json:"result"`
}

type promSeries struct {
	Metric     map[string]string   `json:"metric"`
	Values     [][]json.RawMessage `json:"values"`
	Histograms json.RawMessage     `json:"histograms"`
}

type sample struct {
	t float64 // unix seconds
	v float64
}

// FromPrometheus reads the JSON of GET /api/v1/query_range (the whole answer, or its "data")
// into rate stages.
func FromPrometheus(data []byte, o Options) (*Curve, error) {
	if len(data) > MaxPrometheusBytes {
		return nil, fmt.Errorf("the query result is %d bytes; at most %d: ask for a larger step (step=5m) or a shorter range", len(data), MaxPrometheusBytes)
	}
	if o.Reading == "" {
		o.Reading = ReadRequests
	}
	if o.Reading != ReadRequests && o.Reading != ReadSessions {
		return nil, fmt.Errorf("reading %q: requests (the series counts requests per second) or sessions (it counts sessions per second)", o.Reading)
	}
	if o.Turns < 1 {
		o.Turns = 1
	}
	if math.IsNaN(o.Tolerance) || o.Tolerance < 0 || o.Tolerance > 1 {
		return nil, fmt.Errorf("tolerance %v: a fraction from 0 to 1 (0.05 merges steps within 5 %% of their mean)", o.Tolerance)
	}
	if o.MaxStages <= 0 || o.MaxStages > sim.MaxRateStages {
		o.MaxStages = sim.MaxRateStages
	}
	d, err := answerData(data)
	if err != nil {
		return nil, err
	}
	series, err := readSeries(d, o.SumSeries)
	if err != nil {
		return nil, err
	}
	step, err := stepOf(series)
	if err != nil {
		return nil, err
	}
	c := &Curve{StepMS: step * 1000, Samples: len(series), Reading: o.Reading, Turns: o.Turns, Notes: []string{},
		Start: time.Unix(0, int64(series[0].t*1e9)).UTC()}
	rates := make([]float64, len(series))
	for i, s := range series {
		rates[i] = s.v
		if o.Reading == ReadRequests {
			rates[i] = s.v / float64(o.Turns)
		}
	}
	if o.Reading == ReadRequests && o.Turns > 1 {
		c.Notes = append(c.Notes, fmt.Sprintf("requests/s divided by %d turns per session: the stages hold sessions/s (first turns); later turns follow each session", o.Turns))
	}
	width := 1
	if len(rates) > o.MaxStages {
		width = (len(rates) + o.MaxStages - 1) / o.MaxStages
	}
	stages := merge(resample(rates, width, c.StepMS), o.Tolerance)
	if width > 1 {
		c.Notes = append(c.Notes, fmt.Sprintf("%d steps are more than %d stages: resampled to %d steps (%s) per stage, each the mean of its steps, so the expected sessions stay the same", len(rates), o.MaxStages, width, fmtDuration(float64(width)*c.StepMS)))
	}
	if len(stages) < len(rates) {
		c.Notes = append(c.Notes, fmt.Sprintf("%d steps of %s make %d stages (adjacent steps within %s %% of their mean merged, at the mean)", len(rates), fmtDuration(c.StepMS), len(stages), strconv.FormatFloat(o.Tolerance*100, 'f', -1, 64)))
	}
	for i := range stages {
		stages[i].RatePerS = math.Round(stages[i].RatePerS*1e6) / 1e6
		c.ExpectedSessions += stages[i].RatePerS * stages[i].DurationMS / 1000
	}
	c.Stages = stages
	if err := checkStages(c); err != nil {
		return nil, err
	}
	return c, nil
}

// checkStages refuses stages no scenario accepts (finding L3 of 2026-12c: they were printed
// without a word, and the form said "filled"): longer in all than sim.MaxStagesMS, or a rate
// above sim.MaxStageRatePerS (several series added can pass it where none does alone).
func checkStages(c *Curve) error {
	total := 0.0
	for i, st := range c.Stages {
		total += st.DurationMS
		if st.RatePerS > sim.MaxStageRatePerS {
			return fmt.Errorf("stage %d: %v per second is above the %v a scenario's stage may have; query a rate (rate(…[1m])), or add fewer series", i+1, st.RatePerS, sim.MaxStageRatePerS)
		}
	}
	if total > sim.MaxStagesMS {
		return fmt.Errorf("the range lasts %s (%d samples, a step of %s); a scenario's stages last at most %s: ask for a shorter range",
			fmtDuration(total), c.Samples, fmtDuration(c.StepMS), fmtDuration(sim.MaxStagesMS))
	}
	return nil
}

// The Unix seconds a sample's time may have: what int64 nanoseconds hold.
const (
	minUnixSeconds = -9.2e9
	maxUnixSeconds = 9.2e9
)

// maxEchoBytes bounds what a message quotes of the answer (an error text, label sets).
const maxEchoBytes = 300

// clipText is s cut to at most n bytes at a character boundary, saying how much was left out.
func clipText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "… (" + strconv.Itoa(len(s)-cut) + " more bytes)"
}

// answerData unwraps the API's envelope (or takes "data" given alone).
func answerData(data []byte) (promData, error) {
	var a promAnswer
	if err := json.Unmarshal(data, &a); err != nil {
		return promData{}, fmt.Errorf("not the JSON of a Prometheus query_range answer (%v): save the answer of GET /api/v1/query_range?query=…&start=…&end=…&step=… as it is", err)
	}
	if a.Status == "error" {
		return promData{}, fmt.Errorf("the query failed: Prometheus answered with an error (%s): %s; fix the query and save the answer again", clipText(a.ErrorType, 40), clipText(a.Error, maxEchoBytes))
	}
	raw := a.Data
	if len(raw) == 0 {
		raw = data // "data" given alone
	}
	var d promData
	if err := json.Unmarshal(raw, &d); err != nil || d.ResultType == "" {
		return promData{}, errors.New(`data.resultType: missing: this is not a Prometheus query_range answer ({"status": "success", "data": {"resultType": "matrix", "result": [...]}})`)
	}
	switch d.ResultType {
	case "matrix":
		return d, nil
	case "vector", "scalar", "string":
		return promData{}, fmt.Errorf("data.resultType: %s: this is an instant query's answer (/api/v1/query), one value per series; ask /api/v1/query_range with start, end and step (in Grafana: Query inspector → Data → the range query's JSON)", d.ResultType)
	}
	return promData{}, fmt.Errorf("data.resultType: %q is not matrix", d.ResultType)
}

// readSeries reads the one series (or, with sum, adds several with the same timestamps).
func readSeries(d promData, sum bool) ([]sample, error) {
	var ss []promSeries
	if err := json.Unmarshal(d.Result, &ss); err != nil {
		return nil, fmt.Errorf("data.result: not a list of series ({\"metric\": {…}, \"values\": [[time, \"value\"], …]}): %v", err)
	}
	if len(ss) == 0 {
		return nil, errors.New("data.result: no series: the query matched nothing in this range; check the metric name (vllm:request_success_total) and the range's start and end")
	}
	if len(ss) > 1 && !sum {
		labels := make([]string, 0, 3)
		for i := 0; i < len(ss) && i < 3; i++ {
			labels = append(labels, labelText(ss[i].Metric))
		}
		return nil, fmt.Errorf("data.result: %d series (%s…): the load is one series; wrap the query in sum(…), e.g. sum(rate(vllm:request_success_total[1m])), or add them (-sum on the command line)", len(ss), strings.Join(labels, ", "))
	}
	var out []sample
	for k, s := range ss {
		path := fmt.Sprintf("data.result[%d]", k)
		if len(s.Histograms) > 0 && len(s.Values) == 0 {
			return nil, fmt.Errorf("%s: native histograms, not rates: query a rate, e.g. sum(rate(vllm:request_success_total[1m]))", path)
		}
		if len(s.Values) == 0 {
			return nil, fmt.Errorf("%s.values: empty", path)
		}
		samples := make([]sample, len(s.Values))
		for i, pair := range s.Values {
			sm, err := readSample(pair)
			if err != nil {
				return nil, fmt.Errorf("%s.values[%d]: %v", path, i, err)
			}
			if i > 0 && sm.t <= samples[i-1].t {
				what := "is before"
				if sm.t == samples[i-1].t {
					what = "repeats"
				}
				return nil, fmt.Errorf("%s.values[%d] (%s) %s the time of values[%d]: a query_range answer's samples are sorted and distinct; save Prometheus' answer unedited", path, i, timeText(sm.t), what, i-1)
			}
			if msg := badRate(sm.v); msg != "" {
				return nil, fmt.Errorf("%s.values[%d] (%s): %s", path, i, timeText(sm.t), msg)
			}
			samples[i] = sm
		}
		if k == 0 {
			out = samples
			continue
		}
		if len(samples) != len(out) {
			return nil, fmt.Errorf("%s (%s): %d samples, data.result[0] has %d: series with gaps cannot be added; sum them in the query instead", path, labelText(s.Metric), len(samples), len(out))
		}
		for i := range samples {
			if samples[i].t != out[i].t {
				return nil, fmt.Errorf("%s.values[%d] (%s): data.result[0] has %s there: series with gaps cannot be added; sum them in the query instead", path, i, timeText(samples[i].t), timeText(out[i].t))
			}
			out[i].v += samples[i].v
		}
	}
	return out, nil
}

func readSample(pair []json.RawMessage) (sample, error) {
	if len(pair) != 2 {
		return sample{}, fmt.Errorf("%d elements; a sample is [unix time, \"value\"]", len(pair))
	}
	var t float64
	if err := json.Unmarshal(pair[0], &t); err != nil {
		return sample{}, fmt.Errorf("time %s is not a number of seconds", clipText(string(pair[0]), 40))
	}
	// Times a time.Time of nanoseconds holds: years 1678 to 2262.
	if t < minUnixSeconds || t > maxUnixSeconds {
		return sample{}, fmt.Errorf("time %v is not a Unix time between 1678 and 2262 (seconds since 1970); save Prometheus' answer unedited", t)
	}
	var text string
	if err := json.Unmarshal(pair[1], &text); err != nil {
		return sample{}, fmt.Errorf("value %s is not a string like \"3.5\" (Prometheus writes values as strings)", clipText(string(pair[1]), 40))
	}
	v, err := strconv.ParseFloat(text, 64)
	if err != nil {
		return sample{}, fmt.Errorf("value %q is not a number", clipText(text, 40))
	}
	return sample{t: t, v: v}, nil
}

func badRate(v float64) string {
	switch {
	case math.IsNaN(v):
		return "NaN: rate() had fewer than two samples in its window (a scrape gap or a restart), or the query divides by zero; widen the window (rate(…[5m])) or pick a range without the gap"
	case math.IsInf(v, 0):
		return fmt.Sprintf("%v: not a rate; the query divides by zero", v)
	case v < 0:
		return fmt.Sprintf("%v is negative: a request rate is 0 or more (take rate() of the counter, not deriv())", v)
	case v > 1e9:
		return fmt.Sprintf("%v requests/s is beyond what a scenario reads (1e9): is this the counter itself? Query rate(…[1m]) of it", v)
	}
	return ""
}

// stepOf is the query's step in seconds: the smallest gap between samples, which every other
// gap must equal; a longer gap is a step without a sample.
func stepOf(s []sample) (float64, error) {
	if len(s) < 2 {
		return 0, errors.New("data.result[0].values: one sample, so the step cannot be told; ask for a range of at least two steps")
	}
	diffs := make([]float64, len(s)-1)
	for i := 1; i < len(s); i++ {
		diffs[i-1] = s[i].t - s[i-1].t
	}
	sorted := append([]float64(nil), diffs...)
	sort.Float64s(sorted)
	step := math.Round(sorted[0]*1000) / 1000
	if step <= 0 {
		return 0, errors.New("data.result[0].values: a step of 0: the samples share a time; save Prometheus' answer unedited")
	}
	for i, d := range diffs {
		if math.Abs(d-step) <= 1e-3 {
			continue
		}
		missing := math.Round(d/step) - 1
		if math.Abs(d-(missing+1)*step) > 1e-3 {
			return 0, fmt.Errorf("data.result[0].values[%d] (%s) follows values[%d] by %s, not a whole number of steps of %s: the samples are not one query_range answer; save Prometheus' answer unedited", i+1, timeText(s[i+1].t), i, fmtDuration(d*1000), fmtDuration(step*1000))
		}
		return 0, fmt.Errorf("data.result[0].values[%d] (%s) follows values[%d] (%s) by %s: %d steps of %s have no sample (the query returned nothing there: a scrape outage, or no series without traffic); add \"or vector(0)\" to the query if no traffic is meant, or pick a range without the gap", i+1, timeText(s[i+1].t), i, timeText(s[i].t), fmtDuration(d*1000), int(missing), fmtDuration(step*1000))
	}
	return step, nil
}

// resample makes one stage of width steps (the mean of their rates) per width steps.
func resample(rates []float64, width int, stepMS float64) []sim.RateStage {
	out := make([]sim.RateStage, 0, (len(rates)+width-1)/width)
	for i := 0; i < len(rates); i += width {
		j := min(i+width, len(rates))
		sum := 0.0
		for _, r := range rates[i:j] {
			sum += r
		}
		out = append(out, sim.RateStage{DurationMS: float64(j-i) * stepMS, RatePerS: sum / float64(j-i)})
	}
	return out
}

// merge joins adjacent stages while every rate in the stage is within tol of the stage's
// time-weighted mean; the stage keeps that mean.
func merge(in []sim.RateStage, tol float64) []sim.RateStage {
	var out []sim.RateStage
	for i := 0; i < len(in); {
		lo, hi := in[i].RatePerS, in[i].RatePerS
		dur, mass := in[i].DurationMS, in[i].RatePerS*in[i].DurationMS
		j := i + 1
		for ; j < len(in); j++ {
			nlo, nhi := math.Min(lo, in[j].RatePerS), math.Max(hi, in[j].RatePerS)
			ndur, nmass := dur+in[j].DurationMS, mass+in[j].RatePerS*in[j].DurationMS
			mean := nmass / ndur
			if nhi-mean > tol*mean+1e-12 || mean-nlo > tol*mean+1e-12 {
				break
			}
			lo, hi, dur, mass = nlo, nhi, ndur, nmass
		}
		out = append(out, sim.RateStage{DurationMS: dur, RatePerS: mass / dur})
		i = j
	}
	return out
}

func labelText(m map[string]string) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b bytes.Buffer
	b.WriteByte('{')
	for i, k := range keys {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%s=%q", clipText(k, 60), clipText(m[k], 60))
		if b.Len() > maxEchoBytes {
			b.WriteString(", …")
			break
		}
	}
	b.WriteByte('}')
	return b.String()
}

func timeText(unix float64) string {
	return time.Unix(0, int64(unix*1e9)).UTC().Format(time.RFC3339)
}

func fmtDuration(ms float64) string {
	if math.Abs(ms) >= 1e12 { // beyond what a time.Duration writes (292 years)
		return strconv.FormatFloat(ms/86_400_000, 'g', 4, 64) + " days"
	}
	return (time.Duration(ms) * time.Millisecond).String()
}
