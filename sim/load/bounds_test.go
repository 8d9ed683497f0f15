package load_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/scalein-planner/scalein/sim/load"
)

// answer is a query_range answer of the given series, each a label set and its samples.
func answer(series ...map[string]any) []byte {
	b, _ := json.Marshal(map[string]any{"status": "success", "data": map[string]any{"resultType": "matrix", "result": series}})
	return b
}

func series(labels map[string]string, samples ...[2]float64) map[string]any {
	values := make([][]any, len(samples))
	for i, s := range samples {
		values[i] = []any{s[0], fmt.Sprint(s[1])}
	}
	return map[string]any{"metric": labels, "values": values}
}

// TestFromPrometheusBounds replays findings L3 and L5 of the 2026-12c probe: answers whose stages
// no scenario accepts are refused where they are read, with the bound, and a message never
// quotes megabytes of the answer.
func TestFromPrometheusBounds(t *testing.T) {
	w := map[string]string{"job": "vllm"}
	refused := map[string]struct {
		data []byte
		o    load.Options
		want string
	}{
		"times past 2262":      {answer(series(w, [2]float64{1e300, 1}, [2]float64{2e300, 1})), load.Options{}, "not a Unix time between 1678 and 2262"},
		"a step of 1e9 s":      {answer(series(w, [2]float64{0, 1}, [2]float64{1e9, 1}, [2]float64{2e9, 2})), load.Options{Reading: load.ReadSessions}, "a scenario's stages last at most"},
		"five series of 9e8/s": {answer(series(map[string]string{"i": "1"}, [2]float64{0, 9e8}, [2]float64{60, 9e8}), series(map[string]string{"i": "2"}, [2]float64{0, 9e8}, [2]float64{60, 9e8})), load.Options{Reading: load.ReadSessions, SumSeries: true}, "above the 1e+09 a scenario's stage may have"},
	}
	for name, c := range refused {
		t.Run(name, func(t *testing.T) {
			_, err := load.FromPrometheus(c.data, c.o)
			require.Error(t, err)
			assert.Contains(t, err.Error(), c.want)
			assert.NotContains(t, err.Error(), "1677")
		})
	}

	t.Run("several series with 2 MB label sets", func(t *testing.T) {
		big := func(i int) map[string]string { return map[string]string{"pad": strings.Repeat(fmt.Sprint(i), 2<<20)} }
		data := answer(series(big(1), [2]float64{0, 1}, [2]float64{60, 1}), series(big(2), [2]float64{0, 1}, [2]float64{60, 1}), series(big(3), [2]float64{0, 1}, [2]float64{60, 1}))
		_, err := load.FromPrometheus(data, load.Options{})
		require.Error(t, err)
		assert.Contains(t, err.Error(), "3 series")
		assert.Less(t, len(err.Error()), 2000)
	})
	t.Run("an error text of 100 KB", func(t *testing.T) {
		data, _ := json.Marshal(map[string]any{"status": "error", "errorType": "bad_data", "error": strings.Repeat("e", 100_000)})
		_, err := load.FromPrometheus(data, load.Options{})
		require.Error(t, err)
		assert.Contains(t, err.Error(), "Prometheus answered with an error (bad_data)")
		assert.Contains(t, err.Error(), "more bytes)")
		assert.Less(t, len(err.Error()), 1000)
	})
}
