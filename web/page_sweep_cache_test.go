package web

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/scalein-planner/scalein/runs"
)

// Probe finding L12: the page of a running sweep was rebuilt on every request (the sweep and
// its points read and decoded, the page rendered). It is now cached per sweep version: built
// once while no point changes, rebuilt by the first request after one does.
func TestSweepPageCachedPerVersion(t *testing.T) {
	s := newFakeServer(t, runs.Config{}, false) // the points' runs stay queued until the test moves them
	axes := `[{"path": "kvcr.bandwidth_gbps", "values": [5, 40]}]`
	rec := postJSON(t, s, "/api/v1/sweeps", sweepBody(fourWorkers(t, `[{"at_ms": 100, "count": 2}]`), axes))
	require.Equal(t, http.StatusAccepted, rec.Code, rec.Body.String())
	id := createdID(t, rec, rec.Body.Bytes())
	sw, err := s.runs.Sweep(context.Background(), id)
	require.NoError(t, err)
	require.Len(t, sw.Points, 2)

	statuses := func(rec *http.Response) []string {
		t.Helper()
		doc := parseHTML(t, rec.Body)
		var out []string
		byTestID(doc, "sweep-row").Each(func(_ int, row *goquery.Selection) {
			out = append(out, row.Find("td").Eq(2).Text())
		})
		return out
	}
	builds := s.pages.builds.Load()
	first := get(t, s, "/sweeps/"+id)
	require.Equal(t, http.StatusOK, first.Code)
	etag := first.Header().Get("ETag")
	require.NotEmpty(t, etag, "the sweep page is served from the cache")
	for range 5 {
		again := get(t, s, "/sweeps/"+id)
		assert.Equal(t, first.Body.String(), again.Body.String())
		assert.Equal(t, etag, again.Header().Get("ETag"))
	}
	assert.Equal(t, int64(1), s.pages.builds.Load()-builds, "six requests, one build: nothing changed")
	assert.Equal(t, http.StatusNotModified, getWith(t, s, "/sweeps/"+id, map[string]string{"If-None-Match": etag}).Code)
	assert.Equal(t, []string{"queued", "queued"}, statuses(first.Result()))

	// A point starting changes the page at once (no recheck delay), and so does a cancel.
	require.NoError(t, s.store.StartRun(context.Background(), sw.Points[1].RunID, time.Now()))
	running := get(t, s, "/sweeps/"+id)
	assert.NotEqual(t, etag, running.Header().Get("ETag"))
	assert.Equal(t, []string{"queued", "running"}, statuses(running.Result()))
	assert.Equal(t, int64(2), s.pages.builds.Load()-builds)

	require.Equal(t, http.StatusSeeOther, postForm(t, s, "/sweeps/"+id+"/cancel", nil).Code)
	cancelled := get(t, s, "/sweeps/"+id)
	doc := parseHTML(t, cancelled.Body)
	assert.Equal(t, 0, byTestID(doc, "sweep-cancel").Length(), "a cancelled sweep has nothing to cancel")
	assert.NotEqual(t, running.Header().Get("ETag"), cancelled.Header().Get("ETag"))
}
