package load

import (
	"strings"
	"testing"
)

// A scenario that writes the whole request shape gets no shape note; one that leaves a field
// out is told which.
func TestShapeNote(t *testing.T) {
	full := map[string]any{"turns": 2, "new_input_tokens": 100, "system_prompt_tokens": 50, "output_tokens": 20, "think_time_ms": 1000}
	doc := map[string]any{"fleet": map[string]any{"timing": map[string]any{}}}
	if n := shapeNote(doc, full); n != "" {
		t.Errorf("a full shape got %q", n)
	}
	delete(full, "output_tokens")
	n := shapeNote(map[string]any{}, full)
	if !strings.Contains(n, "workload.sessions.output_tokens") || !strings.Contains(n, "fleet.timing") || strings.Contains(n, "workload.sessions.turns") {
		t.Errorf("shape note %q", n)
	}
}
