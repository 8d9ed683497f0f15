package web

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/scalein-planner/scalein/runs"
	"github.com/scalein-planner/scalein/store"
)

// The stream is one "progress" event per state the run service sends, then one event named
// after the end state with its error, byte for byte what the run page's script reads.
func TestEventStreamBytes(t *testing.T) {
	s := newPageServer(t)
	id := submitAPI(t, s, testScenario("streamed"))
	s.runs.(*fakeRuns).follow = map[string][]runs.RunState{id: {
		{Status: store.StatusQueued},
		{Status: store.StatusRunning, Fraction: 0.25},
		{Status: store.StatusFailed, Fraction: 0.25, Error: "out of memory"},
	}}

	rec := get(t, s, "/runs/"+id+"/events")
	require.Equal(t, http.StatusOK, rec.Code)
	assert.Equal(t, "text/event-stream", rec.Header().Get("Content-Type"))
	assert.Equal(t, "no-cache", rec.Header().Get("Cache-Control"))
	assert.Equal(t, "no", rec.Header().Get("X-Accel-Buffering"))
	assert.Equal(t, "event: progress\ndata: {\"status\":\"queued\",\"progress\":0}\n\n"+
		"event: progress\ndata: {\"status\":\"running\",\"progress\":0.25}\n\n"+
		"event: failed\ndata: {\"status\":\"failed\",\"progress\":0.25,\"error\":\"out of memory\"}\n\n", rec.Body.String())
}

// Issue 19 M10: one client may hold at most maxStreamsPerClient progress streams; the next is
// refused with a 429 that says when to retry, and closed streams free the cap.
func TestEventStreamCap(t *testing.T) {
	s := newPageServer(t) // nothing works the fake's runs: every stream stays open
	ts := httptest.NewServer(s.Handler())
	defer ts.Close()
	id := submitAPI(t, s, testScenario("watched"))

	ctx, cancel := context.WithCancel(context.Background())
	var bodies []io.Closer
	for range maxStreamsPerClient {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, ts.URL+"/runs/"+id+"/events", nil)
		require.NoError(t, err)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		require.Equal(t, http.StatusOK, resp.StatusCode)
		bodies = append(bodies, resp.Body)
	}
	resp, err := http.Get(ts.URL + "/runs/" + id + "/events")
	require.NoError(t, err)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	assert.Equal(t, http.StatusTooManyRequests, resp.StatusCode)
	assert.Equal(t, "5", resp.Header.Get("Retry-After"))
	assert.Contains(t, string(body), "your address has 32 progress streams open already")

	cancel()
	for _, b := range bodies {
		b.Close()
	}
	require.Eventually(t, func() bool {
		s.streams.mu.Lock()
		defer s.streams.mu.Unlock()
		return len(s.streams.clients) == 0
	}, 5*time.Second, 10*time.Millisecond, "the counts end with the streams")
}

// The compress middleware must not buffer the stream: through the whole handler, asking for
// gzip, the first event of a running run arrives while the run is still running, uncompressed.
func TestEventStreamIsNotBufferedByCompression(t *testing.T) {
	fake := newBlockingRun()
	s := newTestServer(t, runs.Config{Workers: 1, Simulate: fake.Run}, false)
	require.NoError(t, s.startRuns(context.Background()))
	ts := httptest.NewServer(s.Handler())
	defer ts.Close()
	id := submitAPI(t, s, testScenario("zipped"))
	fake.WaitStarted(t)
	released := false
	defer func() {
		if !released {
			close(fake.Release)
		}
	}()

	req, err := http.NewRequest(http.MethodGet, ts.URL+"/runs/"+id+"/events", nil)
	require.NoError(t, err)
	req.Header.Set("Accept-Encoding", "gzip") // set by hand, so the client does not gunzip
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	assert.Empty(t, resp.Header.Get("Content-Encoding"))

	lines := make(chan string)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	next := func() string {
		t.Helper()
		select {
		case line := <-lines:
			return line
		case <-time.After(10 * time.Second):
			t.Fatal("no line within 10 s: the stream is buffered")
			return ""
		}
	}
	assert.Equal(t, "event: progress", next(), "the first event, while the run runs")
	assert.Equal(t, `data: {"status":"running","progress":0}`, next())

	close(fake.Release)
	released = true
	var last string
	for line := range lines {
		if name, ok := strings.CutPrefix(line, "event: "); ok {
			last = name
		}
	}
	assert.Equal(t, "done", last)
}
