package web

import (
	"context"
	"errors"
	"net/http"

	"github.com/go-chi/chi/v5"

	"github.com/scalein-planner/scalein/store"
)

// Admins delete a stored calibration input and every fit of it (issue 19 M7): DELETE
// /api/v1/calibrations/{sha} answers 204, and the calibration page's Delete button posts to
// /calibrations/{sha}/delete and lands on the Calibrate page. The routes sit behind
// requireAdmin (on a server without identities, the one user is the admin, as for cancels).
// The bytes freed count again towards the stored-inputs cap (-max-calibration-bytes) and the
// uploader's quota (-quota-upload-bytes). Runs whose timing came from the calibration keep it:
// a scenario holds the numbers, not a reference.

// deleteCalibration removes the calibrations of the URL's sha256, or answers 404.
func (s *Server) deleteCalibration(ctx context.Context, r *http.Request) error {
	sha := chi.URLParam(r, "sha")
	if !sha256Pattern(sha) {
		return notFound("no calibration has this id; a calibration is named by the 64 hex digits of its input's SHA-256")
	}
	_, err := s.store.DeleteCalibrations(ctx, sha)
	if errors.Is(err, store.ErrNotFound) {
		return notFound("no calibration has this SHA-256; it may have been deleted already (the Calibrate page lists the stored ones)")
	}
	return err
}

// apiDeleteCalibration is DELETE /api/v1/calibrations/{sha}: 204, or 404 for an unknown sha256.
func (s *Server) apiDeleteCalibration(w http.ResponseWriter, r *http.Request) error {
	if err := s.deleteCalibration(r.Context(), r); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// handleDeleteCalibration is POST /calibrations/{sha}/delete, the calibration page's button:
// 303 to the Calibrate page.
func (s *Server) handleDeleteCalibration(w http.ResponseWriter, r *http.Request) error {
	if err := s.deleteCalibration(r.Context(), r); err != nil {
		return err
	}
	http.Redirect(w, r, "/calibrations", http.StatusSeeOther)
	return nil
}

// mayDeleteCalibrations is whether the request's user sees the Delete button.
func (s *Server) mayDeleteCalibrations(ctx context.Context) bool {
	return !s.identities() || identityOf(ctx).admin
}
