package web

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/scalein-planner/scalein/runs"
)

// traceLines is a valid Mooncake-format trace of n requests; seed makes it a distinct file.
func traceLines(n, seed int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, `{"timestamp": %d, "input_length": %d, "output_length": 4, "hash_ids": [1, 2]}`+"\n", i*10, 32+seed)
	}
	return b.String()
}

// traceUploadRequest is POST /traces with content as the form's file.
func traceUploadRequest(t *testing.T, content string) *http.Request {
	t.Helper()
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	fw, err := mw.CreateFormFile("file", "t.jsonl")
	require.NoError(t, err)
	_, _ = fw.Write([]byte(content))
	require.NoError(t, mw.Close())
	req := httptest.NewRequest(http.MethodPost, "/traces", &body)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	return req
}

// Finding H1: a trace upload takes a large-body slot and a memory grant (503 with Retry-After
// when neither comes), and counts against the run-creation rate.
func TestTraceUploadsAreBounded(t *testing.T) {
	s := newFakeServer(t, runs.Config{}, false)
	s.exports().uploadWait = 50 * time.Millisecond

	hold, err := s.runs.Reserve(context.Background(), s.runs.Limits().MaxTotalMemory)
	require.NoError(t, err)
	rec := do(t, s.Handler(), traceUploadRequest(t, traceLines(20, 1)))
	assert.Equal(t, http.StatusServiceUnavailable, rec.Code, "no memory: %s", rec.Body.String())
	assert.NotEmpty(t, rec.Header().Get("Retry-After"))
	hold()

	for range cap(s.bodies.slots) {
		s.bodies.slots <- struct{}{}
	}
	rec = do(t, s.Handler(), traceUploadRequest(t, traceLines(20, 1)))
	assert.Equal(t, http.StatusServiceUnavailable, rec.Code, "no slot: %s", rec.Body.String())
	for range cap(s.bodies.slots) {
		<-s.bodies.slots
	}
	rec = do(t, s.Handler(), traceUploadRequest(t, traceLines(20, 1)))
	assert.Equal(t, http.StatusSeeOther, rec.Code, rec.Body.String())

	limited := newLimitedServer(t, runs.Config{}, 2, false)
	for i := range 2 {
		assert.Equal(t, http.StatusSeeOther, do(t, limited.Handler(), traceUploadRequest(t, traceLines(20, i))).Code)
	}
	rec = do(t, limited.Handler(), traceUploadRequest(t, traceLines(20, 9)))
	assert.Equal(t, http.StatusTooManyRequests, rec.Code, "uploads count like run creation")
}

// countingReader counts what was read from it.
type countingReader struct {
	r io.Reader
	n atomic.Int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n.Add(int64(n))
	return n, err
}

// Finding H1: the upload quota is judged from Content-Length before a byte of the body is read,
// and from the spooled file's size before it is parsed.
func TestTraceQuotaCheckedBeforeTheBodyIsRead(t *testing.T) {
	s := newAccessServer(t, runs.Config{}, withUsers(Access{Quotas: Quotas{UploadBytes: 600}}), 0)

	big := traceUploadRequest(t, traceLines(200, 1)) // about 16 KB
	body := &countingReader{r: big.Body}
	big.Body = io.NopCloser(body)
	rec := as(t, s, "dave", big)
	assert.Equal(t, http.StatusTooManyRequests, rec.Code, rec.Body.String())
	assert.Contains(t, rec.Body.String(), "-quota-upload-bytes")
	assert.Contains(t, rec.Body.String(), "Content-Length")
	assert.Zero(t, body.n.Load(), "the body must not be read once Content-Length is over the quota")

	// Without a Content-Length (chunked), an invalid trace over the quota is refused for the
	// quota, not parsed (a parse would answer 422).
	bad := traceUploadRequest(t, strings.Repeat(`{"timestamp": 0, "input_length": -1}`+"\n", 30))
	bad.ContentLength = -1
	rec = as(t, s, "dave", bad)
	assert.Equal(t, http.StatusTooManyRequests, rec.Code, rec.Body.String())

	// Within the quota, the upload is stored; the same file again costs nothing.
	small := traceLines(5, 1)
	require.Equal(t, http.StatusSeeOther, as(t, s, "dave", traceUploadRequest(t, small)).Code)
	assert.Equal(t, http.StatusSeeOther, as(t, s, "dave", traceUploadRequest(t, small)).Code)
}

// calibrationUploadRequest is POST /calibrations (the form) with content as its file.
func calibrationUploadRequest(t *testing.T, content string) *http.Request {
	t.Helper()
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	fw, err := mw.CreateFormFile("file", "fpm.jsonl")
	require.NoError(t, err)
	_, _ = fw.Write([]byte(content))
	require.NoError(t, mw.Close())
	req := httptest.NewRequest(http.MethodPost, "/calibrations", &body)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	return req
}

// Finding H1 for the calibration form, which lacked the trace form's gate: the upload quota is
// judged from Content-Length before a byte of the body is read, and from the spooled file's
// size before it is read into memory or fitted.
func TestCalibrationFormQuotaCheckedBeforeTheBodyIsRead(t *testing.T) {
	small := fpmLines(6)
	s := newAccessServer(t, runs.Config{}, withUsers(Access{Quotas: Quotas{UploadBytes: int64(len(small)) + 100}}), 0)

	big := calibrationUploadRequest(t, fpmLines(200)) // about 30 KB
	body := &countingReader{r: big.Body}
	big.Body = io.NopCloser(body)
	rec := as(t, s, "dave", big)
	assert.Equal(t, http.StatusTooManyRequests, rec.Code, rec.Body.String())
	assert.Contains(t, rec.Body.String(), "-quota-upload-bytes")
	assert.Contains(t, rec.Body.String(), "Content-Length")
	assert.Zero(t, body.n.Load(), "the body must not be read once Content-Length is over the quota")

	// Without a Content-Length (chunked), bad lines over the quota are refused for the quota,
	// not fitted (a fit would answer 422 with the bad lines).
	bad := calibrationUploadRequest(t, strings.Repeat(`{"worker_id": "w", "wall_time": -1}`+"\n", 200))
	bad.ContentLength = -1
	rec = as(t, s, "dave", bad)
	assert.Equal(t, http.StatusTooManyRequests, rec.Code, rec.Body.String())

	// Within the quota, the calibration is stored.
	rec = as(t, s, "dave", calibrationUploadRequest(t, small))
	assert.Equal(t, http.StatusSeeOther, rec.Code, rec.Body.String())
}
