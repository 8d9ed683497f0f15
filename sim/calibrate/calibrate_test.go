package calibrate

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/scalein-planner/scalein/sim"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/mat"
)

func coefs(t sim.Timing) [5]float64 {
	return [5]float64{t.PrefillMS, t.PrefillMSPer1kTokens, t.DecodeMS, t.DecodeMSPerSeq, t.DecodeMSPer1kKVTokens}
}

// simulatedPasses runs a small scenario with the given timing and exports worker 0's passes.
func simulatedPasses(t *testing.T, timing string) []byte {
	t.Helper()
	js := `{"name": "fit back", "fleet": {"workers": 2, "gpu_blocks": 2048, "host_blocks": 0, "block_size": 16,
		"max_num_seqs": 16, "max_batched_tokens": 512, "timing": ` + timing + `},
		"kvcr": {"enabled": false},
		"workload": {"type": "sessions", "sessions": {"count": 60, "turns": 3, "rate_per_s": 40,
			"system_prompt_tokens": 700, "new_input_tokens": 300, "output_tokens": 40, "think_time_ms": 300}}}`
	s, err := sim.Parse([]byte(js), sim.ParseEnv{})
	require.NoError(t, err)
	var buf bytes.Buffer
	pw := NewPassWriter(&buf, 0, 0)
	_, err = sim.Run(context.Background(), s, sim.RunOptions{Pass: pw.Record})
	require.NoError(t, err)
	require.NoError(t, pw.Flush())
	require.Greater(t, pw.N, 100)
	return buf.Bytes()
}

// Passes exported from simulated runs fit back to the timing they were simulated with.
func TestFitBackSimulatedPasses(t *testing.T) {
	for _, tc := range []struct {
		name   string
		timing sim.Timing
	}{
		{"default timing", sim.Timing{PrefillMS: 2, PrefillMSPer1kTokens: 65, DecodeMS: 8, DecodeMSPerSeq: 0.05, DecodeMSPer1kKVTokens: 0.03}},
		{"without the KV term", sim.Timing{PrefillMS: 2, PrefillMSPer1kTokens: 65, DecodeMS: 8, DecodeMSPerSeq: 0.05}},
		{"memory-bound decode", sim.Timing{PrefillMS: 1.5, PrefillMSPer1kTokens: 40, DecodeMS: 5, DecodeMSPerSeq: 0.2, DecodeMSPer1kKVTokens: 0.8}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tm := tc.timing
			js := fmt.Sprintf(`{"prefill_ms": %g, "prefill_ms_per_1k_tokens": %g, "decode_ms": %g, "decode_ms_per_seq": %g, "decode_ms_per_1k_kv_tokens": %g}`,
				tm.PrefillMS, tm.PrefillMSPer1kTokens, tm.DecodeMS, tm.DecodeMSPerSeq, tm.DecodeMSPer1kKVTokens)
			data := simulatedPasses(t, js)
			read, err := Parse(bytes.NewReader(data), Options{Worker: "0"})
			require.NoError(t, err)
			res := Fit(read)
			want, got := coefs(tm), coefs(res.Timing)
			for j := range want {
				assert.InDelta(t, want[j], got[j], 1e-6, "%s", coefNames[j])
			}
			// Mixed and pure passes were all there.
			assert.Positive(t, res.Classes.Prefill.N)
			assert.Positive(t, res.Classes.Decode.N)
			assert.Positive(t, res.Classes.Mixed.N)
			assert.Equal(t, res.Passes, res.Classes.Prefill.N+res.Classes.Decode.N+res.Classes.Mixed.N)
			for _, c := range []ClassFit{res.Classes.Prefill, res.Classes.Decode, res.Classes.Mixed} {
				require.NotNil(t, c.MAPE)
				assert.Less(t, *c.MAPE, 1e-4)
			}
			pinned := strings.Contains(strings.Join(res.Warnings, "\n"), "decode_ms_per_1k_kv_tokens is pinned at 0")
			assert.Equal(t, tm.DecodeMSPer1kKVTokens == 0, pinned, "%v", res.Warnings)
		})
	}
}

// synthetic draws n passes of the three classes with known timing and ±noise relative noise.
func synthetic(rng *rand.Rand, tm sim.Timing, n int, noise float64) []Pass {
	passes := make([]Pass, n)
	for i := range passes {
		var p Pass
		switch i % 3 {
		case 0:
			p.PrefillRequests = 1 + rng.Int64N(4)
			p.PrefillTokens = 16 + rng.Int64N(2048)
		case 1:
			p.DecodeRequests = 1 + rng.Int64N(128)
			p.DecodeKVTokens = p.DecodeRequests * (200 + rng.Int64N(20000))
		default:
			p.PrefillRequests = 1
			p.PrefillTokens = 16 + rng.Int64N(2048)
			p.DecodeRequests = 1 + rng.Int64N(128)
			p.DecodeKVTokens = p.DecodeRequests * (200 + rng.Int64N(20000))
		}
		y := Predict(tm, p) * (1 + noise*(2*rng.Float64()-1))
		p.WallTimeS = y / 1000
		passes[i] = p
	}
	return passes
}

// Noisy synthetic passes (±5 %) fit within a few percent of their coefficients.
func TestFitNoisySynthetic(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 12))
	tm := sim.Timing{PrefillMS: 2, PrefillMSPer1kTokens: 65, DecodeMS: 8, DecodeMSPerSeq: 0.05, DecodeMSPer1kKVTokens: 0.03}
	res := Fit(&Read{Passes: synthetic(rng, tm, 30000, 0.05)})
	want, got := coefs(tm), coefs(res.Timing)
	for j := range want {
		t.Logf("%s: want %g, got %g (%.2f %%)", coefNames[j], want[j], got[j], 100*(got[j]-want[j])/want[j])
		assert.InEpsilon(t, want[j], got[j], 0.05, "%s: %g", coefNames[j], got[j])
	}
	for _, c := range []ClassFit{res.Classes.Prefill, res.Classes.Decode, res.Classes.Mixed} {
		require.NotNil(t, c.R2)
		assert.Greater(t, *c.R2, 0.9)
		assert.InDelta(t, 2.5, *c.MAPE, 0.5, "uniform ±5 %% noise has a mean absolute error of 2.5 %%")
	}
	assert.Empty(t, res.Warnings)
}

// The exact answer of NNLS on a small problem: the best feasible unconstrained least-squares
// solution over every subset of columns (the optimum's passive set is one of them).
func bruteNNLS(A *mat.Dense, b []float64) (best []float64, bestRes float64) {
	m, n := A.Dims()
	bestRes = math.Inf(1)
	for mask := 0; mask < 1<<n; mask++ {
		passive := make([]bool, n)
		for j := range n {
			passive[j] = mask&(1<<j) != 0
		}
		z := solvePassive(A, b, passive)
		ok := true
		for _, v := range z {
			if v < -1e-12 {
				ok = false
			}
		}
		if !ok {
			continue
		}
		if r := residual(A, b, z); r < bestRes-1e-12 {
			best, bestRes = z, r
		}
		_ = m
	}
	return best, bestRes
}

func residual(A *mat.Dense, b []float64, x []float64) float64 {
	m, _ := A.Dims()
	r := mat.NewVecDense(m, nil)
	r.MulVec(A, mat.NewVecDense(len(x), x))
	s := 0.0
	for i := range m {
		d := r.AtVec(i) - b[i]
		s += d * d
	}
	return math.Sqrt(s)
}

func TestNNLSMatchesExhaustiveActiveSets(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for trial := range 2000 {
		n := 1 + rng.IntN(5)
		m := n + rng.IntN(5)
		if trial%7 == 0 {
			m = max(1, n-1) // underdetermined: the residual is still unique
		}
		A := mat.NewDense(m, n, nil)
		b := make([]float64, m)
		for i := range m {
			for j := range n {
				A.Set(i, j, rng.NormFloat64())
			}
			b[i] = 3 * rng.NormFloat64()
		}
		x := nnls(A, b)
		for _, v := range x {
			require.GreaterOrEqual(t, v, 0.0)
		}
		want, wantRes := bruteNNLS(A, b)
		got := residual(A, b, x)
		require.InDelta(t, wantRes, got, 1e-9*(1+wantRes), "trial %d: nnls %v, exhaustive %v", trial, x, want)
		if m >= n {
			for j := range want {
				require.InDelta(t, want[j], x[j], 1e-7, "trial %d coefficient %d", trial, j)
			}
		}
	}
}

const bareLine = `{"worker_id":"w1","dp_rank":0,"wall_time":0.012,"scheduled_requests":{"num_prefill_requests":1,"sum_prefill_tokens":100,"var_prefill_length":0,"num_decode_requests":3,"sum_decode_kv_tokens":3000},"queued_requests":{"num_prefill_requests":0}}`

func TestParseBothLineShapes(t *testing.T) {
	env := `{"received_at_ns": 1700000000000000000, "metrics": ` + bareLine + `}`
	in := bareLine + "\n\n" + env + "\n" + `{"wall_time": 0, "scheduled_requests": {"num_prefill_requests":0,"sum_prefill_tokens":0,"num_decode_requests":0,"sum_decode_kv_tokens":0}}` + "\n"
	read, err := Parse(strings.NewReader(in), Options{})
	require.NoError(t, err)
	require.Len(t, read.Passes, 2)
	assert.Equal(t, 1, read.Heartbeats)
	want := Pass{Line: 1, WorkerID: "w1", WallTimeS: 0.012, PrefillRequests: 1, PrefillTokens: 100, DecodeRequests: 3, DecodeKVTokens: 3000}
	assert.Equal(t, want, read.Passes[0])
	want.Line = 3
	assert.Equal(t, want, read.Passes[1])

	// -worker and -skip.
	in = strings.ReplaceAll(bareLine, `"w1"`, `"w2"`) + "\n" + bareLine + "\n" + bareLine + "\n" + bareLine + "\n"
	read, err = Parse(strings.NewReader(in), Options{Worker: "w1", Skip: 1})
	require.NoError(t, err)
	require.Len(t, read.Passes, 2)
	assert.Equal(t, 3, read.Passes[0].Line)
	assert.Equal(t, 1, read.OtherWorkers)
	assert.Equal(t, 1, read.Skipped)
	// No trailing newline, CRLF.
	read, err = Parse(strings.NewReader(bareLine+"\r\n"+bareLine), Options{})
	require.NoError(t, err)
	assert.Len(t, read.Passes, 2)
}

func TestParseMalformedLines(t *testing.T) {
	sched := `"scheduled_requests":{"num_prefill_requests":1,"sum_prefill_tokens":100,"num_decode_requests":0,"sum_decode_kv_tokens":0}`
	for _, tc := range []struct{ name, line, msg string }{
		{"not JSON", `wall_time=3`, "not a JSON object"},
		{"truncated", `{"wall_time": 0.1, `, "not valid JSON"},
		{"array", `[1,2]`, "not a JSON object"},
		{"metrics not an object", `{"received_at_ns": 1, "metrics": 3}`, "metrics must be an object"},
		{"received_at_ns not a number", `{"received_at_ns": "x", "metrics": {"wall_time": 0.1, ` + sched + `}}`, "received_at_ns must be a number"},
		{"no wall_time", `{` + sched + `}`, "no wall_time"},
		{"wall_time a string", `{"wall_time": "0.1", ` + sched + `}`, "wall_time must be a number"},
		{"wall_time negative", `{"wall_time": -0.1, ` + sched + `}`, "0 or more seconds"},
		{"wall_time in ms", `{"wall_time": 12000, ` + sched + `}`, "FPM gives seconds"},
		{"no scheduled_requests", `{"wall_time": 0.1}`, "no scheduled_requests"},
		{"scheduled_requests not an object", `{"wall_time": 0.1, "scheduled_requests": []}`, "scheduled_requests must be an object"},
		{"missing count", `{"wall_time": 0.1, "scheduled_requests": {"num_prefill_requests":1,"sum_prefill_tokens":100,"num_decode_requests":0}}`, "no sum_decode_kv_tokens"},
		{"negative count", `{"wall_time": 0.1, "scheduled_requests": {"num_prefill_requests":-1,"sum_prefill_tokens":100,"num_decode_requests":0,"sum_decode_kv_tokens":0}}`, "whole number"},
		{"fractional count", `{"wall_time": 0.1, "scheduled_requests": {"num_prefill_requests":1.5,"sum_prefill_tokens":100,"num_decode_requests":0,"sum_decode_kv_tokens":0}}`, "whole number"},
		{"count a string", `{"wall_time": 0.1, "scheduled_requests": {"num_prefill_requests":"1","sum_prefill_tokens":100,"num_decode_requests":0,"sum_decode_kv_tokens":0}}`, "must be a number"},
		{"tokens without request", `{"wall_time": 0.1, "scheduled_requests": {"num_prefill_requests":0,"sum_prefill_tokens":100,"num_decode_requests":0,"sum_decode_kv_tokens":0}}`, "num_prefill_requests 0 with sum_prefill_tokens 100"},
		{"kv without decode", `{"wall_time": 0.1, "scheduled_requests": {"num_prefill_requests":1,"sum_prefill_tokens":100,"num_decode_requests":0,"sum_decode_kv_tokens":5}}`, "with no decoding request"},
		{"worker_id an object", `{"worker_id": {}, "wall_time": 0.1, ` + sched + `}`, "worker_id must be a string"},
		{"dp_rank fractional", `{"dp_rank": 0.5, "wall_time": 0.1, ` + sched + `}`, "dp_rank"},
		{"line too long", `{"wall_time": 0.1, "pad": "` + strings.Repeat("x", MaxLineBytes) + `", ` + sched + `}`, "longer than"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := bareLine + "\n" + tc.line + "\n" + bareLine + "\n"
			_, err := Parse(strings.NewReader(in), Options{})
			var ie *InputError
			require.ErrorAs(t, err, &ie)
			require.Len(t, ie.Lines, 1, ie.Error())
			assert.Equal(t, 2, ie.Lines[0].Line)
			assert.Contains(t, ie.Lines[0].Msg, tc.msg)
			assert.Contains(t, err.Error(), "line 2: ")
		})
	}
}

func TestParseWholeInputProblems(t *testing.T) {
	_, err := Parse(strings.NewReader(""), Options{})
	require.ErrorContains(t, err, "no pass to fit")
	_, err = Parse(strings.NewReader(bareLine), Options{Worker: "nobody"})
	require.ErrorContains(t, err, `1 lines of other workers than "nobody"`)
	_, err = Parse(strings.NewReader(bareLine), Options{Skip: -1})
	require.ErrorContains(t, err, "must be 0 or more")
	// Only the first 20 bad lines are listed.
	_, err = Parse(strings.NewReader(strings.Repeat("x\n", 25)), Options{})
	var ie *InputError
	require.ErrorAs(t, err, &ie)
	assert.Len(t, ie.Lines, 20)
	assert.Equal(t, 5, ie.More)
	assert.Contains(t, err.Error(), "and 5 more bad lines")
}

func TestFitWarnings(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	tm := sim.Timing{PrefillMS: 2, PrefillMSPer1kTokens: 65, DecodeMS: 8, DecodeMSPerSeq: 0.05, DecodeMSPer1kKVTokens: 0.03}
	var mixedOnly []Pass
	for _, p := range synthetic(rng, tm, 30, 0) {
		if p.Class() == ClassMixed {
			mixedOnly = append(mixedOnly, p)
		}
	}
	res := Fit(&Read{Passes: mixedOnly})
	all := strings.Join(res.Warnings, "\n")
	assert.Contains(t, all, "only 10 passes")
	assert.Contains(t, all, "no prefill-only pass")
	assert.Contains(t, all, "no decode-only pass")
	assert.Equal(t, 0, res.Classes.Prefill.N)
	assert.Nil(t, res.Classes.Prefill.R2)
	assert.Nil(t, res.Classes.Prefill.MAPE)
}
