package web

import (
	"context"
	"fmt"
	"net/http"

	"github.com/scalein-planner/scalein/runs"
	"github.com/scalein-planner/scalein/sim/whatif"
	"github.com/scalein-planner/scalein/store"
	"github.com/scalein-planner/scalein/web/format"
)

// Quotas bound what one user holds at once, so one user cannot fill the queue or the disk for
// everyone (finding M6). They apply once there are identities; a zero field does not limit.
type Quotas struct {
	// QueuedRuns bounds a user's runs queued or running (-quota-queued-runs).
	QueuedRuns int
	// SweepPoints bounds the points of a user's sweeps that have not finished, the points not
	// yet fed to the queue included (-quota-sweep-points).
	SweepPoints int
	// UploadBytes bounds the size of the traces and calibration inputs a user has stored
	// (-quota-upload-bytes).
	UploadBytes int64
}

// quotaRetrySeconds is the Retry-After of a 429 that frees as runs finish: about when a short
// run ends.
const quotaRetrySeconds = 30

// quotaError is the 429 of a quota; retryAfter > 0 says when to try again (Retry-After).
func quotaError(quota, msg string, retryAfter int) *Error {
	return &Error{Status: http.StatusTooManyRequests, Title: "Quota reached: " + quota, Message: msg, RetryAfter: retryAfter}
}

// storeQuota is the quota the store checks in the transaction that adds to what a user holds
// (store.WithQuota, set by identify): the checks below refuse early, before a body is parsed or
// an estimate computed, and the store's makes check and insert one (finding M2).
func (s *Server) storeQuota() store.Quota {
	q := s.cfg.Access.Quotas
	return store.Quota{QueuedRuns: q.QueuedRuns, SweepPoints: q.SweepPoints, UploadBytes: q.UploadBytes,
		PointsOf: func(axesJSON []byte) (int, error) {
			var axes []whatif.Axis
			if err := decodeNumbers(axesJSON, &axes); err != nil {
				return 0, err
			}
			return runs.AxesPoints(axes), nil
		}}
}

// quotaProblem is the 429 of a quota a request would pass: what the user holds, what the
// request adds, the flag, and how the quota frees.
func quotaProblem(q *store.QuotaError) *Error {
	switch q.Quota {
	case "queued runs":
		more := ""
		if q.Adding > 1 {
			more = fmt.Sprintf(" and this request would queue %d more", q.Adding)
		}
		return quotaError(q.Quota, fmt.Sprintf(
			"you have %d runs queued or running%s, and each user may have %d (-quota-queued-runs); the quota frees as soon as one of them finishes, so try again when one is done, or cancel one you no longer need",
			q.Used, more, q.Limit), quotaRetrySeconds)
	case "sweep points":
		if q.Adding > q.Limit {
			return quotaError(q.Quota, fmt.Sprintf("this sweep has %d points and each user may have %d in flight (-quota-sweep-points); sweep fewer values, or split the sweep and start the second part when the first is done", q.Adding, q.Limit), 0)
		}
		return quotaError(q.Quota, fmt.Sprintf(
			"your sweeps have %d points not yet finished, and with this sweep's %d you would have more than the %d each user may have in flight (-quota-sweep-points); the quota frees as their points finish: start this sweep when %d more are done, or cancel a sweep you no longer need",
			q.Used, q.Adding, q.Limit, q.Used+q.Adding-q.Limit), quotaRetrySeconds)
	default:
		return quotaError(q.Quota, fmt.Sprintf(
			"you have stored %s of traces and calibration inputs, and this %s upload would pass the %s each user may store (-quota-upload-bytes); uploads are kept, so the quota does not free by itself: reuse a trace you uploaded, or ask an admin to raise the quota",
			format.BinaryBytes(q.Used), format.BinaryBytes(q.Adding), format.BinaryBytes(q.Limit)), 0)
	}
}

// runQuota refuses a request that would queue need more runs when the user already has
// Quotas.QueuedRuns queued or running, with a 429 that names the quota and says when it frees.
// It refuses early; the store checks again in the transaction that queues the runs.
func (s *Server) runQuota(need int) func(http.Handler) http.Handler {
	limit := s.cfg.Access.Quotas.QueuedRuns
	return func(next http.Handler) http.Handler {
		if limit <= 0 {
			return next
		}
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			user := identityOf(r.Context()).user
			if user == "" {
				next.ServeHTTP(w, r)
				return
			}
			u, err := s.store.UsageOf(r.Context(), user)
			if err != nil {
				s.writeError(w, r, problemOf(err))
				return
			}
			if u.UnfinishedRuns+need > limit {
				s.writeError(w, r, quotaProblem(&store.QuotaError{Quota: "queued runs", Used: int64(u.UnfinishedRuns), Adding: int64(need), Limit: int64(limit)}))
				return
			}
			next.ServeHTTP(w, r)
		})
	}
}

// checkSweepQuota refuses a sweep of points more points when the user's sweeps not yet finished
// would then hold more than Quotas.SweepPoints (early; the store checks again in CreateSweep).
func (s *Server) checkSweepQuota(ctx context.Context, points int) error {
	limit, user := s.cfg.Access.Quotas.SweepPoints, identityOf(ctx).user
	if limit <= 0 || user == "" {
		return nil
	}
	if points > limit {
		return quotaProblem(&store.QuotaError{Quota: "sweep points", Adding: int64(points), Limit: int64(limit)})
	}
	u, err := s.store.UsageOf(ctx, user)
	if err != nil {
		return err
	}
	inFlight := 0
	for _, sw := range u.Sweeps {
		var axes []whatif.Axis
		if err := decodeNumbers(sw.AxesJSON, &axes); err != nil {
			return fmt.Errorf("sweep %s: stored axes: %w", sw.ID, err)
		}
		inFlight += max(runs.AxesPoints(axes)-sw.Finished, 0)
	}
	if inFlight+points > limit {
		return quotaProblem(&store.QuotaError{Quota: "sweep points", Used: int64(inFlight), Adding: int64(points), Limit: int64(limit)})
	}
	return nil
}

// checkUploadQuota refuses storing size more bytes of uploads when the user's stored traces and
// calibration inputs would then exceed Quotas.UploadBytes. It runs before a calibration is
// fitted, so a refused upload costs no fit; the store checks again as it stores the upload.
func (s *Server) checkUploadQuota(ctx context.Context, size int64) error {
	limit, user := s.cfg.Access.Quotas.UploadBytes, identityOf(ctx).user
	if limit <= 0 || user == "" {
		return nil
	}
	u, err := s.store.UsageOf(ctx, user)
	if err != nil {
		return err
	}
	if u.UploadBytes+size > limit {
		return quotaProblem(&store.QuotaError{Quota: "stored uploads", Used: u.UploadBytes, Adding: size, Limit: limit})
	}
	return nil
}

// uploadFramingBytes is the most a multipart upload's framing (boundaries, part headers, the
// name field) is taken to add to its file, when the quota is judged from Content-Length.
const uploadFramingBytes = 4 << 10

// uploadQuota is the quota gate of an upload route: it refuses an upload from its
// Content-Length alone, before its body is read (finding H1), when even the smallest file the
// body can hold (the length less framing bytes: uploadFramingBytes for a multipart form, 0 for
// a bare body) would pass the user's upload quota. An unknown length (-1) passes; the body is
// then checked once spooled, still before it is read into memory or parsed.
func (s *Server) uploadQuota(framing int64) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		if s.cfg.Access.Quotas.UploadBytes <= 0 {
			return next
		}
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if err := s.checkUploadQuotaAhead(r.Context(), r.ContentLength, framing); err != nil {
				s.writeError(w, r, err)
				return
			}
			next.ServeHTTP(w, r)
		})
	}
}

func (s *Server) checkUploadQuotaAhead(ctx context.Context, contentLength, framing int64) error {
	limit, user := s.cfg.Access.Quotas.UploadBytes, identityOf(ctx).user
	least := contentLength - framing
	if limit <= 0 || user == "" || least <= 0 {
		return nil
	}
	u, err := s.store.UsageOf(ctx, user)
	if err != nil {
		return err
	}
	if u.UploadBytes+least > limit {
		return quotaError("stored uploads", fmt.Sprintf(
			"you have stored %s of traces and calibration inputs, and this upload of %s (its Content-Length; it was not read) would pass the %s each user may store (-quota-upload-bytes); uploads are kept, so the quota does not free by itself: reuse a trace or calibration you uploaded (it need not be uploaded again), or ask an admin to raise the quota",
			format.BinaryBytes(u.UploadBytes), format.BinaryBytes(contentLength), format.BinaryBytes(limit)), 0)
	}
	return nil
}

// checkTraceQuota is checkUploadQuota for a trace, which costs nothing when it is stored already.
func (s *Server) checkTraceQuota(ctx context.Context, sha string, size int64) error {
	if s.cfg.Access.Quotas.UploadBytes <= 0 {
		return nil
	}
	if _, err := s.store.GetTraceInfo(ctx, sha); err == nil {
		return nil
	}
	return s.checkUploadQuota(ctx, size)
}
