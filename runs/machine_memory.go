package runs

import (
	"bufio"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// cgroupLimitFiles are where a memory limit is read, first match wins: cgroup v2's memory.max,
// then cgroup v1's memory.limit_in_bytes (issue 19 M4: v1 used to be ignored, so a pod limited
// to 1 GiB derived its budgets from the host's memory).
var cgroupLimitFiles = []string{
	"sys/fs/cgroup/memory.max",
	"sys/fs/cgroup/memory/memory.limit_in_bytes",
}

// machineMemory is MachineMemory with the filesystem rooted at root (tests give a directory
// of fake files). A cgroup "max", or a v1 limit at or above MemTotal (v1 writes a huge number
// for "no limit"), means no limit.
func machineMemory(root string) int64 {
	total := memTotal(filepath.Join(root, "proc/meminfo"))
	for _, f := range cgroupLimitFiles {
		b, err := os.ReadFile(filepath.Join(root, f))
		if err != nil {
			continue
		}
		v, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
		if err != nil || v <= 0 {
			continue // "max": no limit at this level
		}
		if total > 0 && v >= total {
			break
		}
		return v
	}
	return total
}

// memTotal reads MemTotal from a meminfo file, in bytes; 0 if it cannot.
func memTotal(path string) int64 {
	f, err := os.Open(path)
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) >= 2 && fields[0] == "MemTotal:" {
			kb, err := strconv.ParseInt(fields[1], 10, 64)
			if err == nil {
				return kb << 10
			}
		}
	}
	return 0
}
