package web

import (
	"compress/gzip"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/scalein-planner/scalein/runs"
	"github.com/scalein-planner/scalein/store"
)

func getWith(t *testing.T, s *Server, target string, header map[string]string) *httptest.ResponseRecorder {
	t.Helper()
	req := httptest.NewRequest(http.MethodGet, target, nil)
	for k, v := range header {
		req.Header.Set(k, v)
	}
	return do(t, s.Handler(), req)
}

func TestFinishedRunPageCached(t *testing.T) {
	s := newFakeServer(t, runs.Config{}, true)
	id := submitAPI(t, s, testScenario("cached"))
	waitStatus(t, s, id, store.StatusDone)

	first := get(t, s, "/runs/"+id)
	require.Equal(t, http.StatusOK, first.Code)
	etag := first.Header().Get("ETag")
	require.NotEmpty(t, etag)
	assert.Equal(t, "no-cache", first.Header().Get("Cache-Control"))
	assert.NotContains(t, first.Header().Get("Content-Security-Policy"), "nonce", "a shared page carries no per-request nonce")
	assert.Contains(t, first.Header().Get("Content-Security-Policy"), "script-src 'self'")
	assert.True(t, strings.Contains(first.Body.String(), `data-testid="cards"`))

	again := get(t, s, "/runs/"+id)
	assert.Equal(t, etag, again.Header().Get("ETag"))
	assert.Equal(t, first.Body.String(), again.Body.String())

	notModified := getWith(t, s, "/runs/"+id, map[string]string{"If-None-Match": `"other", ` + etag})
	assert.Equal(t, http.StatusNotModified, notModified.Code)
	assert.Empty(t, notModified.Body.String())
	assert.Equal(t, http.StatusOK, getWith(t, s, "/runs/"+id, map[string]string{"If-None-Match": `"other"`}).Code)

	zipped := getWith(t, s, "/runs/"+id, map[string]string{"Accept-Encoding": "gzip, br"})
	require.Equal(t, "gzip", zipped.Header().Get("Content-Encoding"))
	zr, err := gzip.NewReader(zipped.Body)
	require.NoError(t, err)
	plain, err := io.ReadAll(zr)
	require.NoError(t, err)
	assert.Equal(t, first.Body.String(), string(plain))
	assert.Empty(t, getWith(t, s, "/runs/"+id, map[string]string{"Accept-Encoding": "gzip;q=0"}).Header().Get("Content-Encoding"))

	// A comparison the run becomes part of changes its page (and its ETag).
	other := submitAPI(t, s, testScenario("cached-other"))
	waitStatus(t, s, other, store.StatusDone)
	require.Equal(t, http.StatusSeeOther, get(t, s, "/compare?run="+other+"&run="+id).Code) // "Compare selected"
	after := get(t, s, "/runs/"+id)
	assert.NotEqual(t, etag, after.Header().Get("ETag"))
	doc := parseHTML(t, after.Body)
	assert.Contains(t, byTestID(doc, "related").Text(), "cached-other")

	// The compare page of two finished runs is cached too.
	cmp := get(t, s, "/compare?a="+id+"&b="+other)
	require.NotEmpty(t, cmp.Header().Get("ETag"))
	assert.Equal(t, http.StatusNotModified, getWith(t, s, "/compare?a="+id+"&b="+other, map[string]string{"If-None-Match": cmp.Header().Get("ETag")}).Code)
}

// Pages of unfinished runs are rendered per request with their nonce and are not cached.
func TestUnfinishedRunPageNotCached(t *testing.T) {
	s := newFakeServer(t, runs.Config{}, false)
	id := submitAPI(t, s, testScenario("queued"))
	rec := get(t, s, "/runs/"+id)
	require.Equal(t, http.StatusOK, rec.Code)
	assert.Empty(t, rec.Header().Get("ETag"))
	assert.Contains(t, rec.Header().Get("Content-Security-Policy"), "nonce-")
}

// Other responses are compressed by gzhttp; the event stream is not.
func TestCompression(t *testing.T) {
	s := newFakeServer(t, runs.Config{}, true)
	id := submitAPI(t, s, testScenario("zip"))
	waitStatus(t, s, id, store.StatusDone)
	rec := getWith(t, s, "/runs/"+id+"/report.json", map[string]string{"Accept-Encoding": "gzip"})
	assert.Equal(t, "gzip", rec.Header().Get("Content-Encoding"))
	rec = getWith(t, s, "/runs", map[string]string{"Accept-Encoding": "gzip"})
	assert.Equal(t, "gzip", rec.Header().Get("Content-Encoding"))
	rec = getWith(t, s, "/runs/"+id+"/events", map[string]string{"Accept-Encoding": "gzip"})
	assert.Empty(t, rec.Header().Get("Content-Encoding"))
}

// A small load test: many concurrent clients on a finished run's page, its compare page and
// conditional requests; every answer must be a 200 or a 304 with the same page.
func TestPermalinkLoad(t *testing.T) {
	s := newFakeServer(t, runs.Config{}, true)
	a := submitAPI(t, s, testScenario("load-a"))
	b := submitAPI(t, s, testScenario("load-b"))
	waitStatus(t, s, a, store.StatusDone)
	waitStatus(t, s, b, store.StatusDone)
	srv := httptest.NewServer(s.Handler())
	defer srv.Close()
	targets := []string{"/runs/" + a, "/runs/" + b, "/compare?a=" + a + "&b=" + b, "/runs/" + a + "?workers=all"}
	var wg sync.WaitGroup
	errs := make(chan string, 1000)
	for c := range 16 {
		wg.Go(func() {
			client := &http.Client{}
			for i := range 25 {
				req, _ := http.NewRequest(http.MethodGet, srv.URL+targets[(c+i)%len(targets)], nil)
				if i%3 == 0 {
					req.Header.Set("Accept-Encoding", "gzip")
				}
				resp, err := client.Do(req)
				if err != nil {
					errs <- err.Error()
					continue
				}
				body, err := io.ReadAll(resp.Body)
				resp.Body.Close()
				if err != nil || resp.StatusCode != http.StatusOK || len(body) == 0 {
					errs <- resp.Request.URL.String() + ": " + resp.Status
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	var all []string
	for e := range errs {
		all = append(all, e)
	}
	assert.Empty(t, all, "400 requests, no errors")
}

func TestCompareSelected(t *testing.T) {
	s := newFakeServer(t, runs.Config{}, false)
	older := submitAPI(t, s, testScenario("older"))
	newer := submitAPI(t, s, testScenario("newer"))
	rec := get(t, s, "/compare?run="+newer+"&run="+older)
	require.Equal(t, http.StatusSeeOther, rec.Code)
	assert.Equal(t, "/compare?a="+older+"&b="+newer, rec.Header().Get("Location"))

	rec = get(t, s, "/compare?run="+newer)
	require.Equal(t, http.StatusUnprocessableEntity, rec.Code)
	doc := parseHTML(t, rec.Body)
	assert.Contains(t, byTestID(doc, "runs-error").Text(), "exactly two runs; 1 was selected")
	assert.Equal(t, 1, byTestID(doc, "run-row-"+older).Length(), "the list is shown again")

	// Compare with…: the list offers a compare link on every other run, filtered by name.
	doc = parseHTML(t, get(t, s, "/runs?with="+older+"&q=NEW").Body)
	assert.Equal(t, 1, byTestID(doc, "compare-with-"+newer).Length())
	// The link records the comparison, with this run as A (issue 19 L9: through "?run=", the
	// explicit action; a plain /compare?a=&b= records nothing).
	link := byTestID(doc, "compare-with-"+newer).AttrOr("href", "")
	rec = get(t, s, link)
	require.Equal(t, http.StatusSeeOther, rec.Code, link)
	assert.Equal(t, "/compare?a="+older+"&b="+newer, rec.Header().Get("Location"))
	assert.Zero(t, byTestID(doc, "run-row-"+older).Length(), "filtered out by name")
	assert.Equal(t, http.StatusNotFound, get(t, s, "/runs?with=nope").Code)
}
