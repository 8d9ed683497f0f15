package web

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/scalein-planner/scalein/runs"
	"github.com/scalein-planner/scalein/store"
)

// stampedeClients is how many requests hit one page at once, as wrk -c64 does.
const stampedeClients = 64

// burst sends stampedeClients requests for target at once and returns their bodies. The
// server's flights are held (beforeFlight) until every request has been sent and has had time
// to reach the page cache, so every request that would build the page (or check its version)
// on its own does so while the first is still at it.
func burst(t *testing.T, s *Server, url, target string, sent *atomic.Int64) []string {
	t.Helper()
	sent.Store(0)
	bodies := make([]string, stampedeClients)
	var wg sync.WaitGroup
	for i := range stampedeClients {
		wg.Go(func() {
			sent.Add(1)
			resp, err := http.Get(url + target)
			if !assert.NoError(t, err) {
				return
			}
			defer resp.Body.Close()
			b, err := io.ReadAll(resp.Body)
			assert.NoError(t, err)
			assert.Equal(t, http.StatusOK, resp.StatusCode, target)
			bodies[i] = string(b)
		})
	}
	wg.Wait()
	return bodies
}

// The stall of issue 18: 64 clients opening a finished run's page right after another page's
// load. Each request that missed the cache built the page itself (summary decode, charts,
// render, gzip), 64 builds at once on two cores. Now the requests for one page share one build,
// and later one version check, whatever their number; this counts builds and checks, for two
// pages in sequence, with a cold cache and then with pages due for their check.
func TestPermalinkBurstBuildsOnce(t *testing.T) {
	s := newTestServer(t, runs.Config{}, true)
	a := submitAPI(t, s, testScenario("burst-a"))
	b := submitAPI(t, s, testScenario("burst-b"))
	waitStatus(t, s, a, store.StatusDone)
	waitStatus(t, s, b, store.StatusDone)

	var now atomic.Int64
	now.Store(time.Now().UnixNano())
	s.now = func() time.Time { return time.Unix(0, now.Load()) }
	var sent atomic.Int64
	s.pages.beforeFlight = func(string) {
		for sent.Load() < stampedeClients {
			time.Sleep(time.Millisecond)
		}
		time.Sleep(50 * time.Millisecond) // let the requests sent reach the cache
	}
	srv := httptest.NewServer(s.Handler())
	defer srv.Close()

	for _, id := range []string{a, b} {
		builds, checks := s.pages.builds.Load(), s.pages.checks.Load()
		bodies := burst(t, s, srv.URL, "/runs/"+id, &sent)
		assert.Equal(t, int64(1), s.pages.builds.Load()-builds, "the page of %s is built once for %d requests", id, stampedeClients)
		assert.Equal(t, int64(0), s.pages.checks.Load()-checks, "a page just built needs no check")
		for _, body := range bodies {
			require.Equal(t, bodies[0], body, "every request gets the one page")
		}
		assert.Contains(t, bodies[0], `data-testid="cards"`)
	}

	// The compare page of the two is built once as well.
	builds := s.pages.builds.Load()
	burst(t, s, srv.URL, "/compare?a="+a+"&b="+b, &sent)
	assert.Equal(t, int64(1), s.pages.builds.Load()-builds, "the compare page is built once for %d requests", stampedeClients)
	// "Compare selected" records the pair (viewing /compare records nothing: issue 19 L9).
	require.Equal(t, http.StatusSeeOther, get(t, s, "/compare?run="+b+"&run="+a).Code)

	// Both run pages are now due for their version check (the comparison changed what they
	// show, and the clock moved past pageRecheck): one check and one build each.
	now.Add(int64(2 * pageRecheck))
	for id, other := range map[string]string{a: "burst-b", b: "burst-a"} {
		builds, checks := s.pages.builds.Load(), s.pages.checks.Load()
		bodies := burst(t, s, srv.URL, "/runs/"+id, &sent)
		assert.Equal(t, int64(1), s.pages.checks.Load()-checks, "the page of %s is checked once for %d requests", id, stampedeClients)
		assert.Equal(t, int64(1), s.pages.builds.Load()-builds, "the page of %s is rebuilt once, with the comparison", id)
		doc := parseHTML(t, strings.NewReader(bodies[0]))
		assert.Contains(t, byTestID(doc, "related").Text(), other, "the related runs list the comparison")
	}

	// Due for their check again, and unchanged: one query each, not one per request.
	now.Add(int64(2 * pageRecheck))
	for _, id := range []string{a, b} {
		builds, checks := s.pages.builds.Load(), s.pages.checks.Load()
		burst(t, s, srv.URL, "/runs/"+id, &sent)
		assert.Equal(t, int64(0), s.pages.builds.Load()-builds, "the page of %s is still current", id)
		assert.Equal(t, int64(1), s.pages.checks.Load()-checks, "the page of %s is checked once for %d requests", id, stampedeClients)
	}
}

// A build outlives the request that started it: wrk's clients give up after 2 s, and before,
// a client that did cancelled its build's queries, so the page was never cached and the next
// request built it again. A request that stops waiting returns at once; the build goes on and
// caches the page for the others.
func TestSharedBuildOutlivesItsRequest(t *testing.T) {
	c := newPageCache()
	started, release, built := make(chan struct{}), make(chan struct{}), make(chan error, 1)
	c.beforeFlight = func(string) {
		close(started)
		<-release
	}
	fn := func(ctx context.Context) (builtPage, error) {
		if err := ctx.Err(); err != nil {
			built <- err
			return builtPage{}, err
		}
		built <- nil
		return builtPage{page: &cachedPage{version: "v1", body: []byte("page"), recheck: pageRecheck}}, nil
	}
	first, cancelFirst := context.WithCancel(context.Background())
	firstErr := make(chan error, 1)
	go func() {
		_, err := c.build(first, "/runs/x", time.Now(), fn)
		firstErr <- err
	}()
	<-started

	waiter, cancelWaiter := context.WithCancel(context.Background())
	cancelWaiter()
	_, err := c.build(waiter, "/runs/x", time.Now(), fn)
	assert.ErrorIs(t, err, context.Canceled, "a request whose client left stops waiting")

	cancelFirst() // the client of the request that started the build leaves too
	assert.ErrorIs(t, <-firstErr, context.Canceled)
	close(release)
	require.NoError(t, <-built, "the build ran on, not cancelled with its request")
	require.Eventually(t, func() bool { _, ok := c.pages.Get("/runs/x"); return ok }, 5*time.Second, time.Millisecond,
		"the page is cached for the next request")
	assert.Equal(t, int64(1), c.builds.Load())
}
