package web

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/legacy"
	"github.com/go-chi/chi/v5"
	"github.com/scalein-planner/scalein/runs"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The OpenAPI document (openapi/openapi.yaml) cannot drift from the server: do, the helper the
// API tests send their requests through, validates every /api/v1 answer against it, and every
// request the server accepted (a test's deliberately bad requests are refused by the server and
// need not match).

// openAPI is the document loaded and validated once, with its router.
var openAPI = sync.OnceValues(func() (routers.Router, error) {
	data, err := openAPIJSON()
	if err != nil {
		return nil, err
	}
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromData(data)
	if err != nil {
		return nil, err
	}
	if err := doc.Validate(context.Background()); err != nil {
		return nil, err
	}
	return legacy.NewRouter(doc)
})

// checkAPIExchange validates a request to /api/v1 (body: its body as sent) and its answer
// against the document; it does nothing for other paths.
func checkAPIExchange(t *testing.T, req *http.Request, body []byte, rec *httptest.ResponseRecorder) {
	t.Helper()
	if !strings.HasPrefix(req.URL.Path, "/api/v1/") || req.Method == http.MethodHead || req.Method == http.MethodOptions {
		return
	}
	router, err := openAPI()
	require.NoError(t, err, "the OpenAPI document is valid OpenAPI 3")
	check := req.Clone(context.Background())
	check.Body = io.NopCloser(bytes.NewReader(body))
	check.ContentLength = int64(len(body))
	if check.Header.Get("Content-Type") == "" && len(body) > 0 {
		check.Header.Set("Content-Type", "application/json") // the server reads a body without one as JSON
	}
	route, params, err := router.FindRoute(check)
	if err != nil {
		// A path or method the API lacks is answered 404 or 405, and is in no document.
		if rec.Code != http.StatusNotFound && rec.Code != http.StatusMethodNotAllowed {
			t.Errorf("OpenAPI: %s %s answered %d but is not in the document: %v", req.Method, req.URL.Path, rec.Code, err)
		}
		return
	}
	opts := &openapi3filter.Options{AuthenticationFunc: openapi3filter.NoopAuthenticationFunc, IncludeResponseStatus: true, MultiError: true}
	// A calibration's body is JSON lines, which a JSON schema cannot describe: its media types
	// and parameters are checked, not its lines.
	opts.ExcludeRequestBody = route.Operation.OperationID == "createCalibration"
	in := &openapi3filter.RequestValidationInput{Request: check, PathParams: params, Route: route, Options: opts}
	if rec.Code < 300 {
		if err := openapi3filter.ValidateRequest(context.Background(), in); err != nil {
			t.Errorf("OpenAPI: the server accepted %s %s (%d), which the document refuses: %v", req.Method, req.URL.Path, rec.Code, clipBody(err.Error()))
		}
	}
	out := &openapi3filter.ResponseValidationInput{RequestValidationInput: in, Status: rec.Code, Header: rec.Header(), Options: opts}
	answer := rec.Body.Bytes()
	if rec.Header().Get("Content-Encoding") == "gzip" {
		zr, err := gzip.NewReader(bytes.NewReader(answer))
		require.NoError(t, err)
		answer, err = io.ReadAll(zr)
		require.NoError(t, err)
	}
	out.SetBodyBytes(answer)
	if err := openapi3filter.ValidateResponse(context.Background(), out); err != nil {
		t.Errorf("OpenAPI: the answer %d to %s %s does not match the document: %v\nbody: %s", rec.Code, req.Method, req.URL.Path, clipBody(err.Error()), clipBody(string(answer)))
	}
}

// TestOpenAPIDocument: the document is OpenAPI 3, served as JSON at /api/v1/openapi.json, and
// every route of the API group is in it with its method.
func TestOpenAPIDocument(t *testing.T) {
	router, err := openAPI()
	require.NoError(t, err)
	s := newFakeServer(t, runs.Config{}, false)
	rec := get(t, s, "/api/v1/openapi.json")
	require.Equal(t, http.StatusOK, rec.Code)
	var doc map[string]any
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &doc))
	assert.Equal(t, "3.0.3", doc["openapi"])

	root, ok := s.Handler().(chi.Routes)
	require.True(t, ok)
	var seen []string
	require.NoError(t, chi.Walk(root, func(method, pattern string, _ http.Handler, _ ...func(http.Handler) http.Handler) error {
		if !strings.HasPrefix(pattern, "/api/v1/") || method == http.MethodHead {
			return nil
		}
		seen = append(seen, method+" "+pattern)
		req := httptest.NewRequest(method, strings.ReplaceAll(strings.ReplaceAll(pattern, "{id}", "aaaaaaaaaaaaaaaa"), "{sha}", strings.Repeat("a", 64)), nil)
		_, _, err := router.FindRoute(req)
		assert.NoError(t, err, "%s %s is in the document", method, pattern)
		return nil
	}))
	assert.GreaterOrEqual(t, len(seen), 15, "the walk saw the API's routes: %v", seen)
	assert.True(t, slices.Contains(seen, "POST /api/v1/plans"), seen)
}

// TestOpenAPICatchesDrift: an answer that does not match the document is reported.
func TestOpenAPICatchesDrift(t *testing.T) {
	router, err := openAPI()
	require.NoError(t, err)
	req := httptest.NewRequest(http.MethodGet, "/api/v1/runs", nil)
	route, params, err := router.FindRoute(req)
	require.NoError(t, err)
	opts := &openapi3filter.Options{AuthenticationFunc: openapi3filter.NoopAuthenticationFunc, IncludeResponseStatus: true}
	out := &openapi3filter.ResponseValidationInput{RequestValidationInput: &openapi3filter.RequestValidationInput{Request: req, PathParams: params, Route: route, Options: opts},
		Status: http.StatusOK, Header: http.Header{"Content-Type": {"application/json"}}, Options: opts}
	out.SetBodyBytes([]byte(`{"runs": [{"id": "x"}], "total": 1, "page": 1, "per_page": 20}`))
	assert.Error(t, openapi3filter.ValidateResponse(context.Background(), out), "a run without its status is not the documented shape")
	out.SetBodyBytes([]byte(`{"runs": [], "total": 0, "page": 1, "per_page": 20}`))
	assert.NoError(t, openapi3filter.ValidateResponse(context.Background(), out))

	// A request the document refuses, accepted by a server, is reported too.
	post := httptest.NewRequest(http.MethodPost, "/api/v1/pairs", strings.NewReader(`{"kind": "sideways", "scenario": {}}`))
	post.Header.Set("Content-Type", "application/json")
	route, params, err = router.FindRoute(post)
	require.NoError(t, err)
	assert.Error(t, openapi3filter.ValidateRequest(context.Background(), &openapi3filter.RequestValidationInput{Request: post, PathParams: params, Route: route, Options: opts}))
}
