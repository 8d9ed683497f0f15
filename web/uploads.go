package web

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/scalein-planner/scalein/sim"
)

// Calibration uploads hold the whole file and its parse state (about 4.6 bytes per byte of
// input, measured by the probe: 230 MB per 50 MB upload), so they go through the same bounds as
// other big requests and as runs (issue 19 H4): a slot of the large-body limiter (bigBodies,
// -big-bodies … 2 at once), a grant from the memory budget of uploadMemoryFactor × the body,
// and the run-creation rate limit (routes.go). Their content is stored once per sha256 and the
// stored total is capped (M7).

const (
	// uploadMemoryFactor × the body size is the memory an upload is granted while it is fitted.
	uploadMemoryFactor = 5
	// uploadWait is how long an upload waits for a slot and memory before a 503.
	uploadWait = 30 * time.Second
	// DefaultMaxCalibrationBytes caps the calibration inputs stored in all (uncompressed; the
	// database holds them gzipped, about a tenth of that).
	DefaultMaxCalibrationBytes = 2 << 30
)

// admitUpload waits for a large-body slot and a memory grant for a body of size bytes (-1 when
// the client did not say: the largest allowed). release gives both back. Callers read the body
// first (upload_body.go), so a slow client never holds a slot.
func (s *Server) admitUpload(ctx context.Context, size int64) (release func(), err error) {
	if size < 0 || size > maxUploadBodySize {
		size = maxUploadBodySize
	}
	busy := uploadsBusy()
	ctx, cancel := context.WithTimeout(ctx, s.exports().uploadWait)
	defer cancel()
	select {
	case s.bodies.slots <- struct{}{}:
	case <-ctx.Done():
		return nil, busy
	}
	grant, err := s.runs.Reserve(ctx, uploadMemoryFactor*size)
	if err != nil {
		<-s.bodies.slots
		return nil, busy
	}
	return func() {
		grant()
		<-s.bodies.slots
	}, nil
}

// uploadsBusy is the 503 of a big body that found no large-body slot or memory in time.
func uploadsBusy() *Error {
	return &Error{Status: http.StatusServiceUnavailable, Title: "Uploads busy",
		Message: fmt.Sprintf("uploads are busy, retry in %d s: the server is reading other large uploads or requests, or running big runs, and has no room for this one now",
			exportRetryAfterSeconds),
		RetryAfter: exportRetryAfterSeconds}
}

// checkCalibrationRoom refuses new content once the stored calibration inputs reach the cap
// (content already stored costs nothing and is always accepted).
func (s *Server) checkCalibrationRoom(ctx context.Context, sha string, size int64) error {
	used, stored, err := s.store.CalibrationStorage(ctx, sha)
	if err != nil || stored {
		return err
	}
	limit := s.maxCalibrationBytes()
	if used+size > limit {
		return &Error{Status: http.StatusInsufficientStorage, Title: "Calibration storage full",
			Message: fmt.Sprintf("the stored calibration inputs take %s of the %s this server keeps; upload a smaller part of the file (a few thousand passes are plenty), or reuse a stored calibration",
				sim.FormatBytes(used), sim.FormatBytes(limit))}
	}
	return nil
}

func (s *Server) maxCalibrationBytes() int64 {
	if s.cfg.MaxCalibrationBytes > 0 {
		return s.cfg.MaxCalibrationBytes
	}
	return DefaultMaxCalibrationBytes
}

// fpmMediaTypes are accepted besides JSON on POST /api/v1/calibrations, whose body is JSON
// lines (issue 19 M2): curl --data-binary sends application/x-www-form-urlencoded unless told,
// and tools label JSON lines in several ways. Cross-site posts are refused before this
// (CrossOriginProtection), so accepting them opens nothing.
var fpmMediaTypes = map[string]bool{
	"application/x-ndjson":              true,
	"application/jsonl":                 true,
	"application/x-jsonlines":           true,
	"text/plain":                        true,
	"application/octet-stream":          true,
	"application/x-www-form-urlencoded": true, // curl --data-binary's default
}
