package sim

import "testing"

// BenchmarkEstimateMooncake is the memory estimate of the Mooncake trace on 16 workers, the
// first time (the key census computed) and for another fleet size on the same trace (the
// census kept), as a sweep or a plan over the trace asks it.
func BenchmarkEstimateMooncake(b *testing.B) {
	s16 := mustParseB(b, `{"fleet": {"workers": 16}, "workload": {"type": "trace", "trace": {"name": "mooncake-conversation"}}}`)
	s24 := mustParseB(b, `{"fleet": {"workers": 24}, "workload": {"type": "trace", "trace": {"name": "mooncake-conversation"}}}`)
	b.Run("census", func(b *testing.B) {
		for b.Loop() {
			censuses.Purge()
			EstimateMemory(s16)
		}
	})
	b.Run("kept", func(b *testing.B) {
		censuses.Purge()
		EstimateMemory(s16)
		for b.Loop() {
			EstimateMemory(s24)
		}
	})
}

func mustParseB(b *testing.B, doc string) *Scenario {
	b.Helper()
	s, err := Parse([]byte(doc), ParseEnv{})
	if err != nil {
		b.Fatal(err)
	}
	return s
}
