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

// burst sends stampedeClients requests for target at once and returns their bodies.
func burst(t *testing.T, url, target string) []string {
	t.Helper()
	bodies := make([]string, stampedeClients)
	var wg sync.WaitGroup
	for i := range stampedeClients {
		wg.Go(func() {
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

// holdFlights makes every build and check of c wait until all the requests of a burst have
// asked for one of that kind, so that each request that would build the page (or check its
// version) on its own does so while the first is still at it. It returns the reset to call
// before each burst, with the number of requests expected to ask.
func holdFlights(t *testing.T, c *pageCache) (reset func(askers int)) {
	var mu sync.Mutex
	asked := map[string]int{}
	want := stampedeClients
	c.onShare = func(kind string) {
		mu.Lock()
		defer mu.Unlock()
		asked[kind]++
	}
	c.beforeFlight = func(kind string) {
		deadline := time.Now().Add(10 * time.Second)
		for {
			mu.Lock()
			n, w := asked[kind], want
			mu.Unlock()
			if n >= w {
				break
			}
			if time.Now().After(deadline) {
				t.Errorf("only %d of %d requests asked for a %s", n, w, kind)
				break
			}
			time.Sleep(time.Millisecond)
		}
		time.Sleep(5 * time.Millisecond) // from asking to joining: a few instructions
	}
	return func(askers int) {
		mu.Lock()
		defer mu.Unlock()
		clear(asked)
		want = askers
	}
}

// The stall of issue 18: 64 clients opening a finished run's page right after another page's
// load. Each request that missed the cache built the page itself (summary decode, charts,
// render, gzip), 64 builds at once on two cores. Now the requests for one page share one build,
// and later one version check, whatever their number; this counts builds and checks, for two
// pages in sequence, with a cold cache and then with pages due for their check.
func TestPermalinkBurstBuildsOnce(t *testing.T) {
	s := newFakeServer(t, runs.Config{}, true)
	a := submitAPI(t, s, testScenario("burst-a"))
	b := submitAPI(t, s, testScenario("burst-b"))
	waitStatus(t, s, a, store.StatusDone)
	waitStatus(t, s, b, store.StatusDone)

	var now atomic.Int64
	now.Store(time.Now().UnixNano())
	s.now = func() time.Time { return time.Unix(0, now.Load()) }
	reset := holdFlights(t, s.pages)
	srv := httptest.NewServer(s.Handler())
	defer srv.Close()

	for _, id := range []string{a, b} {
		builds, checks := s.pages.builds.Load(), s.pages.checks.Load()
		reset(stampedeClients)
		bodies := burst(t, srv.URL, "/runs/"+id)
		assert.Equal(t, int64(1), s.pages.builds.Load()-builds, "the page of %s is built once for %d requests", id, stampedeClients)
		assert.Equal(t, int64(0), s.pages.checks.Load()-checks, "a page just built needs no check")
		for _, body := range bodies {
			require.Equal(t, bodies[0], body, "every request gets the one page")
		}
		assert.Contains(t, bodies[0], `data-testid="cards"`)
	}

	// The compare page of the two is built once as well.
	builds := s.pages.builds.Load()
	reset(stampedeClients)
	burst(t, srv.URL, "/compare?a="+a+"&b="+b)
	assert.Equal(t, int64(1), s.pages.builds.Load()-builds, "the compare page is built once for %d requests", stampedeClients)
	// "Compare selected" records the pair (viewing /compare records nothing: issue 19 L9).
	require.Equal(t, http.StatusSeeOther, get(t, s, "/compare?run="+b+"&run="+a).Code)

	// Both run pages are now due for their version check (the comparison changed what they
	// show, and the clock moved past pageRecheck): one check and one build each.
	now.Add(int64(2 * pageRecheck))
	for id, other := range map[string]string{a: "burst-b", b: "burst-a"} {
		builds, checks := s.pages.builds.Load(), s.pages.checks.Load()
		reset(stampedeClients)
		bodies := burst(t, srv.URL, "/runs/"+id)
		assert.Equal(t, int64(1), s.pages.checks.Load()-checks, "the page of %s is checked once for %d requests", id, stampedeClients)
		assert.Equal(t, int64(1), s.pages.builds.Load()-builds, "the page of %s is rebuilt once, with the comparison", id)
		doc := parseHTML(t, strings.NewReader(bodies[0]))
		assert.Contains(t, byTestID(doc, "related").Text(), other, "the related runs list the comparison")
	}

	// Due for their check again, this process having changed nothing: every request is served
	// the page at once, and one check runs in the background.
	now.Add(int64(2 * pageRecheck))
	for _, id := range []string{a, b} {
		builds, checks := s.pages.builds.Load(), s.pages.checks.Load()
		reset(1)
		burst(t, srv.URL, "/runs/"+id)
		assert.Equal(t, int64(0), s.pages.builds.Load()-builds, "the page of %s is still current", id)
		require.Eventually(t, func() bool { return s.pages.checks.Load()-checks == 1 }, 10*time.Second, time.Millisecond)
		p, ok := s.pages.pages.Peek(runPageKey(httptest.NewRequest(http.MethodGet, "/runs/"+id, nil)))
		require.True(t, ok, "the page of %s stays cached", id)
		require.Eventually(t, func() bool { return !p.checking.Load() }, 10*time.Second, time.Millisecond)
		assert.Equal(t, int64(1), s.pages.checks.Load()-checks, "the page of %s is checked once for %d requests", id, stampedeClients)
		assert.True(t, s.pages.fresh(p, s.now()), "the check confirmed the page")
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

// A page due for its check only because the second ran out is served at once and checked in
// the background; a version that changed meanwhile (another process's comparison) drops it, so
// the next request builds it again.
func TestBackgroundCheckDropsAChangedPage(t *testing.T) {
	c := newPageCache()
	start := time.Now()
	p := &cachedPage{version: "v1", body: []byte("page"), recheck: pageRecheck}
	p.checkedAt.Store(start.UnixNano())
	c.pages.Add("/runs/x", p)
	version := func(context.Context, *cachedPage) (string, error) { return "v2", nil }

	got, ok := c.lookup(context.Background(), "/runs/x", start.Add(pageRecheck/2), version)
	require.True(t, ok)
	assert.Same(t, p, got)
	assert.Equal(t, int64(0), c.checks.Load(), "checked less than a second ago: no check")

	got, ok = c.lookup(context.Background(), "/runs/x", start.Add(2*pageRecheck), version)
	require.True(t, ok, "served while it is checked")
	assert.Same(t, p, got)
	require.Eventually(t, func() bool { _, ok := c.pages.Peek("/runs/x"); return !ok }, 5*time.Second, time.Millisecond,
		"the changed page is dropped")
	assert.Equal(t, int64(1), c.checks.Load())
	_, ok = c.lookup(context.Background(), "/runs/x", start.Add(2*pageRecheck), version)
	assert.False(t, ok, "the next request builds the page again")

	// After a change this process made (gen), the request waits for the check instead.
	q := &cachedPage{version: "v1", body: []byte("page"), recheck: pageRecheck}
	q.checkedAt.Store(start.UnixNano())
	c.pages.Add("/runs/y", q)
	c.changed()
	_, ok = c.lookup(context.Background(), "/runs/y", start, version)
	assert.False(t, ok, "a stale page is not served once this process changed something")
}
