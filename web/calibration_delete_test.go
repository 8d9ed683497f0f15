package web

import (
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/scalein-planner/scalein/runs"
)

func shaOf(body string) string {
	sum := sha256.Sum256([]byte(body))
	return hex.EncodeToString(sum[:])
}

// Issue 19 M7 on a server without identities (the one user is the admin): DELETE frees the
// stored-inputs cap, the permalink then answers 404, and so does a second delete; the page's
// button posts the same delete and lands on the Calibrate page.
func TestAdminDeletesCalibrationAndFreesTheCap(t *testing.T) {
	body, other := fpmLines(60), fpmLines(61)
	s := newFakeServer(t, runs.Config{}, false)
	s.cfg.MaxCalibrationBytes = int64(len(other)) + 10
	require.Equal(t, http.StatusCreated, postFPMBody(t, s, "", "", body).Code)
	require.Equal(t, http.StatusCreated, postFPMBody(t, s, "?skip=1", "", body).Code)
	require.Equal(t, http.StatusInsufficientStorage, postFPMBody(t, s, "", "", other).Code, "the cap is full")

	sha := shaOf(body)
	page := get(t, s, "/calibrations/"+sha)
	require.Equal(t, http.StatusOK, page.Code)
	assert.Contains(t, page.Body.String(), `action="/calibrations/`+sha+`/delete"`)

	rec := do(t, s.Handler(), httptest.NewRequest(http.MethodDelete, "/api/v1/calibrations/"+sha, nil))
	require.Equal(t, http.StatusNoContent, rec.Code, rec.Body.String())
	assert.Equal(t, http.StatusNotFound, get(t, s, "/calibrations/"+sha).Code)
	assert.Equal(t, http.StatusNotFound, get(t, s, "/calibrations/"+sha+"?skip=1").Code, "every fit of the input goes")
	rec = do(t, s.Handler(), httptest.NewRequest(http.MethodDelete, "/api/v1/calibrations/"+sha, nil))
	assert.Equal(t, http.StatusNotFound, rec.Code)
	assert.Contains(t, rec.Body.String(), "no calibration has this SHA-256")
	rec = do(t, s.Handler(), httptest.NewRequest(http.MethodDelete, "/api/v1/calibrations/nothex", nil))
	assert.Equal(t, http.StatusNotFound, rec.Code)

	require.Equal(t, http.StatusCreated, postFPMBody(t, s, "", "", other).Code, "the cap is freed")
	rec = postForm(t, s, "/calibrations/"+shaOf(other)+"/delete", nil)
	require.Equal(t, http.StatusSeeOther, rec.Code, rec.Body.String())
	assert.Equal(t, "/calibrations", rec.Header().Get("Location"))
	assert.Equal(t, http.StatusNotFound, get(t, s, "/calibrations/"+shaOf(other)).Code)
}

// With identities only admins delete (403 and no button for others), and the delete frees the
// uploader's quota.
func TestOnlyAdminsDeleteCalibrations(t *testing.T) {
	body, other := fpmLines(60), fpmLines(61)
	access := withUsers(Access{})
	access.Quotas.UploadBytes = int64(len(other)) + 10
	s := newAccessServer(t, runs.Config{}, access, 0)
	upload := func(user, content string) int {
		req := httptest.NewRequest(http.MethodPost, "/api/v1/calibrations", strings.NewReader(content))
		return as(t, s, user, req).Code
	}
	require.Equal(t, http.StatusCreated, upload("alice", body))
	require.Equal(t, http.StatusTooManyRequests, upload("alice", other), "alice's upload quota is used")

	sha := shaOf(body)
	page := as(t, s, "alice", httptest.NewRequest(http.MethodGet, "/calibrations/"+sha, nil))
	require.Equal(t, http.StatusOK, page.Code)
	assert.NotContains(t, page.Body.String(), "/delete", "no button for a non-admin")
	rec := as(t, s, "alice", httptest.NewRequest(http.MethodDelete, "/api/v1/calibrations/"+sha, nil))
	assert.Equal(t, http.StatusForbidden, rec.Code, rec.Body.String())
	rec = as(t, s, "alice", httptest.NewRequest(http.MethodPost, "/calibrations/"+sha+"/delete", nil))
	assert.Equal(t, http.StatusForbidden, rec.Code)
	assert.Equal(t, http.StatusOK, as(t, s, "alice", httptest.NewRequest(http.MethodGet, "/calibrations/"+sha, nil)).Code, "still stored")

	page = as(t, s, "root", httptest.NewRequest(http.MethodGet, "/calibrations/"+sha, nil))
	assert.Contains(t, page.Body.String(), `action="/calibrations/`+sha+`/delete"`)
	rec = as(t, s, "root", httptest.NewRequest(http.MethodDelete, "/api/v1/calibrations/"+sha, nil))
	require.Equal(t, http.StatusNoContent, rec.Code, rec.Body.String())
	assert.Equal(t, http.StatusCreated, upload("alice", other), "alice's quota is freed")
}
