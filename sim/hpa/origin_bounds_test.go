package hpa_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/scalein-planner/scalein/sim"
	"github.com/scalein-planner/scalein/sim/hpa"
)

// withAnnotations is the KEDA manifest with annotations.
func withAnnotations(kv map[string]string) string {
	var b strings.Builder
	b.WriteString("  annotations:\n")
	for k, v := range kv {
		b.WriteString("    " + k + ": '" + v + "'\n")
	}
	return strings.Replace(keda, "  namespace: default\n", "  namespace: default\n"+b.String(), 1)
}

// TestOriginKeepsWhatTheDownloadNeeds replays finding M3 of the 2026-12c probe: an imported
// object's origin no longer carries megabytes of annotations into the plans that store it.
func TestOriginKeepsWhatTheDownloadNeeds(t *testing.T) {
	t.Run("large annotations are left out, with a problem", func(t *testing.T) {
		im, err := hpa.Import([]byte(withAnnotations(map[string]string{"pad": strings.Repeat("x", 900_000)})), sim.Autoscaler{})
		require.NoError(t, err)
		require.NotNil(t, im.Origin)
		assert.Less(t, len(im.Origin.Document), 4<<10, "the origin is the object's spec and name")
		assert.NotContains(t, string(im.Origin.Document), "xxxx")
		assert.Contains(t, string(im.Origin.Document), "vllm-scaledobject")
		var found bool
		for _, p := range im.Problems {
			if p.Path == "metadata" && strings.Contains(p.Message, "left out") {
				found = true
			}
		}
		assert.True(t, found, "a problem says the annotations were left out: %v", im.Problems)
	})
	t.Run("small annotations are kept, kubectl's copy is not", func(t *testing.T) {
		im, err := hpa.Import([]byte(withAnnotations(map[string]string{"team": "inference",
			"kubectl.kubernetes.io/last-applied-configuration": strings.Repeat("y", 3000)})), sim.Autoscaler{})
		require.NoError(t, err)
		require.NotNil(t, im.Origin)
		assert.Contains(t, string(im.Origin.Document), `"team":"inference"`)
		assert.NotContains(t, string(im.Origin.Document), "last-applied")
	})
	t.Run("a large origin sent back is refused", func(t *testing.T) {
		im, err := hpa.Import([]byte(keda), sim.Autoscaler{})
		require.NoError(t, err)
		var doc map[string]any
		require.NoError(t, json.Unmarshal(im.Origin.Document, &doc))
		doc["metadata"].(map[string]any)["annotations"] = map[string]string{"pad": strings.Repeat("z", hpa.MaxOriginBytes)}
		im.Origin.Document, err = json.Marshal(doc)
		require.NoError(t, err)
		raw, err := json.Marshal(im.Origin)
		require.NoError(t, err)
		_, err = hpa.ReadOrigin(raw, im.Autoscaler)
		require.Error(t, err)
		assert.Contains(t, err.Error(), "origin.document")
		assert.Contains(t, err.Error(), "at most 64 KiB")
		assert.Less(t, len(err.Error()), 500)

		raw = []byte(`{"kind":"ScaledObject","document":"` + strings.Repeat("w", 2<<20) + `"}`)
		_, err = hpa.ReadOrigin(raw, im.Autoscaler)
		require.Error(t, err)
		assert.Contains(t, err.Error(), "origin: 2049 KiB; at most 1156 KiB")
	})
	t.Run("the user's file is kept within its bound, and refused over it when sent back", func(t *testing.T) {
		small, err := hpa.Import([]byte(keda), sim.Autoscaler{})
		require.NoError(t, err)
		require.NotNil(t, small.Origin)
		assert.Equal(t, keda, small.Origin.Manifest, "the file is kept byte for byte for the download to edit")

		// A file over the bound (a long comment): the object is kept, the file is not, and a
		// problem says the download writes into the object alone.
		big := keda + "# " + strings.Repeat("c", hpa.MaxOriginManifestBytes) + "\n"
		im, err := hpa.Import([]byte(big), sim.Autoscaler{})
		require.NoError(t, err)
		require.NotNil(t, im.Origin)
		assert.Empty(t, im.Origin.Manifest)
		assert.Contains(t, string(im.Origin.Document), "vllm-scaledobject")
		var found bool
		for _, p := range im.Problems {
			if strings.Contains(p.Message, "256 KiB a plan keeps") {
				found = true
			}
		}
		assert.True(t, found, "a problem says the file was not kept: %v", im.Problems)

		// The CLI stores nothing and edits the file on disk: it keeps the whole file.
		whole, err := hpa.ImportWith([]byte(big), sim.Autoscaler{}, hpa.ImportOptions{WholeFile: true})
		require.NoError(t, err)
		require.NotNil(t, whole.Origin)
		assert.Equal(t, big, whole.Origin.Manifest)

		// An origin sent back with a file over the bound is refused naming origin.manifest.
		small.Origin.Manifest = big
		raw, err := json.Marshal(small.Origin)
		require.NoError(t, err)
		_, err = hpa.ReadOrigin(raw, small.Autoscaler)
		require.Error(t, err)
		assert.Contains(t, err.Error(), "origin.manifest")
		assert.Contains(t, err.Error(), "at most 256 KiB")
		assert.Less(t, len(err.Error()), 500)
	})
}
