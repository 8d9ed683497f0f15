package main

import (
	"bufio"
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/scalein-planner/scalein/internal/pgtest"
)

// envRunMain makes the test binary act as the scalein command (TestMain), so the multi-process
// test starts real serve and worker processes without a separate build.
const envRunMain = "SCALEIN_TEST_RUN_MAIN"

func TestMain(m *testing.M) {
	if os.Getenv(envRunMain) == "1" {
		profileInBackground(os.Args[1:])
		main()
		return
	}
	os.Exit(m.Run())
}

// proc is a scalein process started by a test, with its output collected.
type proc struct {
	name string
	cmd  *exec.Cmd
	mu   sync.Mutex
	out  bytes.Buffer
}

func (p *proc) Write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.out.Write(b)
}

func (p *proc) output() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.out.String()
}

func startProc(t testing.TB, name string, args ...string) *proc {
	t.Helper()
	p := &proc{name: name, cmd: exec.Command(os.Args[0], args...)}
	p.cmd.Env = append(os.Environ(), envRunMain+"=1")
	p.cmd.Stdout, p.cmd.Stderr = p, p
	require.NoError(t, p.cmd.Start())
	t.Cleanup(func() {
		if p.cmd.ProcessState == nil {
			_ = p.cmd.Process.Signal(syscall.SIGTERM)
			done := make(chan struct{})
			go func() { _ = p.cmd.Wait(); close(done) }()
			select {
			case <-done:
			case <-time.After(20 * time.Second):
				_ = p.cmd.Process.Kill()
				<-done
			}
		}
		if t.Failed() {
			t.Logf("--- output of %s:\n%s", p.name, p.output())
		}
	})
	return p
}

// waitFor waits until the process prints something that pattern matches, and returns it.
func waitFor(t testing.TB, p *proc, pattern *regexp.Regexp) string {
	t.Helper()
	var m string
	require.Eventually(t, func() bool {
		m = pattern.FindString(p.output())
		return m != ""
	}, 60*time.Second, 20*time.Millisecond, "%s did not print %s", p.name, pattern)
	return m
}

// cliDigest runs the scenario through `scalein sim` (in process: the same code as the command)
// and returns its report's digest.
func cliDigest(t testing.TB, scenario []byte) string {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := runSim(context.Background(), []string{"-config", "-"}, bytes.NewReader(scenario), &stdout, &stderr)
	require.Equal(t, 0, code, stderr.String())
	var rep struct {
		Digest string `json:"digest"`
	}
	require.NoError(t, json.Unmarshal(stdout.Bytes(), &rep))
	require.NotEmpty(t, rep.Digest)
	return rep.Digest
}

func renamed(t testing.TB, preset, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "sim", "presets", preset))
	require.NoError(t, err)
	var m map[string]any
	require.NoError(t, json.Unmarshal(b, &m))
	m["name"] = name
	out, err := json.Marshal(m)
	require.NoError(t, err)
	return out
}

// wholeTrace is the Mooncake preset over the whole built-in trace instead of its first 3,000
// requests, named name.
func wholeTrace(t testing.TB, name string) []byte {
	t.Helper()
	var m map[string]any
	require.NoError(t, json.Unmarshal(renamed(t, "mooncake-16to12.json", name), &m))
	trace := m["workload"].(map[string]any)["trace"].(map[string]any)
	delete(trace, "limit")
	out, err := json.Marshal(m)
	require.NoError(t, err)
	return out
}

type apiRunView struct {
	ID       string `json:"id"`
	Status   string `json:"status"`
	Error    string `json:"error"`
	Attempts int    `json:"attempts"`
	Worker   string `json:"worker"`
	Report   *struct {
		Digest string `json:"digest"`
	} `json:"report"`
}

func getRun(base, id string) (apiRunView, error) {
	resp, err := http.Get(base + "api/v1/runs/" + id)
	if err != nil {
		return apiRunView{}, err
	}
	defer resp.Body.Close()
	var v apiRunView
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		return v, fmt.Errorf("GET run %s: %d %s", id, resp.StatusCode, b)
	}
	return v, json.NewDecoder(resp.Body).Decode(&v)
}

// TestServeAndWorkersOnPostgres is the multi-process test: one `serve -workers 0` and two
// `worker -concurrency 1` processes on one PostgreSQL database; 20 small runs, then 2 of about
// three seconds; a worker running a long run is killed with SIGKILL. Every run must end done,
// its job completed exactly once, with the report digest of `scalein sim`; the killed worker's
// run is finished by the other worker after the rescue delay; both workers produced reports.
func TestServeAndWorkersOnPostgres(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the multi-process test takes about a minute")
	}
	pgtest.SlowOnly(t, "a server and two worker processes on PostgreSQL, waiting out a 25 s rescue delay")
	cluster := pgtest.Require(t)
	dsn := cluster.NewDatabase(t)
	limits := []string{"-run-timeout", "15s", "-rescue-after", "25s"}

	server := startProc(t, "serve", append([]string{"serve", "-addr", "127.0.0.1:0", "-db", dsn, "-workers", "0", "-queue", "100"}, limits...)...)
	base := waitFor(t, server, regexp.MustCompile(`http://127\.0\.0\.1:\d+/`))
	workerPattern := regexp.MustCompile(`worker (\S+) working runs`)
	workers := map[string]*proc{}
	for _, name := range []string{"worker-a", "worker-b"} {
		w := startProc(t, name, append([]string{"worker", "-db", dsn, "-concurrency", "1"}, limits...)...)
		var m []string
		require.Eventually(t, func() bool {
			m = workerPattern.FindStringSubmatch(w.output())
			return m != nil
		}, 60*time.Second, 20*time.Millisecond, "%s did not start", name)
		workers[m[1]] = w
	}

	// The scenarios and what the command line makes of them.
	type submittedRun struct {
		id, want string
		long     bool
	}
	var runs []submittedRun
	// want is the CLI's digest, computed before the run is submitted: computing it after would
	// let a long run finish on its worker before the test starts looking for it.
	submit := func(scenario []byte, want string, long bool) {
		resp, err := http.Post(base+"api/v1/runs", "application/json", bytes.NewReader(scenario))
		require.NoError(t, err)
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		require.Equal(t, http.StatusAccepted, resp.StatusCode, string(body))
		var created struct{ ID string }
		require.NoError(t, json.Unmarshal(body, &created))
		runs = append(runs, submittedRun{id: created.ID, want: want, long: long})
	}
	for i := range 20 {
		e2 := renamed(t, "e2.json", fmt.Sprintf("E2 #%d", i))
		submit(e2, cliDigest(t, e2), false)
	}
	doneBy := map[string]bool{}
	require.Eventually(t, func() bool {
		for _, r := range runs {
			v, err := getRun(base, r.id)
			if err != nil || v.Status != "done" {
				return false
			}
			doneBy[v.Worker] = true
		}
		return true
	}, 2*time.Minute, 100*time.Millisecond, "the small runs did not finish")
	require.Len(t, doneBy, 2, "both workers took small runs")
	// The long runs take the whole trace (about 2 s of CPU each), so a worker is still running
	// one when the test kills it.
	longA, longB := wholeTrace(t, "long A"), wholeTrace(t, "long B")
	wantA, wantB := cliDigest(t, longA), cliDigest(t, longB)
	submit(longA, wantA, true)
	submit(longB, wantB, true)

	// Kill a worker while it runs a long run (each worker, working one run at a time, takes one).
	var killed, longID string
	require.Eventually(t, func() bool {
		for _, r := range runs {
			if !r.long {
				continue
			}
			v, err := getRun(base, r.id)
			if err == nil && v.Status == "running" && workers[v.Worker] != nil {
				killed, longID = v.Worker, r.id
				return true
			}
		}
		return false
	}, time.Minute, 20*time.Millisecond, "no long run was seen running")
	require.NoError(t, workers[killed].cmd.Process.Signal(syscall.SIGKILL))
	_ = workers[killed].cmd.Wait()
	t.Logf("killed worker %s while it ran %s", killed, longID)

	// Everything finishes: the killed worker's run after the rescue delay (25 s) plus River's
	// rescuer interval (30 s) plus the retry pause.
	deadline := time.Now().Add(3 * time.Minute)
	producedBy := map[string]int{}
	for _, r := range runs {
		var v apiRunView
		for {
			var err error
			v, err = getRun(base, r.id)
			require.NoError(t, err)
			if v.Status != "queued" && v.Status != "running" {
				break
			}
			require.True(t, time.Now().Before(deadline), "run %s still %s", r.id, v.Status)
			time.Sleep(200 * time.Millisecond)
		}
		require.Equal(t, "done", v.Status, "run %s: %s", r.id, v.Error)
		require.NotNil(t, v.Report)
		assert.Equal(t, r.want, v.Report.Digest, "run %s: the stored report's digest must be the CLI's", r.id)
		producedBy[v.Worker]++
		if r.id == longID {
			assert.Equal(t, 2, v.Attempts, "the killed worker's run was started again")
			assert.NotEqual(t, killed, v.Worker, "the killed worker's run was finished by the other worker")
		}
	}
	assert.Len(t, producedBy, 2, "both workers produced reports: %v", producedBy)
	assert.Positive(t, producedBy[killed], "the killed worker had produced reports before it died")

	// Exactly once: one completed job per run, none failed, discarded or pending.
	db, err := sql.Open("pgx", dsn)
	require.NoError(t, err)
	defer db.Close()
	// River records a job's completion asynchronously (its completer batches them), so a run's
	// row can say done a moment before its job says completed: wait for every job to settle.
	var completed map[string]int
	var unsettled string
	settled := func() bool {
		rows, err := db.Query(`SELECT args->>'run_id', state, count(*) FROM river_job GROUP BY 1, 2`)
		if err != nil {
			unsettled = err.Error()
			return false
		}
		defer rows.Close()
		completed, unsettled = map[string]int{}, ""
		for rows.Next() {
			var (
				id, state string
				n         int
			)
			if err := rows.Scan(&id, &state, &n); err != nil {
				unsettled = err.Error()
				return false
			}
			if state != "completed" {
				unsettled = fmt.Sprintf("run %s has %d jobs %s", id, n, state)
			}
			completed[id] += n
		}
		if err := rows.Err(); err != nil {
			unsettled = err.Error()
		}
		return unsettled == ""
	}
	for settleBy := time.Now().Add(30 * time.Second); !settled() && time.Now().Before(settleBy); {
		time.Sleep(100 * time.Millisecond)
	}
	require.Empty(t, unsettled, "every job ends completed")
	require.Len(t, completed, len(runs))
	for id, n := range completed {
		assert.Equal(t, 1, n, "run %s completed %d times", id, n)
	}
	// The rescue is logged by the worker that finished the run (its attempt 2).
	survivor := ""
	for name, w := range workers {
		if name != killed {
			survivor = w.output()
		}
	}
	sc := bufio.NewScanner(strings.NewReader(survivor))
	sawRetry := false
	for sc.Scan() {
		if strings.Contains(sc.Text(), longID) && strings.Contains(sc.Text(), "attempt=2") {
			sawRetry = true
		}
	}
	assert.True(t, sawRetry, "the surviving worker logs attempt 2 of %s", longID)
}
