package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Findings L3 and L5 of the 2026-12c probe: scalein load names its own flag, and scalein export
// says it writes the manifests, not a report.
func TestCommandMessagesName(t *testing.T) {
	code, _, stderr := runCLI(t, "", "load", "-prometheus", filepath.Join(t.TempDir(), "missing.json"))
	assert.NotEqual(t, 0, code)
	assert.Contains(t, stderr, "scalein load: -prometheus: ")
	assert.NotContains(t, stderr, "-load")

	dir := t.TempDir()
	code, scenario, stderr := runCLI(t, "", "import", "-manifest", chartsDir+"llm-d-decode-keda.yaml", "-config", loadDir+"scenario.json")
	require.Equal(t, 0, code, stderr)
	var doc map[string]any
	require.NoError(t, json.Unmarshal([]byte(scenario), &doc))
	config := filepath.Join(dir, "scenario.json")
	require.NoError(t, os.WriteFile(config, []byte(scenario), 0o644))
	code, _, stderr = runCLI(t, "", "export", "-config", config, "-o", filepath.Join(dir, "no such folder", "out.yaml"))
	assert.Equal(t, 1, code)
	assert.Contains(t, stderr, "scalein export: write the manifests")
	assert.NotContains(t, stderr, "report")
}
