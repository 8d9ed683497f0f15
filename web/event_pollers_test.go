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

	"github.com/scalein-planner/scalein/runs"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Issue 19 M10: the streams of a run this process does not hold share one poller of the store,
// every stream still sees the run end, and one client may open at most maxStreamsPerClient.
func TestEventStreamsShareOnePoller(t *testing.T) {
	s := newTestServer(t, runs.Config{}, false) // never started: the run stays queued in the store
	ts := httptest.NewServer(s.Handler())
	defer ts.Close()
	id := submitAPI(t, s, testScenario("watched"))

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	const n = 5
	finals := make(chan string, n)
	for range n {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, ts.URL+"/runs/"+id+"/events", nil)
		require.NoError(t, err)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		require.Equal(t, http.StatusOK, resp.StatusCode)
		go func() {
			defer resp.Body.Close()
			last := ""
			sc := bufio.NewScanner(resp.Body)
			for sc.Scan() {
				if name, ok := strings.CutPrefix(sc.Text(), "event: "); ok {
					last = name
				}
			}
			finals <- last
		}()
	}
	require.Eventually(t, func() bool {
		p := s.pollers()
		p.mu.Lock()
		defer p.mu.Unlock()
		rp := p.runs[id]
		return len(p.runs) == 1 && rp != nil && rp.subs == n
	}, 5*time.Second, 10*time.Millisecond, "one poller for the run's %d streams", n)

	// The client's streams are capped: this test's client has maxStreamsPerClient open.
	p := s.pollers()
	var extra []context.CancelFunc
	for range maxStreamsPerClient - n {
		ctx, cancel := context.WithCancel(ctx)
		extra = append(extra, cancel)
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, ts.URL+"/runs/"+id+"/events", nil)
		require.NoError(t, err)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		require.Equal(t, http.StatusOK, resp.StatusCode)
		defer resp.Body.Close()
	}
	resp, err := http.Get(ts.URL + "/runs/" + id + "/events")
	require.NoError(t, err)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	assert.Equal(t, http.StatusTooManyRequests, resp.StatusCode)
	assert.Contains(t, string(body), "progress streams open")
	for _, c := range extra {
		c()
	}

	// A cancel written to the store reaches every stream through the one poller.
	require.Equal(t, http.StatusSeeOther, postForm(t, s, "/runs/"+id+"/cancel", nil).Code)
	for range n {
		select {
		case last := <-finals:
			assert.Equal(t, "cancelled", last)
		case <-time.After(10 * time.Second):
			t.Fatal("a stream did not end after the run was cancelled")
		}
	}
	require.Eventually(t, func() bool {
		p.mu.Lock()
		defer p.mu.Unlock()
		return len(p.runs) == 0 && len(p.clients) == 0
	}, 5*time.Second, 10*time.Millisecond, "the poller and the stream counts end with the streams")
}
