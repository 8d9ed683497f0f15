package sim

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"regexp"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const fullScenario = `{
  "name": "drain two",
  "seed": 42,
  "fleet": {
    "workers": 4, "gpu_blocks": 64, "host_blocks": 64, "block_size": 16, "bytes_per_token": 131072,
    "max_num_seqs": 128, "max_batched_tokens": 8192, "h2d_gbps": 32, "d2h_gbps": 32,
    "timing": {"prefill_ms": 2, "prefill_ms_per_1k_tokens": 65, "decode_ms": 8, "decode_ms_per_seq": 0.05}
  },
  "kvcr": {"enabled": true, "latency_ms": 1.0, "bandwidth_gbps": 50.0, "reject_draining_sources": true},
  "router": {"policy": "kv_aware", "hints": true, "prefill_load_scale": 1.0, "host_hit_weight": 0.75},
  "scale_in": [{"at_ms": 10, "workers": [3]}, {"at_ms": 20, "count": 1, "select": "highest_id", "grace_ms": 5}],
  "workload": {"type": "requests", "requests": [
    {"id": "a", "at_ms": 0, "blocks": ["P*4"], "tail_tokens": 0, "output_tokens": 3},
    {"id": "b", "at_ms": 1.5, "blocks": ["P*4", "Q"], "tail_tokens": 7, "output_tokens": 2, "route_to": 1}
  ]},
  "report": {"per_request": false}
}`

// The same scenario with members reordered, defaults left out and numbers written differently.
const sparseScenario = `{
  "workload": {"requests": [
    {"output_tokens": 3, "blocks": ["P*4"], "at_ms": 0, "id": "a"},
    {"route_to": 1, "tail_tokens": 7, "blocks": ["P*4", "Q"], "id": "b", "output_tokens": 2, "at_ms": 15e-1}
  ], "type": "requests"},
  "scale_in": [{"workers": [3], "at_ms": 10.0}, {"grace_ms": 5, "count": 1, "at_ms": 20}],
  "fleet": {"block_size": 16, "host_blocks": 64, "gpu_blocks": 64, "workers": 4},
  "name": "drain two"
}`

func TestScenarioIDIgnoresOrderAndOmittedDefaults(t *testing.T) {
	full := mustParse(t, fullScenario)
	sparse := mustParse(t, sparseScenario)
	assert.Equal(t, string(full.CanonicalJSON()), string(sparse.CanonicalJSON()))
	assert.Equal(t, full.ID(), sparse.ID())
	assert.Regexp(t, regexp.MustCompile(`^[a-z2-7]{16}$`), full.ID())

	// Parsing the canonical JSON again is a fixed point.
	again := mustParse(t, string(full.CanonicalJSON()))
	assert.Equal(t, full.CanonicalJSON(), again.CanonicalJSON())
	assert.Equal(t, full.ID(), again.ID())
}

func TestScenarioIDChangesWithEveryField(t *testing.T) {
	base := mustParse(t, fullScenario)
	f := func(v float64) *float64 { return &v }
	mutations := map[string]func(s *Scenario){
		"name":                   func(s *Scenario) { s.Name = "other" },
		"seed":                   func(s *Scenario) { s.Seed = 43 },
		"workers":                func(s *Scenario) { s.Fleet.Workers = 5 },
		"gpu_blocks":             func(s *Scenario) { s.Fleet.GPUBlocks = 65 },
		"host_blocks":            func(s *Scenario) { s.Fleet.HostBlocks = 65 },
		"block_size":             func(s *Scenario) { s.Fleet.BlockSize = 32 },
		"bytes_per_token":        func(s *Scenario) { s.Fleet.BytesPerToken = 1 },
		"max_num_seqs":           func(s *Scenario) { s.Fleet.MaxNumSeqs = 1 },
		"max_batched_tokens":     func(s *Scenario) { s.Fleet.MaxBatchedTokens = 1 },
		"h2d_gbps":               func(s *Scenario) { s.Fleet.H2DGBps = 1 },
		"d2h_gbps":               func(s *Scenario) { s.Fleet.D2HGBps = 1 },
		"prefill_ms":             func(s *Scenario) { s.Fleet.Timing.PrefillMS = 2.000001 },
		"prefill_per_1k":         func(s *Scenario) { s.Fleet.Timing.PrefillMSPer1kTokens = 1 },
		"decode_ms":              func(s *Scenario) { s.Fleet.Timing.DecodeMS = 1 },
		"decode_per_seq":         func(s *Scenario) { s.Fleet.Timing.DecodeMSPerSeq = 1 },
		"decode_per_1k_kv":       func(s *Scenario) { s.Fleet.Timing.DecodeMSPer1kKVTokens = 1 },
		"kvcr enabled":           func(s *Scenario) { s.KVCR.Enabled = false },
		"kvcr latency":           func(s *Scenario) { s.KVCR.LatencyMS = 2 },
		"kvcr bandwidth":         func(s *Scenario) { s.KVCR.BandwidthGBps = 2 },
		"guard":                  func(s *Scenario) { s.KVCR.RejectDrainingSources = false },
		"policy":                 func(s *Scenario) { s.Router.Policy = PolicyRoundRobin },
		"hints":                  func(s *Scenario) { s.Router.Hints = false },
		"prefill_load_scale":     func(s *Scenario) { s.Router.PrefillLoadScale = 2 },
		"host_hit_weight":        func(s *Scenario) { s.Router.HostHitWeight = 1 },
		"scale_in at":            func(s *Scenario) { s.ScaleIn[0].AtMS = 11 },
		"scale_in workers":       func(s *Scenario) { s.ScaleIn[0].Workers = []int{2} },
		"scale_in count":         func(s *Scenario) { s.ScaleIn[1].Count = 2 },
		"scale_in select":        func(s *Scenario) { s.ScaleIn[1].Select = SelectLeastCached },
		"scale_in grace":         func(s *Scenario) { s.ScaleIn[1].GraceMS = f(6) },
		"scale_in grace removed": func(s *Scenario) { s.ScaleIn[1].GraceMS = nil },
		"scale_in dropped":       func(s *Scenario) { s.ScaleIn = s.ScaleIn[:1] },
		"request id":             func(s *Scenario) { s.Workload.Requests[0].ID = "z" },
		"request at":             func(s *Scenario) { s.Workload.Requests[1].AtMS = 1.25 },
		"request blocks":         func(s *Scenario) { s.Workload.Requests[1].Blocks = []string{"P*4", "R"} },
		"request tail":           func(s *Scenario) { s.Workload.Requests[1].TailTokens = 8 },
		"request output":         func(s *Scenario) { s.Workload.Requests[0].OutputTokens = 4 },
		"request route_to":       func(s *Scenario) { s.Workload.Requests[1].RouteTo = nil },
		"per_request":            func(s *Scenario) { s.Report.PerRequest = true },
		"workload becomes traced": func(s *Scenario) {
			s.Workload = Workload{Type: WorkloadTrace, Trace: &TraceSpec{Name: BuiltinMooncakeConversation, TraceBlockTokens: 512, Speedup: 1}}
		},
	}
	seen := map[string]string{base.ID(): "base"}
	for name, mutate := range mutations {
		c := cloneScenario(base)
		mutate(c)
		id := c.ID()
		if other, dup := seen[id]; dup {
			t.Errorf("%s gives the same id as %s", name, other)
		}
		seen[id] = name
	}
	assert.Len(t, seen, len(mutations)+1)
	// Mutating clones never touched the base.
	assert.Equal(t, mustParse(t, fullScenario).ID(), base.ID())
}

func TestScenarioIDDependsOnModelVersion(t *testing.T) {
	s := mustParse(t, fullScenario)
	// Recompute the id without the model version: it must differ, so a new model version
	// gives new ids.
	saved := lowerBase32.EncodeToString(sha256Sum(s.CanonicalJSON()))[:16]
	assert.NotEqual(t, saved, s.ID())
}

func TestCanonicalJSONNegativeZeroAndFloats(t *testing.T) {
	a := mustParse(t, `{"scale_in": [{"at_ms": -0.0, "count": 1}], "workload": {"type": "sessions", "sessions": {"think_time_ms": 0.1}}}`)
	b := mustParse(t, `{"scale_in": [{"at_ms": 0, "count": 1}], "workload": {"type": "sessions", "sessions": {"think_time_ms": 1e-1}}}`)
	assert.Equal(t, a.ID(), b.ID())
	assert.NotContains(t, string(a.CanonicalJSON()), "-0")

	// The canonical JSON is complete: it decodes with every member present.
	var m map[string]any
	require.NoError(t, json.Unmarshal(a.CanonicalJSON(), &m))
	for _, k := range []string{"name", "seed", "fleet", "kvcr", "router", "scale_in", "workload", "report"} {
		assert.Contains(t, m, k)
	}
}

func sha256Sum(data []byte) []byte {
	sum := sha256.Sum256(data)
	return sum[:]
}

// CanonicalJSON calls MarshalJSON directly rather than through json.Marshal, which would
// compact its output again: the bytes, and so every id, must be the same as json.Marshal's.
func TestCanonicalJSONIsMarshal(t *testing.T) {
	docs := [][]byte{[]byte(fullScenario), []byte(`{"name": "<tags> & \u2028 odd \"names\"", "workload": {"type": "sessions", "sessions": {}}}`)}
	for _, p := range AllPresets() {
		docs = append(docs, p.JSON)
	}
	for _, doc := range docs {
		s, err := Parse(doc, ParseEnv{})
		require.NoError(t, err)
		want, err := json.Marshal(s)
		require.NoError(t, err)
		assert.Equal(t, string(want), string(s.CanonicalJSON()), s.Name)
	}
}

// BenchmarkCanonicalJSON: a capacity probe of 20,000 scripted requests, encoded as
// CanonicalJSON does and as json.Marshal would (which compacts MarshalJSON's output again).
func BenchmarkCanonicalJSON(b *testing.B) {
	s, err := Parse([]byte(fullScenario), ParseEnv{})
	require.NoError(b, err)
	reqs := make([]ScriptedRequest, 20000)
	for k := range reqs {
		reqs[k] = s.Workload.Requests[k%2]
		reqs[k].ID = "c" + strconv.Itoa(k)
		reqs[k].AtMS = float64(k) * 0.37
		reqs[k].RouteTo = nil
	}
	s.Workload.Requests = reqs
	b.Run("CanonicalJSON", func(b *testing.B) {
		for b.Loop() {
			s.CanonicalJSON()
		}
	})
	b.Run("json.Marshal", func(b *testing.B) {
		for b.Loop() {
			_, _ = json.Marshal(s)
		}
	})
}

// CanonicalJSON writes many scripted requests itself (canonicalScripted) with the bytes of
// encoding/json: random requests with plain and awkward ids and labels (escapes, HTML
// characters, non-ASCII, invalid UTF-8), times from 0 to beyond 1e21 ms, with and without
// route_to; the hand path is taken for the plain ones and declines the others.
func TestCanonicalScriptedIsMarshal(t *testing.T) {
	base, err := Parse([]byte(fullScenario), ParseEnv{})
	require.NoError(t, err)
	rng := rand.New(rand.NewPCG(3, 4))
	awkward := []string{`a"b`, `back\slash`, "<tag>", "a&b", "tab\there", "é", "\xff\xfe", "line\u2028sep", "ctl\x01"}
	label := func(plain bool) string {
		if !plain && rng.IntN(4) == 0 {
			return awkward[rng.IntN(len(awkward))]
		}
		return fmt.Sprintf("L%d*%d", rng.IntN(50), 1+rng.IntN(16))
	}
	times := []float64{0, 1e-7, 1e-6, 0.5, 1.25, 1234.5678, 1e20, 1e21, 3e22, 86400000.000001}
	hand := 0
	for round := range 60 {
		plain := round%2 == 0
		s := *base
		reqs := make([]ScriptedRequest, scriptedByHand+rng.IntN(300))
		for k := range reqs {
			r := ScriptedRequest{ID: "c" + strconv.Itoa(k), AtMS: float64(k) * rng.Float64() * 37.3,
				TailTokens: rng.IntN(64), OutputTokens: 1 + rng.IntN(500)}
			if t := times[rng.IntN(len(times))]; rng.IntN(10) == 0 && (!plain || t == 0 || t >= 1e-6 && t < 1e21) {
				r.AtMS = t
			}
			if !plain && rng.IntN(50) == 0 {
				r.ID = awkward[rng.IntN(len(awkward))]
			}
			for range 1 + rng.IntN(4) {
				r.Blocks = append(r.Blocks, label(plain))
			}
			if rng.IntN(3) == 0 {
				w := rng.IntN(8)
				r.RouteTo = &w
			}
			reqs[k] = r
		}
		s.Workload = Workload{Type: WorkloadRequests, Requests: reqs}
		want, err := json.Marshal(&s)
		require.NoError(t, err)
		require.Equal(t, string(want), string(s.CanonicalJSON()), "round %d", round)
		if _, ok := s.canonicalScripted(); ok {
			hand++
		}
	}
	require.Greater(t, hand, 10, "the hand path was not taken")
}
