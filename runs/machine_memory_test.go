package runs

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Issue 19 M4: the budgets follow a cgroup v1 memory limit as well as a v2 one.
func TestMachineMemoryReadsCgroupV1AndV2(t *testing.T) {
	write := func(t *testing.T, root, rel, content string) {
		t.Helper()
		p := filepath.Join(root, rel)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
	}
	const meminfo = "MemTotal:       25165824 kB\nMemFree:        1000 kB\n" // 24 GiB
	cases := []struct {
		name  string
		files map[string]string
		want  int64
	}{
		{"no cgroup", map[string]string{}, 24 << 30},
		{"v2 limit", map[string]string{"sys/fs/cgroup/memory.max": "1073741824\n"}, 1 << 30},
		{"v2 no limit", map[string]string{"sys/fs/cgroup/memory.max": "max\n"}, 24 << 30},
		{"v1 limit", map[string]string{"sys/fs/cgroup/memory/memory.limit_in_bytes": "1073741824\n"}, 1 << 30},
		{"v1 no limit", map[string]string{"sys/fs/cgroup/memory/memory.limit_in_bytes": "9223372036854771712\n"}, 24 << 30},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			write(t, root, "proc/meminfo", meminfo)
			for rel, content := range tc.files {
				write(t, root, rel, content)
			}
			assert.Equal(t, tc.want, machineMemory(root))
		})
	}
}
