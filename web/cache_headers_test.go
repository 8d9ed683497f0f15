package web

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/scalein-planner/scalein/runs"
	"github.com/scalein-planner/scalein/store"
)

// Probe finding L8: a cached page said Vary: Accept-Encoding twice, its gzip and its plain body
// shared one strong ETag, and dynamic HTML and JSON had no Cache-Control at all.
func TestCachedPageHeaders(t *testing.T) {
	s := newFakeServer(t, runs.Config{}, true)
	id := submitAPI(t, s, testScenario("headers"))
	waitStatus(t, s, id, store.StatusDone)
	gzip := map[string]string{"Accept-Encoding": "gzip"}

	plain := getWith(t, s, "/runs/"+id, nil)
	zipped := getWith(t, s, "/runs/"+id, gzip)
	require.Equal(t, http.StatusOK, plain.Code)
	require.Equal(t, "gzip", zipped.Header().Get("Content-Encoding"))
	for _, rec := range []http.Header{plain.Header(), zipped.Header()} {
		assert.Equal(t, []string{"Accept-Encoding"}, rec.Values("Vary"), "one Vary")
		assert.Equal(t, "no-cache", rec.Get("Cache-Control"))
	}
	plainTag, zipTag := plain.Header().Get("ETag"), zipped.Header().Get("ETag")
	require.NotEmpty(t, plainTag)
	assert.NotEqual(t, plainTag, zipTag, "each encoding has its own ETag")
	assert.Regexp(t, `^"[0-9a-f]+-gzip"$`, zipTag)

	// If-None-Match is compared with the ETag of the encoding the request would get.
	match := func(tag string, header map[string]string) int {
		h := map[string]string{"If-None-Match": tag}
		for k, v := range header {
			h[k] = v
		}
		return getWith(t, s, "/runs/"+id, h).Code
	}
	assert.Equal(t, http.StatusNotModified, match(zipTag, gzip))
	assert.Equal(t, http.StatusNotModified, match(plainTag, nil))
	assert.Equal(t, http.StatusNotModified, match("W/"+zipTag, gzip), "weak comparison")
	assert.Equal(t, http.StatusOK, match(plainTag, gzip), "a client holding the plain page asks for gzip now")
	assert.Equal(t, http.StatusOK, match(zipTag, nil))
	notModified := getWith(t, s, "/runs/"+id, map[string]string{"If-None-Match": zipTag, "Accept-Encoding": "gzip"})
	assert.Equal(t, zipTag, notModified.Header().Get("ETag"), "a 304 names the ETag it matched")

	// The exported report is compressed by its own handler: one Vary too.
	rep := getWith(t, s, "/runs/"+id+"/report.json", gzip)
	assert.Equal(t, []string{"Accept-Encoding"}, rep.Header().Values("Vary"))
}

func TestDynamicCacheControl(t *testing.T) {
	s := newFakeServer(t, runs.Config{}, false)
	queued := submitAPI(t, s, testScenario("cache-control"))
	for _, target := range []string{"/", "/runs", "/runs/" + queued, "/api/v1/runs", "/api/v1/runs/" + queued,
		"/runs/" + queued + "/scenario.json", "/admin/queue", "/no-such-page"} {
		rec := getWith(t, s, target, map[string]string{"Accept-Encoding": "gzip"})
		assert.Less(t, rec.Code, 500, target)
		assert.Equal(t, "no-cache", rec.Header().Get("Cache-Control"), target)
		assert.LessOrEqual(t, len(rec.Header().Values("Vary")), 1, target)
	}
	// Static files keep their own policy: a year when the URL has the content hash.
	css := s.assets.url("css/app.css")
	rec := get(t, s, css)
	require.Equal(t, http.StatusOK, rec.Code, css)
	assert.Equal(t, "public, max-age=31536000, immutable", rec.Header().Get("Cache-Control"))
}

// An answer that sets its own ETag and is compressed by the compress middleware gets an ETag
// per encoding too (none does today; this keeps the next one honest).
func TestCompressedETagPerEncoding(t *testing.T) {
	body := strings.Repeat("a page long enough to be compressed. ", 200)
	h := compress(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("ETag", `"v1"`)
		_, _ = w.Write([]byte(body))
	}))
	req := httptest.NewRequest(http.MethodGet, "/x", nil)
	req.Header.Set("Accept-Encoding", "gzip")
	zipped := do(t, h, req)
	require.Equal(t, "gzip", zipped.Header().Get("Content-Encoding"))
	assert.Equal(t, `"v1-gzip"`, zipped.Header().Get("ETag"))
	assert.Equal(t, []string{"Accept-Encoding"}, zipped.Header().Values("Vary"))
	plain := do(t, h, httptest.NewRequest(http.MethodGet, "/x", nil))
	assert.Equal(t, `"v1"`, plain.Header().Get("ETag"))
}

// Once a trusted proxy names the users, every dynamic answer is private, the cached pages
// included (they are the same for everyone, but a shared cache must not learn what a user
// opened); static files stay public.
func TestCacheControlPrivateWithIdentities(t *testing.T) {
	s := newFakeApp(t, runs.Config{}, true, Config{RunsPerMinute: 1000, Access: withUsers(Access{})})
	rec := as(t, s, "alice", jsonReq(http.MethodPost, "/api/v1/runs", testScenario("private")))
	require.Equal(t, http.StatusAccepted, rec.Code, rec.Body.String())
	var created struct{ ID string }
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &created))
	waitStatus(t, s, created.ID, store.StatusDone)

	for _, target := range []string{"/runs/" + created.ID, "/runs/" + created.ID, "/runs", "/api/v1/runs", "/runs/" + created.ID + "/report.json"} {
		req := httptest.NewRequest(http.MethodGet, target, nil)
		req.Header.Set("Accept-Encoding", "gzip")
		rec := as(t, s, "alice", req)
		require.Equal(t, http.StatusOK, rec.Code, target)
		assert.Equal(t, "private, no-cache", rec.Header().Get("Cache-Control"), target)
	}
	cached := as(t, s, "bob", httptest.NewRequest(http.MethodGet, "/runs/"+created.ID, nil))
	require.NotEmpty(t, cached.Header().Get("ETag"), "the run page is still served from the cache")
	assert.Equal(t, "private, no-cache", cached.Header().Get("Cache-Control"))

	css := s.assets.url("css/app.css")
	assert.Equal(t, "public, max-age=31536000, immutable", as(t, s, "alice", httptest.NewRequest(http.MethodGet, css, nil)).Header().Get("Cache-Control"))
}
