package web

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"

	"github.com/klauspost/compress/gzip"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/scalein-planner/scalein/internal/runtest"
	"github.com/scalein-planner/scalein/runs"
	"github.com/scalein-planner/scalein/sim"
	"github.com/scalein-planner/scalein/store"
)

func requestReport(t *testing.T, s *Server, method, target, acceptEncoding string) *httptest.ResponseRecorder {
	t.Helper()
	req := httptest.NewRequest(method, target, nil)
	if acceptEncoding != "" {
		req.Header.Set("Accept-Encoding", acceptEncoding)
	}
	return do(t, s.Handler(), req)
}

// TestReportJSONStreamsTheStoredChunks: report.json is the stored report byte for byte, sent as
// the stored gzip stream to a client that accepts gzip (through the compress middleware, which
// must not compress it again) and gunzipped for one that does not, each with its Content-Length;
// HEAD sends the headers only. The API's run document carries the same report, and is the
// document writeJSON would have written.
func TestReportJSONStreamsTheStoredChunks(t *testing.T) {
	s := newFakeServer(t, runs.Config{}, true)
	ctx := context.Background()
	id := submitAPI(t, s, runtest.ManyRowsScenario(10000)) // 20,000 rows: a report of several chunks
	waitStatus(t, s, id, store.StatusDone)
	want, err := s.store.GetReportJSON(ctx, id)
	require.NoError(t, err)
	stored, err := s.store.OpenReport(ctx, id)
	require.NoError(t, err)
	require.Greater(t, stored.GzipBytes, int64(2*64<<10), "more than two chunks")
	t.Logf("report: %d bytes of JSON, %d gzipped", stored.JSONBytes, stored.GzipBytes)

	t.Run("Identity", func(t *testing.T) {
		for _, ae := range []string{"", "identity", "gzip;q=0", "br"} {
			rec := requestReport(t, s, http.MethodGet, "/runs/"+id+"/report.json", ae)
			require.Equal(t, http.StatusOK, rec.Code, ae)
			assert.Empty(t, rec.Header().Get("Content-Encoding"), ae)
			assert.Equal(t, strconv.Itoa(len(want)), rec.Header().Get("Content-Length"), ae)
			assert.True(t, bytes.Equal(want, rec.Body.Bytes()), "byte for byte (Accept-Encoding %q)", ae)
		}
	})
	t.Run("Gzip", func(t *testing.T) {
		before := s.store.ReportReads()
		rec := requestReport(t, s, http.MethodGet, "/runs/"+id+"/report.json", "gzip, deflate, br, zstd")
		require.Equal(t, http.StatusOK, rec.Code)
		assert.Equal(t, before+1, s.store.ReportReads())
		assert.Equal(t, "gzip", rec.Header().Get("Content-Encoding"))
		assert.Contains(t, rec.Header().Values("Vary"), "Accept-Encoding")
		assert.Equal(t, strconv.FormatInt(stored.GzipBytes, 10), rec.Header().Get("Content-Length"))
		assert.EqualValues(t, stored.GzipBytes, rec.Body.Len(), "the stored gzip stream, not compressed again")
		zr, err := gzip.NewReader(rec.Body)
		require.NoError(t, err)
		got, err := io.ReadAll(zr)
		require.NoError(t, err)
		assert.True(t, bytes.Equal(want, got))
		var rep sim.Report
		require.NoError(t, json.Unmarshal(got, &rep))
		assert.Len(t, rep.Requests, 20000)
	})
	t.Run("Head", func(t *testing.T) {
		rec := requestReport(t, s, http.MethodHead, "/runs/"+id+"/report.json", "gzip")
		require.Equal(t, http.StatusOK, rec.Code)
		assert.Equal(t, strconv.FormatInt(stored.GzipBytes, 10), rec.Header().Get("Content-Length"))
		assert.Zero(t, rec.Body.Len())
	})
	t.Run("APIRunDocument", func(t *testing.T) {
		for _, ae := range []string{"", "gzip"} {
			rec := requestReport(t, s, http.MethodGet, "/api/v1/runs/"+id, ae)
			require.Equal(t, http.StatusOK, rec.Code)
			body := rec.Body.Bytes()
			if ae == "gzip" {
				require.Equal(t, "gzip", rec.Header().Get("Content-Encoding"), "the middleware compresses the document")
				zr, err := gzip.NewReader(rec.Body)
				require.NoError(t, err)
				body, err = io.ReadAll(zr)
				require.NoError(t, err)
			}
			var doc apiRun
			require.NoError(t, json.Unmarshal(body, &doc))
			assert.True(t, bytes.Equal(want, doc.Report), "the report, byte for byte")
			assert.Equal(t, store.StatusDone, doc.Status)
			// The same bytes as writeJSON with the report in the struct.
			same := httptest.NewRecorder()
			writeJSON(same, http.StatusOK, doc)
			assert.Equal(t, same.Body.String(), string(body))
		}
	})
}

// TestReportStoredBeforeChunksStillServes: a run whose report an earlier version stored whole
// (runs.report_json) serves the same report.json, API document and trace.json; the first read
// moves it into chunks.
func TestReportStoredBeforeChunksStillServes(t *testing.T) {
	s := newFakeServer(t, runs.Config{}, true)
	ctx := context.Background()
	id := submitAPI(t, s, runtest.PerRequestScenario("old report", 500))
	waitStatus(t, s, id, store.StatusDone)
	want, err := s.store.GetReportJSON(ctx, id)
	require.NoError(t, err)
	traceBefore := get(t, s, "/runs/"+id+"/trace.json")
	require.Equal(t, http.StatusOK, traceBefore.Code)

	_, err = s.store.DB().ExecContext(ctx, `DELETE FROM run_report_chunks WHERE run_id = ?`, id)
	require.NoError(t, err)
	_, err = s.store.DB().ExecContext(ctx, `UPDATE runs SET report_json = ?, report_bytes = NULL, report_gzip_bytes = NULL, report_chunks = NULL WHERE id = ?`, want, id)
	require.NoError(t, err)

	rec := get(t, s, "/runs/"+id+"/report.json")
	require.Equal(t, http.StatusOK, rec.Code)
	assert.True(t, bytes.Equal(want, rec.Body.Bytes()))
	var inRuns []byte
	require.NoError(t, s.store.DB().QueryRowContext(ctx, `SELECT report_json FROM runs WHERE id = ?`, id).Scan(&inRuns))
	assert.Nil(t, inRuns, "moved into chunks on its first read")

	rec = requestReport(t, s, http.MethodGet, "/runs/"+id+"/report.json", "gzip")
	require.Equal(t, http.StatusOK, rec.Code)
	assert.Equal(t, "gzip", rec.Header().Get("Content-Encoding"))
	zr, err := gzip.NewReader(rec.Body)
	require.NoError(t, err)
	got, err := io.ReadAll(zr)
	require.NoError(t, err)
	assert.True(t, bytes.Equal(want, got))

	trace := get(t, s, "/runs/"+id+"/trace.json")
	require.Equal(t, http.StatusOK, trace.Code)
	assert.Equal(t, traceBefore.Body.String(), trace.Body.String())
}

// TestReportJSONCutShortWhenAChunkIsMissing: a report that cannot be read to its end is not sent
// as if complete: the connection is cut, and the client sees an error, not a short "200".
func TestReportJSONCutShortWhenAChunkIsMissing(t *testing.T) {
	s := newFakeServer(t, runs.Config{}, true)
	ctx := context.Background()
	id := submitAPI(t, s, runtest.ManyRowsScenario(10000))
	waitStatus(t, s, id, store.StatusDone)
	_, err := s.store.DB().ExecContext(ctx, `DELETE FROM run_report_chunks WHERE run_id = ? AND seq = 1`, id)
	require.NoError(t, err)

	srv := httptest.NewServer(s.Handler())
	defer srv.Close()
	for _, ae := range []string{"gzip", "identity"} {
		req, err := http.NewRequest(http.MethodGet, srv.URL+"/runs/"+id+"/report.json", nil)
		require.NoError(t, err)
		req.Header.Set("Accept-Encoding", ae)
		resp, err := srv.Client().Transport.RoundTrip(req)
		require.NoError(t, err)
		_, err = io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		assert.Error(t, err, "Accept-Encoding %s: the body ends early", ae)
	}
}
