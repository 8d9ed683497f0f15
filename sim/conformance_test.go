package sim

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// runFile parses and runs one scenario file and returns its report as a generic JSON tree.
func runFile(t *testing.T, path string) (*Report, any) {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	s, err := Parse(data, ParseEnv{})
	require.NoError(t, err)
	rep, err := Run(context.Background(), s, RunOptions{})
	require.NoError(t, err)
	return rep, reportTree(t, rep)
}

func reportTree(t *testing.T, rep *Report) any {
	t.Helper()
	b, err := json.Marshal(rep)
	require.NoError(t, err)
	var tree any
	require.NoError(t, json.Unmarshal(b, &tree))
	return tree
}

var pathStep = regexp.MustCompile(`^(?:\.?([A-Za-z_0-9]+))|^\[(\d+)\]|^\[id=([^\]]+)\]`)

// lookup resolves a path of examples/README.md ("requests[id=b1].first_token_ms") in a tree.
func lookup(t *testing.T, tree any, path string) any {
	t.Helper()
	cur := tree
	rest := path
	for rest != "" {
		m := pathStep.FindStringSubmatchIndex(rest)
		require.NotNil(t, m, "bad path %q at %q", path, rest)
		switch {
		case m[2] >= 0:
			name := rest[m[2]:m[3]]
			if name == "length" {
				if l, ok := cur.([]any); ok {
					cur = float64(len(l))
					break
				}
			}
			obj, ok := cur.(map[string]any)
			require.True(t, ok, "%s: %q is not an object member", path, name)
			v, ok := obj[name]
			require.True(t, ok, "%s: no member %q", path, name)
			cur = v
		case m[4] >= 0:
			i, _ := strconv.Atoi(rest[m[4]:m[5]])
			l, ok := cur.([]any)
			require.True(t, ok && i < len(l), "%s: no element %d", path, i)
			cur = l[i]
		default:
			id := rest[m[6]:m[7]]
			l, ok := cur.([]any)
			require.True(t, ok, "%s: not a list", path)
			var found any
			for _, el := range l {
				if o, ok := el.(map[string]any); ok && o["id"] == id {
					found = el
				}
			}
			require.NotNil(t, found, "%s: no element with id %q", path, id)
			cur = found
		}
		rest = rest[m[1]:]
	}
	return cur
}

// TestConformanceExamples runs every case of ../shared/examples (copied into testdata) and
// checks each expected value exactly.
func TestConformanceExamples(t *testing.T) {
	dir := filepath.Join("testdata", "examples")
	raw, err := os.ReadFile(filepath.Join(dir, "expected.json"))
	require.NoError(t, err)
	var expected map[string][]struct {
		Path  string `json:"path"`
		Value any    `json:"value"`
	}
	require.NoError(t, json.Unmarshal(raw, &expected))
	require.NotEmpty(t, expected)
	for file, checks := range expected {
		t.Run(strings.TrimSuffix(file, ".json"), func(t *testing.T) {
			_, tree := runFile(t, filepath.Join(dir, file))
			for _, c := range checks {
				require.Equal(t, c.Value, lookup(t, tree, c.Path), "%s: %s", file, c.Path)
			}
		})
	}
}
