package sim

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestCodeCitesExistingModelSections: every section of docs/model.md the code cites exists
// (as an <a id> anchor), so the model the code follows is in the repository.
func TestCodeCitesExistingModelSections(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "docs", "model.md"))
	require.NoError(t, err)
	have := map[string]bool{}
	for _, m := range regexp.MustCompile(`<a id="([a-z0-9-]+)"></a>`).FindAllSubmatch(doc, -1) {
		have[string(m[1])] = true
	}
	require.NotEmpty(t, have)
	cite := regexp.MustCompile(`docs/model\.md#([a-z0-9-]+)`)
	cited := 0
	err = filepath.WalkDir("..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (strings.HasPrefix(d.Name(), ".") || d.Name() == "node_modules" || d.Name() == "test-artifacts") && path != ".." {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, m := range cite.FindAllSubmatch(src, -1) {
			cited++
			require.True(t, have[string(m[1])], "%s cites docs/model.md#%s, which docs/model.md does not have", path, m[1])
		}
		require.False(t, strings.Contains(string(src), "SPEC "+"§"), "%s cites the spec, which the repository does not hold; cite docs/model.md", path)
		return nil
	})
	require.NoError(t, err)
	require.Greater(t, cited, 100)
}
