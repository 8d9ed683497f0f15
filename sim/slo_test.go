package sim

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// sloScenario is a scripted run derived by hand. Timing: prefill 0.1 ms per prompt token,
// decode_ms 1 and 0.01 ms per KV token read, the rest 0; block_size 16. A request alone on its
// worker with P prompt tokens and n output tokens emits its first token after 1 + 0.1·P ms, and
// its k-th token (k ≥ 2) in a pass of 1 + 0.01·(P + k − 1) ms. Requests are far enough apart
// that none shares a pass:
//
//	id              at    P   n  TTFT  TPOT                         SLO (4.2 ms, 1.33 ms)
//	fast             0   16   2  2.6   1.17                         met
//	at-limits       10   32   2  4.2   1.33                         met (both equal their limit)
//	ttft-over     1000   33   1  4.3   0 (one token)                missed by TTFT
//	tpot-over     1010   32   3  4.2   (1.33 + 1.34) / 2 = 1.335    missed by TPOT
//	one-token     2000   32   1  4.2   0                            met
//	slow-prompt   2010   48   1  5.8   0                            missed by TTFT
//	killed        3000   16 100  2.6   on worker 1, force-removed at 3015 ms: missed, killed
//
// The run ends at 3015 ms, so the time series has 20 ms buckets: bucket 0 holds fast and
// at-limits (1), bucket 50 ttft-over and tpot-over (0), bucket 100 one-token and slow-prompt
// (0.5), bucket 150 killed (0); every other bucket has no arrival (null).
const sloScenario = `{
  "name": "slo attainment by hand",
  "fleet": {"workers": 2, "gpu_blocks": 64, "host_blocks": 0, "block_size": 16,
    "max_num_seqs": 4, "max_batched_tokens": 64,
    "timing": {"prefill_ms": 0, "prefill_ms_per_1k_tokens": 100, "decode_ms": 1,
      "decode_ms_per_seq": 0, "decode_ms_per_1k_kv_tokens": 10}},
  "kvcr": {"enabled": false},
  "scale_in": [{"at_ms": 3010, "workers": [1], "grace_ms": 5}],
  "workload": {"type": "requests", "requests": [
    {"id": "fast", "at_ms": 0, "blocks": ["A"], "output_tokens": 2, "route_to": 0},
    {"id": "at-limits", "at_ms": 10, "blocks": ["B*2"], "output_tokens": 2, "route_to": 0},
    {"id": "ttft-over", "at_ms": 1000, "blocks": ["C*2"], "tail_tokens": 1, "output_tokens": 1, "route_to": 0},
    {"id": "tpot-over", "at_ms": 1010, "blocks": ["D*2"], "output_tokens": 3, "route_to": 0},
    {"id": "one-token", "at_ms": 2000, "blocks": ["E*2"], "output_tokens": 1, "route_to": 0},
    {"id": "slow-prompt", "at_ms": 2010, "blocks": ["F*3"], "output_tokens": 1, "route_to": 0},
    {"id": "killed", "at_ms": 3000, "blocks": ["G"], "output_tokens": 100, "route_to": 1}
  ]},
  "report": {"per_request": %PER_REQUEST%}%SLO%
}`

func sloRun(t *testing.T, slo string, perRequest bool) *Report {
	t.Helper()
	js := strings.ReplaceAll(sloScenario, "%PER_REQUEST%", map[bool]string{true: "true", false: "false"}[perRequest])
	if slo != "" {
		slo = `, "slo": ` + slo
	}
	js = strings.ReplaceAll(js, "%SLO%", slo)
	s, err := Parse([]byte(js), ParseEnv{})
	require.NoError(t, err)
	rep, err := Run(context.Background(), s, RunOptions{})
	require.NoError(t, err)
	return rep
}

func ptr(v float64) *float64 { return &v }

func TestSLOAttainmentByHand(t *testing.T) {
	rep := sloRun(t, `{"ttft_ms": 4.2, "tpot_ms": 1.33}`, true)

	// The derivation's timings, from the per-request rows.
	want := map[string][2]float64{ // first token, done
		"fast": {2.6, 3.77}, "at-limits": {14.2, 15.53}, "ttft-over": {1004.3, 1004.3},
		"tpot-over": {1014.2, 1016.87}, "one-token": {2004.2, 2004.2}, "slow-prompt": {2015.8, 2015.8},
	}
	for _, row := range rep.Requests {
		if w, ok := want[row.ID]; ok {
			require.NotNil(t, row.DoneMS, row.ID)
			assert.InDelta(t, w[0], *row.FirstTokenMS, 1e-9, row.ID)
			assert.InDelta(t, w[1], *row.DoneMS, 1e-9, row.ID)
			assert.Equal(t, StatusCompleted, row.Status, row.ID)
		} else {
			assert.Equal(t, "killed", row.ID)
			assert.Equal(t, StatusKilled, row.Status)
			assert.Equal(t, 3015.0, *row.DoneMS)
		}
	}

	assert.Equal(t, &SLOSummary{TTFTMS: ptr(4.2), TPOTMS: ptr(1.33), Requests: 7, Met: 3, Missed: 4,
		Killed: 1, Attainment: ptr(3.0 / 7)}, rep.Summary.SLO)

	ts := rep.Timeseries
	require.Equal(t, 20.0, ts.BucketMS)
	got := map[int]float64{}
	for i, b := range ts.Buckets {
		if b.Attainment != nil {
			got[i] = *b.Attainment
		}
	}
	assert.Equal(t, map[int]float64{0: 1, 50: 0, 100: 0.5, 150: 0}, got)
}

// Each limit alone judges only its own figure; one-token answers always meet a TPOT limit.
func TestSLOOneLimit(t *testing.T) {
	cases := []struct {
		slo       string
		met       int64
		ttft      *float64
		tpot      *float64
		byBucket0 float64
	}{
		// TTFT ≤ 4.2 alone: fast, at-limits, tpot-over, one-token (the killed one is missed).
		{`{"ttft_ms": 4.2}`, 4, ptr(4.2), nil, 1},
		// TPOT ≤ 1.33 alone: all but tpot-over and killed; ttft-over, one-token and slow-prompt
		// have one token, so TPOT 0.
		{`{"tpot_ms": 1.33}`, 5, nil, ptr(1.33), 1},
		// TPOT ≤ 1.329 ms: at-limits (1.33) now misses too.
		{`{"tpot_ms": 1.329}`, 4, nil, ptr(1.329), 0.5},
		// A limit of one nanosecond above TTFT 4.3 ms lets ttft-over in.
		{`{"ttft_ms": 4.300001, "tpot_ms": 1.335}`, 5, ptr(4.300001), ptr(1.335), 1},
	}
	for _, c := range cases {
		t.Run(c.slo, func(t *testing.T) {
			rep := sloRun(t, c.slo, false)
			got := rep.Summary.SLO
			require.NotNil(t, got)
			assert.Equal(t, c.met, got.Met)
			assert.Equal(t, 7-c.met, got.Missed)
			assert.Equal(t, int64(1), got.Killed)
			assert.Equal(t, c.ttft, got.TTFTMS)
			assert.Equal(t, c.tpot, got.TPOTMS)
			require.NotNil(t, rep.Timeseries.Buckets[0].Attainment)
			assert.Equal(t, c.byBucket0, *rep.Timeseries.Buckets[0].Attainment)
		})
	}
}

// Without an slo the report says null, every bucket's attainment is null, and nothing else of
// the report changes when one is added: the SLO judges the run, it does not change it.
func TestSLOChangesNoSimulatedFigure(t *testing.T) {
	without := sloRun(t, "", true)
	assert.Nil(t, without.Summary.SLO)
	for _, b := range without.Timeseries.Buckets {
		assert.Nil(t, b.Attainment)
	}
	with := sloRun(t, `{"ttft_ms": 4.2, "tpot_ms": 1.33}`, true)
	strip := func(r *Report) string {
		c := *r
		c.Sim, c.Digest, c.ScenarioID = nil, "", ""
		c.Summary.SLO = nil
		c.Timeseries.Buckets = append([]Bucket{}, r.Timeseries.Buckets...)
		for i := range c.Timeseries.Buckets {
			c.Timeseries.Buckets[i].Attainment = nil
		}
		b, err := json.Marshal(&c)
		require.NoError(t, err)
		return string(b)
	}
	assert.Equal(t, strip(without), strip(with))
	assert.NotEqual(t, without.ScenarioID, with.ScenarioID)
}

func TestMetSLO(t *testing.T) {
	const ms = 1_000_000
	cases := []struct {
		name                             string
		ttft, tpot, at, first, done, out int64
		want                             bool
	}{
		{"one token ignores TPOT", -1, 1, 0, 5 * ms, 5 * ms, 1, true},
		{"TTFT equal", 3 * ms, -1, 1 * ms, 4 * ms, 9 * ms, 2, true},
		{"TTFT one ns over", 3 * ms, -1, 1 * ms, 4*ms + 1, 9 * ms, 2, false},
		{"TPOT equal", -1, 2 * ms, 0, 0, 6 * ms, 4, true},
		{"TPOT a third of a ns over", -1, 2 * ms, 0, 0, 6*ms + 1, 4, false},
		{"no limits", -1, -1, 0, 1e12, 1e15, 1 << 30, true},
		// 2^62 ns over 2^30 − 1 gaps is just over 2^32 ns (4.29 s) per token.
		{"long answer within", -1, 5_000 * ms, 0, 0, 1 << 62, 1 << 30, true},
		{"long answer over", -1, 4_000 * ms, 0, 0, 1 << 62, 1 << 30, false},
	}
	for _, c := range cases {
		assert.Equal(t, c.want, metSLO(c.ttft, c.tpot, c.at, c.first, c.done, int32(c.out)), c.name)
	}
}

// summary.slo is computed as requests finish, not from per-request rows: with and without
// rows it is the same, and it agrees with what the rows say.
func TestSLOWithoutPerRequestRows(t *testing.T) {
	js := `{"fleet": {"workers": 4, "gpu_blocks": 512, "host_blocks": 1024},
		"slo": {"ttft_ms": 250, "tpot_ms": 12},
		"scale_in": [{"at_ms": 4000, "count": 2, "grace_ms": 300}],
		"workload": {"type": "sessions", "sessions": {"count": 200, "turns": 3, "rate_per_s": 60}},
		"report": {"per_request": %v}}`
	run := func(per bool) *Report {
		s, err := Parse([]byte(strings.ReplaceAll(js, "%v", map[bool]string{true: "true", false: "false"}[per])), ParseEnv{})
		require.NoError(t, err)
		rep, err := Run(context.Background(), s, RunOptions{})
		require.NoError(t, err)
		return rep
	}
	with, without := run(true), run(false)
	require.NotNil(t, without.Summary.SLO)
	assert.Equal(t, with.Summary.SLO, without.Summary.SLO)
	assert.Equal(t, with.Timeseries, without.Timeseries)
	assert.Empty(t, without.Requests)

	// The same judgement from the rows, with the sessions' 128 output tokens per answer.
	const outputTokens = 128
	var met, killed int64
	bucketNS := msToNS(with.Timeseries.BucketMS)
	perBucket := map[int64][2]int64{} // arrivals, met
	for _, r := range with.Requests {
		ok := false
		if r.Status == StatusKilled {
			killed++
		} else {
			ttft := msToNS(*r.FirstTokenMS) - msToNS(r.ArrivalMS)
			span := msToNS(*r.DoneMS) - msToNS(*r.FirstTokenMS)
			ok = ttft <= msToNS(250) && float64(span)/float64(outputTokens-1) <= 12e6
		}
		i := msToNS(r.ArrivalMS) / bucketNS
		c := perBucket[i]
		c[0]++
		if ok {
			met++
			c[1]++
		}
		perBucket[i] = c
	}
	got := without.Summary.SLO
	assert.Equal(t, with.Summary.Requests.Total, got.Requests)
	assert.Equal(t, met, got.Met)
	assert.Equal(t, got.Requests-met, got.Missed)
	assert.Equal(t, killed, got.Killed)
	assert.Equal(t, with.Summary.Requests.Killed, got.Killed)
	assert.Positive(t, got.Met)
	assert.Positive(t, got.Missed-got.Killed, "some completed requests should miss at these limits")
	assert.Positive(t, got.Killed, "the grace should kill some requests")

	for i, b := range without.Timeseries.Buckets {
		c, ok := perBucket[int64(i)]
		if !ok {
			assert.Nil(t, b.Attainment, "bucket %d has no arrival", i)
			continue
		}
		require.NotNil(t, b.Attainment, "bucket %d has arrivals", i)
		assert.Equal(t, float64(c[1])/float64(c[0]), *b.Attainment, "bucket %d", i)
	}
}

func TestSLOParse(t *testing.T) {
	base := `{"workload": {"type": "sessions"}%s}`
	with := func(slo string) string { return strings.Replace(base, "%s", `, "slo": `+slo, 1) }

	t.Run("OK", func(t *testing.T) {
		s, err := Parse([]byte(with(`{"ttft_ms": 3000, "tpot_ms": 100}`)), ParseEnv{})
		require.NoError(t, err)
		assert.Equal(t, &SLO{TTFTMS: ptr(3000), TPOTMS: ptr(100)}, s.SLO)
		assert.Contains(t, string(s.CanonicalJSON()), `"slo":{"ttft_ms":3000,"tpot_ms":100}`)

		s, err = Parse([]byte(with(`{"tpot_ms": 50}`)), ParseEnv{})
		require.NoError(t, err)
		assert.Equal(t, &SLO{TPOTMS: ptr(50)}, s.SLO)
		assert.Contains(t, string(s.CanonicalJSON()), `"slo":{"tpot_ms":50}`)
	})

	// A scenario without slo keeps its canonical JSON, hence its id; "slo": null is the same.
	t.Run("AbsentKeepsID", func(t *testing.T) {
		plain, err := Parse([]byte(strings.Replace(base, "%s", "", 1)), ParseEnv{})
		require.NoError(t, err)
		null, err := Parse([]byte(with("null")), ParseEnv{})
		require.NoError(t, err)
		assert.NotContains(t, string(plain.CanonicalJSON()), "slo")
		assert.Equal(t, plain.ID(), null.ID())
		set, err := Parse([]byte(with(`{"ttft_ms": 3000}`)), ParseEnv{})
		require.NoError(t, err)
		assert.NotEqual(t, plain.ID(), set.ID())
		// The stored form parses back to the same scenario.
		again, err := Parse(set.CanonicalJSON(), ParseEnv{})
		require.NoError(t, err)
		assert.Equal(t, set.ID(), again.ID())
	})

	cases := []struct {
		name, slo, path string
		fragments       []string
	}{
		{"ErrEmpty", `{}`, "slo", []string{`"ttft_ms"`, `"tpot_ms"`, "leave slo out"}},
		{"ErrTTFTZero", `{"ttft_ms": 0}`, "slo.ttft_ms", []string{"must be > 0", "(got 0)", "first token", "leave it out"}},
		{"ErrTPOTNegative", `{"ttft_ms": 10, "tpot_ms": -1}`, "slo.tpot_ms", []string{"must be > 0", "(got -1)", "per output token"}},
		{"ErrTooLong", `{"ttft_ms": 1e9}`, "slo.ttft_ms", []string{"≤ 3600000 ms (got 1e+09)"}},
		{"ErrString", `{"ttft_ms": "3s"}`, "slo.ttft_ms", []string{"must be a number"}},
		{"ErrTypo", `{"tfft_ms": 3000}`, "slo.tfft_ms", []string{`did you mean "ttft_ms"`}},
		{"ErrNotObject", `3000`, "slo", []string{"must be an object"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			requireFieldError(t, parseErrors(t, with(c.slo), ParseEnv{}), c.path, c.fragments...)
		})
	}
}

func TestFormatSLO(t *testing.T) {
	assert.Equal(t, "TTFT ≤ 3 s and TPOT ≤ 100 ms", FormatSLO(ptr(3000), ptr(100)))
	assert.Equal(t, "TTFT ≤ 1.5 s", FormatSLO(ptr(1500), nil))
	assert.Equal(t, "TPOT ≤ 12.5 ms", FormatSLO(nil, ptr(12.5)))
	assert.Equal(t, "TTFT ≤ 1000.5 ms", FormatSLO(ptr(1000.5), nil))
	assert.Equal(t, "", FormatSLO(nil, nil))
}

// BenchmarkMooncake16SLO is BenchmarkMooncake16 with an slo: what tracking attainment costs
// (compare with BenchmarkMooncake16, and that one with the build before SLO tracking).
func BenchmarkMooncake16SLO(b *testing.B) {
	benchRun(b, `{"name": "bench mooncake 16", "fleet": {"workers": 16},
		"slo": {"ttft_ms": 3000, "tpot_ms": 100},
		"workload": {"type": "trace", "trace": {"name": "mooncake-conversation"}}}`)
}

// BenchmarkSLOTrackerCompleted is what an slo costs per finished request: one judgement and one
// count in each of the three arrival families. Multiplied by a run's requests it is the whole
// cost of SLO tracking (a run without an slo pays one nil check per request instead).
func BenchmarkSLOTrackerCompleted(b *testing.B) {
	tr := newSLOTracker(&SLO{TTFTMS: ptr(3000), TPOTMS: ptr(100)})
	r := &request{firstToken: 2_000_000_000, output: 128}
	var at int64
	for b.Loop() {
		at += 1_000_000 // a request per ms: arrivals spread over the buckets, coarsening as a run does
		r.atNS, r.firstToken = at, at+2_000_000_000
		tr.completed(r, r.firstToken+10_000_000_000)
	}
	if tr.met+tr.missed == 0 {
		b.Fatal("nothing recorded")
	}
}
