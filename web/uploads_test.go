package web

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/scalein-planner/scalein/runs"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func postFPMBody(t *testing.T, s *Server, query, contentType, body string) *httptest.ResponseRecorder {
	t.Helper()
	req := httptest.NewRequest(http.MethodPost, "/api/v1/calibrations"+query, strings.NewReader(body))
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	return do(t, s.Handler(), req)
}

// Issue 19 M2: the documented curl (--data-binary, so form-urlencoded) and the usual labels of
// JSON lines are accepted on the upload route; other API routes still read JSON only.
func TestCalibrationUploadContentTypes(t *testing.T) {
	s := newFakeServer(t, runs.Config{}, false)
	body := fpmLines(60)
	for i, ct := range []string{"", "application/json", "application/x-www-form-urlencoded", "application/x-ndjson", "text/plain; charset=utf-8", "application/octet-stream"} {
		rec := postFPMBody(t, s, "?skip="+string(rune('0'+i)), ct, body)
		assert.Equal(t, http.StatusCreated, rec.Code, "%q: %s", ct, rec.Body.String())
	}
	rec := postFPMBody(t, s, "", "image/png", body)
	assert.Equal(t, http.StatusUnsupportedMediaType, rec.Code)
	req := httptest.NewRequest(http.MethodPost, "/api/v1/runs", strings.NewReader(testScenario("x")))
	req.Header.Set("Content-Type", "text/plain")
	assert.Equal(t, http.StatusUnsupportedMediaType, do(t, s.Handler(), req).Code)
}

// Issue 19 H4: an upload waits for a large-body slot and for memory (then 503 with
// Retry-After), and uploads count against the run-creation rate.
func TestCalibrationUploadsAreBounded(t *testing.T) {
	s := newFakeServer(t, runs.Config{}, false)
	s.exports().uploadWait = 50 * time.Millisecond
	body := fpmLines(60)

	hold, err := s.runs.Reserve(context.Background(), s.runs.Limits().MaxTotalMemory)
	require.NoError(t, err)
	rec := postFPMBody(t, s, "", "application/x-ndjson", body)
	assert.Equal(t, http.StatusServiceUnavailable, rec.Code, rec.Body.String())
	assert.Equal(t, "10", rec.Header().Get("Retry-After"))
	hold()

	for range cap(s.bodies.slots) {
		s.bodies.slots <- struct{}{}
	}
	assert.Equal(t, http.StatusServiceUnavailable, postFPMBody(t, s, "", "", body).Code)
	for range cap(s.bodies.slots) {
		<-s.bodies.slots
	}
	assert.Equal(t, http.StatusCreated, postFPMBody(t, s, "", "", body).Code)

	limited := newLimitedServer(t, runs.Config{}, 2, false)
	for i := range 2 {
		assert.Equal(t, http.StatusCreated, postFPMBody(t, limited, "?skip="+string(rune('0'+i)), "", body).Code)
	}
	assert.Equal(t, http.StatusTooManyRequests, postFPMBody(t, limited, "?skip=9", "", body).Code)
}

// Issue 19 M7: the stored inputs are capped; content already stored is still accepted.
func TestCalibrationStorageCap(t *testing.T) {
	body := fpmLines(60)
	s := newFakeServer(t, runs.Config{}, false)
	s.cfg.MaxCalibrationBytes = int64(len(body)) + 10
	require.Equal(t, http.StatusCreated, postFPMBody(t, s, "", "", body).Code)
	assert.Equal(t, http.StatusCreated, postFPMBody(t, s, "?skip=1", "", body).Code, "the same file with other options costs nothing")
	rec := postFPMBody(t, s, "", "", fpmLines(61))
	assert.Equal(t, http.StatusInsufficientStorage, rec.Code, rec.Body.String())
	assert.Contains(t, rec.Body.String(), "calibration inputs take")
}
