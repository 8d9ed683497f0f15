package web

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/scalein-planner/scalein/runs"
	"github.com/stretchr/testify/require"
)

// The smaller findings of issue 7, one test each.

func TestHeadOfARunPageAnswersLikeGet(t *testing.T) {
	s := newFakeServer(t, runs.Config{}, false)
	id := submitAPI(t, s, testScenario("head"))
	require.Equal(t, http.StatusOK, get(t, s, "/runs/"+id).Code)
	rec := do(t, s.Handler(), httptest.NewRequest(http.MethodHead, "/runs/"+id, nil))
	require.Equal(t, http.StatusOK, rec.Code)
}

func TestMethodNotAllowedNamesTheAllowedMethods(t *testing.T) {
	s := newFakeServer(t, runs.Config{}, false)
	id := submitAPI(t, s, testScenario("methods"))
	for _, c := range []struct{ method, path, allow string }{
		{http.MethodOptions, "/runs/" + id, "GET, HEAD"},
		{http.MethodDelete, "/runs/" + id, "GET, HEAD"},
		{http.MethodDelete, "/", "GET, HEAD, POST"},
		{http.MethodOptions, "/api/v1/runs", "GET, HEAD, POST"},
		{http.MethodDelete, "/api/v1/runs/" + id, "GET, HEAD"},
	} {
		rec := do(t, s.Handler(), httptest.NewRequest(c.method, c.path, nil))
		require.Equal(t, http.StatusMethodNotAllowed, rec.Code, "%s %s", c.method, c.path)
		require.Equal(t, c.allow, rec.Header().Get("Allow"), "%s %s", c.method, c.path)
		if strings.HasPrefix(c.path, "/api/") {
			require.Contains(t, rec.Header().Get("Content-Type"), "application/json", "%s %s", c.method, c.path)
			require.Contains(t, rec.Body.String(), `"error"`)
		}
	}
}

func TestPairsReadTheirBodyAsStrictlyAsRuns(t *testing.T) {
	s := newFakeServer(t, runs.Config{}, false)
	sc := testScenario("pair strict")
	for name, body := range map[string]string{
		"duplicate key":                  `{"kind": "hints", "kind": "guard", "scenario": ` + sc + `}`,
		"other-case key":                 `{"Kind": "hints", "scenario": ` + sc + `}`,
		"trailing text":                  `{"kind": "hints", "scenario": ` + sc + `} trailing`,
		"two documents":                  `{"kind": "hints", "scenario": ` + sc + `} {"kind": "guard"}`,
		"duplicate key in the scenario":  `{"kind": "hints", "scenario": ` + strings.Replace(sc, `"name":`, `"seed": 1, "seed": 2, "name":`, 1) + `}`,
		"other-case key in the scenario": `{"kind": "hints", "scenario": ` + strings.Replace(sc, `"name":`, `"Name":`, 1) + `}`,
		"no scenario":                    `{"kind": "hints"}`,
	} {
		rec := postJSON(t, s, "/api/v1/pairs", body)
		require.Equal(t, http.StatusBadRequest, rec.Code, "%s: %s", name, rec.Body.String())
	}
	body := `{"kind": "hints", "scenario": ` + sc + `}`
	require.Equal(t, http.StatusAccepted, postJSON(t, s, "/api/v1/pairs", body).Code)
	// The same pair again: both runs exist, as /api/v1/runs answers 200 for an existing run.
	rec := postJSON(t, s, "/api/v1/pairs", body)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	require.Equal(t, http.StatusOK, postJSON(t, s, "/api/v1/runs", sc).Code)
}

func TestAPIRefusesBodiesThatAreNotJSON(t *testing.T) {
	s := newFakeServer(t, runs.Config{}, false)
	for _, ct := range []string{"text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x"} {
		for _, path := range []string{"/api/v1/runs", "/api/v1/pairs"} {
			req := httptest.NewRequest(http.MethodPost, path, strings.NewReader(testScenario("ct")))
			req.Header.Set("Content-Type", ct)
			rec := do(t, s.Handler(), req)
			require.Equal(t, http.StatusUnsupportedMediaType, rec.Code, "%s as %s", path, ct)
			require.Contains(t, rec.Body.String(), "application/json")
		}
	}
	req := httptest.NewRequest(http.MethodPost, "/api/v1/runs", strings.NewReader(testScenario("ct ok")))
	req.Header.Set("Content-Type", "application/json; charset=utf-8")
	require.Equal(t, http.StatusAccepted, do(t, s.Handler(), req).Code)
}

func TestTraceNamesAreCutAtACharacterBoundary(t *testing.T) {
	long := strings.Repeat("a", 199) + "é" + "tail" // é straddles byte 200
	got := traceName(long)
	require.True(t, utf8.ValidString(got), "%q", got)
	require.Equal(t, strings.Repeat("a", 199), got)
	require.Equal(t, "a b", traceName("a\x00b"), "a NUL becomes a space")
	require.Equal(t, strings.Repeat("é", 100), traceName(strings.Repeat("é", 150)))
}

func TestANulInARunNameIsRefusedNotWrittenToThePage(t *testing.T) {
	s := newFakeServer(t, runs.Config{}, false)
	body := strings.Replace(testScenario("x"), `"name": "x"`, `"name": "bad\u0000name"`, 1)
	rec := postJSON(t, s, "/api/v1/runs", body)
	require.Equal(t, http.StatusBadRequest, rec.Code, rec.Body.String())
	require.Contains(t, rec.Body.String(), "control characters")
	require.NotContains(t, rec.Body.String(), "\x00")
}
