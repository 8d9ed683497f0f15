package web

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/scalein-planner/scalein/sim"
	"github.com/scalein-planner/scalein/store"
	"github.com/stretchr/testify/require"
)

// hostileScenario is the smaller hostile scenario, scaled: it parses in a millisecond
// and its estimate is far above the small budgets the tests give.
func hostileScenario(name string) string {
	return fmt.Sprintf(`{"name": %q, "fleet": {"workers": 64, "gpu_blocks": 10000000, "host_blocks": 10000000, "block_size": 16,
		"max_batched_tokens": 2000000},
		"workload": {"type": "sessions", "sessions": {"count": 5000, "rate_per_s": 100, "turns": 1,
			"system_prompt_tokens": 1000000, "new_input_tokens": 999000, "output_tokens": 10}}}`, name)
}

func TestAdmissionRefusesAScenarioOverTheRunBudget(t *testing.T) {
	s := newTestServer(t, Config{MaxRunMemory: 1 << 30, MaxTotalMemory: 2 << 30}, false)

	rec := postJSON(t, s, "/api/v1/runs", hostileScenario("hostile"))
	require.Equal(t, http.StatusBadRequest, rec.Code, rec.Body.String())
	var out struct {
		Error  string           `json:"error"`
		Fields []sim.FieldError `json:"fields"`
	}
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &out))
	require.NotEmpty(t, out.Fields)
	require.Equal(t, "fleet.gpu_blocks", out.Fields[0].Path)
	require.Contains(t, out.Fields[0].Message, "64 workers")
	require.Contains(t, out.Fields[0].Message, "this server allows 1.1 GB per run")
	runs, total, err := s.store.ListRuns(context.Background(), 10, 0)
	require.NoError(t, err)
	require.Zero(t, total, "a refused scenario must not be stored: %+v", runs)

	// The pair endpoint refuses it the same way.
	rec = postJSON(t, s, "/api/v1/pairs", `{"kind": "hints", "scenario": `+hostileScenario("hostile pair")+`}`)
	require.Equal(t, http.StatusBadRequest, rec.Code, rec.Body.String())
	require.Contains(t, rec.Body.String(), "fleet.gpu_blocks")

	// The form shows the message beside the field that drives it, with 422.
	form := url.Values{rawJSONField: {hostileScenario("hostile form")}}
	rec = postForm(t, s, "/runs", form)
	require.Equal(t, http.StatusUnprocessableEntity, rec.Code)
	require.Contains(t, rec.Body.String(), "this server allows 1.1 GB per run")

	// A small scenario is accepted.
	rec = postJSON(t, s, "/api/v1/runs", testScenario("small"))
	require.Equal(t, http.StatusAccepted, rec.Code, rec.Body.String())
}

func TestAdmissionShowsTheMessageBesideTheFormField(t *testing.T) {
	s := newTestServer(t, Config{MaxRunMemory: 1 << 30, MaxTotalMemory: 2 << 30}, false)
	form := url.Values{
		"fleet.workers": {"64"}, "fleet.gpu_blocks": {"10000000"}, "fleet.host_blocks": {"10000000"},
		"fleet.block_size": {"16"}, "fleet.max_batched_tokens": {"2000000"},
		"workload.type": {"sessions"}, "workload.sessions.count": {"5000"}, "workload.sessions.turns": {"1"},
		"workload.sessions.system_prompt_tokens": {"1000000"}, "workload.sessions.new_input_tokens": {"999000"},
	}
	rec := postForm(t, s, "/runs", form)
	require.Equal(t, http.StatusUnprocessableEntity, rec.Code, rec.Body.String())
	doc := parseHTML(t, rec.Body)
	require.Contains(t, byTestID(doc, "error-fleet.gpu_blocks").Text(), "this server allows 1.1 GB per run")
}

// A queued run starts only while the running runs' estimates leave room in the total budget.
func TestTotalBudgetHoldsQueuedRuns(t *testing.T) {
	small := sim.EstimateMemory(mustParse(t, testScenario("a"))).Bytes
	// Room for one run at a time, with two workers.
	s := newTestServer(t, Config{Workers: 2, MaxRunMemory: small * 3 / 2, MaxTotalMemory: small * 3 / 2}, false)
	br := newBlockingRun()
	s.run = br.run
	require.NoError(t, s.Start(context.Background()))
	a := submitAPI(t, s, testScenario("a"))
	require.Equal(t, "a", br.waitStarted(t))
	b := submitAPI(t, s, testScenario("b"))
	select {
	case name := <-br.started:
		t.Fatalf("run %s started while the budget was taken", name)
	case <-time.After(300 * time.Millisecond):
	}
	got, err := s.store.GetRunStatus(context.Background(), b)
	require.NoError(t, err)
	require.Equal(t, store.StatusQueued, got.Status)
	br.release <- struct{}{}
	waitStatus(t, s, a, store.StatusDone)
	require.Equal(t, "b", br.waitStarted(t))
	br.release <- struct{}{}
	waitStatus(t, s, b, store.StatusDone)
}

func mustParse(t *testing.T, doc string) *sim.Scenario {
	t.Helper()
	sc, err := sim.Parse([]byte(doc), sim.ParseEnv{})
	require.NoError(t, err)
	return sc
}

// The backstop stops a run whose heap grows past its budget; the server keeps serving.
func TestBackstopFailsARunWhoseHeapCrossesItsBudget(t *testing.T) {
	s := newTestServer(t, Config{MaxRunMemory: 64 << 20, MaxTotalMemory: 128 << 20}, false)
	br := newBlockingRun()
	s.run = br.run
	var heap atomic.Int64
	heap.Store(10 << 20)
	s.heapBytes = heap.Load
	s.liveHeapBytes = heap.Load
	require.NoError(t, s.Start(context.Background()))
	id := submitAPI(t, s, testScenario("grows"))
	br.waitStarted(t)
	time.Sleep(2 * memorySampleInterval)
	heap.Store(10<<20 + 65<<20) // the run's heap crosses 64 MiB
	run := waitStatus(t, s, id, store.StatusFailed)
	require.Contains(t, run.Error, "past the 67 MB this server allows per run")
	require.Equal(t, http.StatusOK, get(t, s, "/healthz").Code)

	// Garbage that a collection frees does not stop a run.
	heap.Store(10 << 20)
	time.Sleep(2 * memorySampleInterval)
	s.heapBytes = func() int64 { return 500 << 20 }
	id2 := submitAPI(t, s, testScenario("garbage only"))
	br.waitStarted(t)
	time.Sleep(4 * memorySampleInterval)
	got, err := s.store.GetRunStatus(context.Background(), id2)
	require.NoError(t, err)
	require.Equal(t, store.StatusRunning, got.Status)
	br.release <- struct{}{}
	waitStatus(t, s, id2, store.StatusDone)
}

// The real heap: a run that allocates past its budget is failed with the reason.
func TestBackstopWithTheRealHeap(t *testing.T) {
	s := newTestServer(t, Config{MaxRunMemory: 32 << 20, MaxTotalMemory: 64 << 20}, false)
	s.run = func(ctx context.Context, sc *sim.Scenario, _ sim.RunOptions) (*sim.Report, error) {
		var hold [][]byte
		for len(hold) < 400 { // up to 400 MiB, 1 MiB every 2 ms
			hold = append(hold, make([]byte, 1<<20))
			for i := range hold[len(hold)-1] {
				hold[len(hold)-1][i] = 1
			}
			select {
			case <-ctx.Done():
				return nil, ctx.Err()
			case <-time.After(2 * time.Millisecond):
			}
		}
		return nil, fmt.Errorf("the backstop did not stop a run holding %d MiB", len(hold))
	}
	require.NoError(t, s.Start(context.Background()))
	id := submitAPI(t, s, testScenario("real heap"))
	run := waitStatus(t, s, id, store.StatusFailed)
	require.True(t, strings.HasPrefix(run.Error, "stopped: the server's heap grew by"), run.Error)
	require.Equal(t, http.StatusOK, get(t, s, "/healthz").Code)
}

// A run whose process died under it is started again until it has been started MaxAttempts
// times; then it is failed with "interrupted N times", shown on its page. (The kill -9 test of
// the real binary is cmd/scalein's TestKilledServerFailsARunAfterThreeStarts.)
func TestInterruptedRunsAreStartedAtMostMaxAttemptsTimes(t *testing.T) {
	st := openStore(t, t.TempDir()+"/runs.db")
	ctx := context.Background()
	a := newTestServer(t, Config{Store: st}, false) // never started: the run stays queued
	id := submitAPI(t, a, testScenario("crashes"))
	// Three processes each claimed the run and died: the row says running, attempt 3.
	for range 3 {
		_, err := st.ClaimRun(ctx, id, "dead-worker", 0, time.Now())
		require.NoError(t, err)
	}
	sctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	require.NoError(t, a.Shutdown(sctx))
	cancel()

	s := newTestServer(t, Config{Store: st, MaxAttempts: 3}, false)
	br := newBlockingRun()
	s.run = br.run
	require.NoError(t, s.Start(ctx))
	run := waitStatus(t, s, id, store.StatusFailed)
	require.Equal(t, 3, run.Attempts)
	require.Contains(t, run.Error, "interrupted 3 times")
	select {
	case <-br.started:
		t.Fatal("a run interrupted 3 times was started a fourth time")
	case <-time.After(200 * time.Millisecond):
	}
	rec := get(t, s, "/runs/"+id)
	require.Equal(t, http.StatusOK, rec.Code)
	require.Contains(t, rec.Body.String(), "interrupted 3 times")
}

// A run that waits for the total memory budget longer than a job's timeout is put aside
// (snoozed) rather than failed: it starts once the budget frees, on its first River attempt, so
// a long wait can never use up the attempts that bound a crash loop.
func TestWaitingForTheBudgetUsesNoAttempt(t *testing.T) {
	est := sim.EstimateMemory(mustParse(t, testScenario("a"))).Bytes
	s := newTestServer(t, Config{Workers: 1, RunTimeout: time.Second, MaxRunMemory: est * 3 / 2, MaxTotalMemory: est * 3 / 2}, true)
	hold, err := s.budget.acquire(context.Background(), s.budget.total)
	require.NoError(t, err)
	id := submitAPI(t, s, testScenario("a"))
	time.Sleep(s.jobTimeout() + time.Second) // longer than one attempt may last
	got, err := s.store.GetRun(context.Background(), id)
	require.NoError(t, err)
	require.Equal(t, store.StatusQueued, got.Status)
	hold()
	waitStatus(t, s, id, store.StatusDone)
	job, err := s.jobs.client.JobGet(context.Background(), got.JobID)
	require.NoError(t, err)
	require.Equal(t, 1, job.Attempt, "waiting for memory took no attempt")
	got, err = s.store.GetRun(context.Background(), id)
	require.NoError(t, err)
	require.Equal(t, 1, got.Attempts)
}
