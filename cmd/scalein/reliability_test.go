package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// The reliability tests of issue 7 run the real command as a subprocess (see TestMain), at a
// scale that keeps CI quick.

var listenPattern = regexp.MustCompile(`http://127\.0\.0\.1:\d+/`)

// startServe starts `scalein serve` on a free port and returns the process and its base URL.
func startServe(t *testing.T, name, db string, args ...string) (*proc, string) {
	t.Helper()
	p := startProc(t, name, append([]string{"serve", "-addr", "127.0.0.1:0", "-db", db}, args...)...)
	var base string
	require.Eventually(t, func() bool {
		base = listenPattern.FindString(p.output())
		return base != ""
	}, 60*time.Second, 20*time.Millisecond, "%s did not start:\n%s", name, p.output())
	return p, base
}

// vmKB reads a field of /proc/PID/status (VmRSS, VmHWM) in kB; 0 where it cannot be read.
func vmKB(pid int, field string) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, field+":"); ok {
			n, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			return n
		}
	}
	return 0
}

func postJSONTo(t *testing.T, url string, body []byte) (int, string) {
	t.Helper()
	resp, err := http.Post(url, "application/json", bytes.NewReader(body))
	require.NoError(t, err)
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func healthy(t *testing.T, base string) {
	t.Helper()
	resp, err := http.Get(base + "healthz")
	require.NoError(t, err, "the server must stay up")
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
}

// longScenario runs for several seconds on a small heap: many short sessions on a few workers.
const longScenario = `{"name": "long and small", "fleet": {"workers": 4, "gpu_blocks": 2048, "host_blocks": 0, "block_size": 16}, "kvcr": {"enabled": false},
	"workload": {"type": "sessions", "sessions": {"count": 2000000, "rate_per_s": 2000, "turns": 1,
		"system_prompt_tokens": 256, "prefix_groups": 8, "new_input_tokens": 64, "output_tokens": 8}}}`

// TestKilledServerFailsARunAfterThreeStarts kills the server with SIGKILL while it runs a run,
// three times; the fourth process fails the run ("interrupted 3 times") instead of starting it
// again, and keeps serving.
func TestKilledServerFailsARunAfterThreeStarts(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: starts the server four times")
	}
	db := filepath.Join(t.TempDir(), "crash.db")
	var id string
	for start := 1; start <= 3; start++ {
		p, base := startServe(t, fmt.Sprintf("serve #%d", start), db, "-max-attempts", "3")
		if start == 1 {
			code, body := postJSONTo(t, base+"api/v1/runs", []byte(longScenario))
			require.Equal(t, http.StatusAccepted, code, body)
			var created struct{ ID string }
			require.NoError(t, json.Unmarshal([]byte(body), &created))
			id = created.ID
		}
		var v apiRunView
		require.Eventually(t, func() bool {
			var err error
			v, err = getRun(base, id)
			return err == nil && v.Status == "running" && v.Attempts == start
		}, 60*time.Second, 20*time.Millisecond, "start %d: the run did not start (%+v)", start, v)
		require.NoError(t, p.cmd.Process.Signal(syscall.SIGKILL))
		_ = p.cmd.Wait()
	}
	_, base := startServe(t, "serve #4", db, "-max-attempts", "3")
	var v apiRunView
	require.Eventually(t, func() bool {
		var err error
		v, err = getRun(base, id)
		return err == nil && v.Status == "failed"
	}, 30*time.Second, 20*time.Millisecond, "the run interrupted 3 times was not failed: %+v", v)
	require.Equal(t, 3, v.Attempts, "started a fourth time")
	require.Contains(t, v.Error, "interrupted 3 times")
	healthy(t, base)
	resp, err := http.Get(base + "runs/" + id)
	require.NoError(t, err)
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.Contains(t, string(page), "interrupted 3 times", "the run's page says why it failed")
}

// hostileFleet is the first scenario, at full size: it validates, and only the memory
// model stands between it and the machine.
const hostileFleet = `{"name": "hostile fleet", "fleet": {"workers": 16384, "gpu_blocks": 10000000, "host_blocks": 10000000, "block_size": 16,
	"max_batched_tokens": 2000000},
	"workload": {"type": "sessions", "sessions": {"count": 1250000, "rate_per_s": 1e9, "turns": 4,
		"system_prompt_tokens": 1000000, "prefix_groups": 5000000, "new_input_tokens": 1000, "output_tokens": 100}}}`

// hostileLongPrompts is the second scenario: 64 workers × 10M blocks, 5,000 sessions of
// 1,999,000-token prompts.
const hostileLongPrompts = `{"name": "hostile prompts", "fleet": {"workers": 64, "gpu_blocks": 10000000, "host_blocks": 10000000, "block_size": 16,
	"max_batched_tokens": 2000000},
	"workload": {"type": "sessions", "sessions": {"count": 5000, "rate_per_s": 100, "turns": 1,
		"system_prompt_tokens": 1000000, "new_input_tokens": 999000, "output_tokens": 10}}}`

// TestHostileInputKeepsTheServerHealthy sends the hostile inputs to a server with a
// 2 GB per-run budget: the scenarios are refused with the fields that drive them, a body of
// millions of tiny JSON values is refused before a tree is built, and the server's peak RSS
// stays far below what the inputs once cost.
func TestHostileInputKeepsTheServerHealthy(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: starts the server")
	}
	p, base := startServe(t, "serve", filepath.Join(t.TempDir(), "hostile.db"), "-max-run-memory", "2GB", "-max-total-memory", "4GB")
	for _, doc := range []string{hostileFleet, hostileLongPrompts} {
		code, body := postJSONTo(t, base+"api/v1/runs", []byte(doc))
		require.Equal(t, http.StatusBadRequest, code, body)
		require.Contains(t, body, `"path":"fleet.gpu_blocks"`)
		require.Contains(t, body, "this server allows 2 GB per run")
		healthy(t, base)
	}
	// Eight concurrent bodies of 6 M values each (12 MB): refused, each before its tree.
	values := append([]byte(`{"name": [`), bytes.Repeat([]byte("0,"), 6_000_000)...)
	values = append(values, []byte(`0]}`)...)
	began := time.Now()
	var wg sync.WaitGroup
	codes := make([]int, 8)
	for i := range codes {
		wg.Go(func() { codes[i], _ = postJSONTo(t, base+"api/v1/runs", values) })
	}
	wg.Wait()
	for _, c := range codes {
		require.Equal(t, http.StatusBadRequest, c)
	}
	t.Logf("8 bodies of 6 M values answered in %s", time.Since(began).Round(time.Millisecond))
	healthy(t, base)
	peakKB := vmKB(p.cmd.Process.Pid, "VmHWM")
	t.Logf("serve's peak RSS after the hostile inputs: %d MB", peakKB>>10)
	if peakKB > 0 {
		require.Less(t, peakKB, int64(1<<20), "peak RSS %d kB; the hostile inputs must not cost gigabytes", peakKB)
	}
}
