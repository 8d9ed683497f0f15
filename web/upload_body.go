package web

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"time"
)

// Upload bodies are read before they are admitted (finding M4 of the 2026-12b probe: a client
// sending one byte every 3 s held a large-body slot for the server's whole 2-minute read
// timeout, and two such clients kept every upload out). An upload's body is spooled to a
// temporary file under a short deadline and a minimum rate, and only a body that has arrived
// waits for a slot and a memory grant (admitUpload) to be read into memory and parsed.

const (
	// uploadBodyGrace is how long an upload body may take before its rate is judged, and what
	// its read deadline adds to the time its length takes at minUploadBytesPerSecond.
	uploadBodyGrace = 10 * time.Second
	// minUploadBytesPerSecond is the slowest average rate an upload body may arrive at once
	// uploadBodyGrace has passed (32 KiB/s: a 64 MiB trace within 35 minutes; any link that
	// serves a browser does far better).
	minUploadBytesPerSecond = 32 << 10
)

// slowBodyError is a body that arrived slower than the minimum rate.
type slowBodyError struct {
	read    int64
	elapsed time.Duration
	min     int64
}

func (e *slowBodyError) Error() string {
	return fmt.Sprintf("the upload arrived at %d bytes/s, below the %d bytes/s this server requires", e.rate(), e.min)
}

func (e *slowBodyError) rate() int64 { return int64(float64(e.read) / max(e.elapsed.Seconds(), 0.001)) }

// problem is the 408 of a body that arrived too slowly.
func (e *slowBodyError) problem() *Error {
	return &Error{Status: http.StatusRequestTimeout, Title: "Upload too slow",
		Message: fmt.Sprintf("the upload arrived at %s/s, below the %s/s this server requires once %s have passed; upload from a faster connection, or a smaller part of the file",
			binaryRate(e.rate()), binaryRate(e.min), uploadBodyGrace)}
}

func binaryRate(n int64) string {
	if n >= 1<<10 {
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}

// minRateReader fails a body whose average rate since start falls below minRate once grace has
// passed. A client that sends nothing at all is stopped by the read deadline instead.
type minRateReader struct {
	r       io.ReadCloser
	start   time.Time
	grace   time.Duration
	minRate int64
	read    int64
}

func (m *minRateReader) Read(p []byte) (int, error) {
	n, err := m.r.Read(p)
	m.read += int64(n)
	if elapsed := time.Since(m.start); elapsed > m.grace && float64(m.read) < float64(m.minRate)*elapsed.Seconds() {
		return n, &slowBodyError{read: m.read, elapsed: elapsed, min: m.minRate}
	}
	return n, err
}

func (m *minRateReader) Close() error { return m.r.Close() }

// paceUpload is the gate of an upload route: it puts the body under the minimum rate and a read
// deadline of the grace plus the time its declared length (or the largest upload) takes at the
// minimum rate. It wraps the body limitBody has bounded (routes.go puts it after), so the
// limit holds under it.
func (s *Server) paceUpload(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		g := s.exports()
		size := r.ContentLength
		if size < 0 || size > maxUploadBodySize {
			size = maxUploadBodySize
		}
		deadline := time.Now().Add(g.bodyGrace + time.Duration(float64(size)/float64(g.minBodyRate)*float64(time.Second)))
		// Not every ResponseWriter has a connection to set a deadline on (tests record answers);
		// the rate check still holds there.
		_ = http.NewResponseController(w).SetReadDeadline(deadline)
		if r.Body != nil {
			r.Body = &minRateReader{r: r.Body, start: time.Now(), grace: g.bodyGrace, minRate: g.minBodyRate}
		}
		next.ServeHTTP(w, r)
	})
}

// uploadReadError is the answer to a failed read of an upload body: the 408 of a slow body,
// the 413 of one past the limit, or nil when err is neither.
func uploadReadError(err error, tooLarge *Error) *Error {
	var slow *slowBodyError
	var tooBig *http.MaxBytesError
	switch {
	case errors.As(err, &slow):
		return slow.problem()
	case errors.As(err, &tooBig):
		return tooLarge
	case isTimeout(err):
		return &Error{Status: http.StatusRequestTimeout, Title: "Upload too slow",
			Message: fmt.Sprintf("the upload did not arrive within its deadline (%s, plus the time its size takes at %s/s); upload from a faster connection, or a smaller part of the file",
				uploadBodyGrace, binaryRate(minUploadBytesPerSecond))}
	}
	return nil
}

func isTimeout(err error) bool {
	var t interface{ Timeout() bool }
	return errors.Is(err, os.ErrDeadlineExceeded) || (errors.As(err, &t) && t.Timeout())
}

// spoolBody copies the request body to a temporary file and returns it rewound, with its size;
// done removes it.
func spoolBody(r *http.Request) (f *os.File, size int64, done func(), err error) {
	f, err = os.CreateTemp("", "scalein-upload-*")
	if err != nil {
		return nil, 0, nil, fmt.Errorf("spool upload: %w", err)
	}
	done = func() {
		_ = f.Close()
		_ = os.Remove(f.Name())
	}
	size, err = io.Copy(f, r.Body)
	if err == nil {
		_, err = f.Seek(0, io.SeekStart)
	}
	if err != nil {
		done()
		return nil, 0, nil, err
	}
	return f, size, done, nil
}
