package web

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/scalein-planner/scalein/runs"
)

// Finding L2: two user (or groups) headers are refused, whichever comes first.
func TestTwoIdentityHeadersRefused(t *testing.T) {
	s := newAccessServer(t, runs.Config{}, withUsers(Access{}), 0)
	req := httptest.NewRequest(http.MethodGet, "/admin/queue", nil)
	req.Header.Add("X-Forwarded-User", "root")
	req.Header.Add("X-Forwarded-User", "mallory")
	rec := do(t, s.Handler(), req)
	assert.Equal(t, http.StatusBadRequest, rec.Code)
	assert.Contains(t, rec.Body.String(), "must replace that header")

	req = httptest.NewRequest(http.MethodGet, "/admin/queue", nil)
	req.Header.Set("X-Forwarded-User", "mallory")
	req.Header.Add("X-Forwarded-Groups", "ops")
	req.Header.Add("X-Forwarded-Groups", "users")
	assert.Equal(t, http.StatusBadRequest, do(t, s.Handler(), req).Code)

	req = httptest.NewRequest(http.MethodGet, "/admin/queue", nil)
	req.Header.Set("X-Forwarded-User", "mallory")
	req.Header.Set("X-Forwarded-Groups", "ops")
	assert.Equal(t, http.StatusOK, do(t, s.Handler(), req).Code, "one groups header naming ops is an admin")
}

// Finding L3: user names with format characters are refused like control characters.
func TestUserNamesWithFormatCharactersRefused(t *testing.T) {
	s := newAccessServer(t, runs.Config{}, withUsers(Access{}), 0)
	for _, name := range []string{"root\u200b", "bob\u202eevil", "\u2066alice", "zw\u200dj", "soft\u00adhyphen", "bom\ufeff"} {
		rec := as(t, s, name, httptest.NewRequest(http.MethodGet, "/runs", nil))
		assert.Equal(t, http.StatusBadRequest, rec.Code, "%q", name)
		assert.Contains(t, rec.Body.String(), "format character", "%q", name)
	}
	assert.Equal(t, http.StatusOK, as(t, s, "José Ñandú", httptest.NewRequest(http.MethodGet, "/runs", nil)).Code)
}
