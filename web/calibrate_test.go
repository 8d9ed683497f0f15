package web

import (
	"bytes"
	"encoding/json"
	"fmt"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/scalein-planner/scalein/store"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/scalein-planner/scalein/runs"
	"github.com/scalein-planner/scalein/sim/calibrate"
)

// fpmLines builds passes of every class with known timing (prefill 2 + 65/1k, decode 8 +
// 0.05/seq + 0.03/1k KV), exact to the nanosecond.
func fpmLines(n int) string {
	var b strings.Builder
	for i := range n {
		var p calibrate.Pass
		switch i % 3 {
		case 0:
			p.PrefillRequests, p.PrefillTokens = 1, int64(100+37*i)
		case 1:
			p.DecodeRequests, p.DecodeKVTokens = int64(1+i%50), int64(1000+900*i)
		default:
			p.PrefillRequests, p.PrefillTokens = 1, int64(64+11*i)
			p.DecodeRequests, p.DecodeKVTokens = int64(1+i%20), int64(500+300*i)
		}
		ms := 0.0
		if p.PrefillTokens > 0 {
			ms += 2 + 65*float64(p.PrefillTokens)/1000
		}
		if p.DecodeRequests > 0 {
			ms += 8 + 0.05*float64(p.DecodeRequests) + 0.03*float64(p.DecodeKVTokens)/1000
		}
		fmt.Fprintf(&b, `{"worker_id":"w","wall_time":%v,"scheduled_requests":{"num_prefill_requests":%d,"sum_prefill_tokens":%d,"num_decode_requests":%d,"sum_decode_kv_tokens":%d}}`+"\n",
			ms/1000, p.PrefillRequests, p.PrefillTokens, p.DecodeRequests, p.DecodeKVTokens)
	}
	return b.String()
}

func postFPM(t *testing.T, s *Server, content string, fields map[string]string) *httptest.ResponseRecorder {
	t.Helper()
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	part, err := mw.CreateFormFile("file", "fpm.jsonl")
	require.NoError(t, err)
	_, _ = part.Write([]byte(content))
	for k, v := range fields {
		require.NoError(t, mw.WriteField(k, v))
	}
	require.NoError(t, mw.Close())
	req := httptest.NewRequest(http.MethodPost, "/calibrations", &body)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	return do(t, s.Handler(), req)
}

func TestCalibrationUploadPermalinkAndUse(t *testing.T) {
	s := newFakeServer(t, runs.Config{}, false)
	rec := postFPM(t, s, fpmLines(120), map[string]string{"worker": "w", "skip": "2", "name": "h200 run"})
	require.Equal(t, http.StatusSeeOther, rec.Code, rec.Body.String())
	loc := rec.Header().Get("Location")
	require.Regexp(t, `^/calibrations/[0-9a-f]{64}\?skip=2&worker=w$`, loc)

	rec = get(t, s, loc)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	doc := parseHTML(t, rec.Body)
	assert.Equal(t, "2", byTestID(doc, "coef-prefill_ms").Text())
	assert.Equal(t, "65", byTestID(doc, "coef-prefill_ms_per_1k_tokens").Text())
	assert.Equal(t, "8", byTestID(doc, "coef-decode_ms").Text())
	assert.Equal(t, "0.05", byTestID(doc, "coef-decode_ms_per_seq").Text())
	assert.Equal(t, "0.03", byTestID(doc, "coef-decode_ms_per_1k_kv_tokens").Text())
	assert.Equal(t, "118", byTestID(doc, "calibration-passes").Text())
	assert.Equal(t, 3, byTestID(doc, "calibration-classes").Find("tbody tr").Length())
	opt := byTestID(doc, "chart-calibration-fit").Find("[data-echarts-option]").AttrOr("data-echarts-option", "")
	require.NotEmpty(t, opt)
	var option map[string]any
	require.NoError(t, json.Unmarshal([]byte(opt), &option))
	assert.Len(t, option["series"], 4, "three pass classes and the measured = predicted line")

	use := byTestID(doc, "use-timing").AttrOr("href", "")
	rec = get(t, s, use)
	require.Equal(t, http.StatusOK, rec.Code)
	form := parseHTML(t, rec.Body)
	assert.Equal(t, "0.03", byTestID(form, "field-fleet.timing.decode_ms_per_1k_kv_tokens").AttrOr("value", ""))
	assert.Equal(t, "65", byTestID(form, "field-fleet.timing.prefill_ms_per_1k_tokens").AttrOr("value", ""))

	// Listed.
	doc = parseHTML(t, get(t, s, "/calibrations").Body)
	assert.Contains(t, byTestID(doc, "calibrations-table").Text(), "h200 run")

	// The JSON document.
	rec = get(t, s, strings.Replace(loc, "/calibrations/", "/api/v1/calibrations/", 1))
	require.Equal(t, http.StatusOK, rec.Code)
	var res calibrate.Result
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &res))
	assert.InDelta(t, 0.03, res.Timing.DecodeMSPer1kKVTokens, 1e-9)
	assert.Equal(t, 118, res.Passes)
}

func TestCalibrationUploadBadLinesIs422(t *testing.T) {
	s := newFakeServer(t, runs.Config{}, false)
	rec := postFPM(t, s, fpmLines(3)+"oops\n"+`{"wall_time": -1}`+"\n", nil)
	require.Equal(t, http.StatusUnprocessableEntity, rec.Code)
	doc := parseHTML(t, rec.Body)
	lines := byTestID(doc, "calibrate-bad-lines").Find("li")
	require.Equal(t, 2, lines.Length())
	assert.Contains(t, lines.Eq(0).Text(), "line 4: ")
	assert.Contains(t, lines.Eq(1).Text(), "line 5: ")
	assert.Equal(t, 1, byTestID(doc, "calibrations-empty").Length(), "nothing stored")

	rec = postFPM(t, s, fpmLines(3), map[string]string{"skip": "-1"})
	assert.Equal(t, http.StatusUnprocessableEntity, rec.Code)
	assert.Equal(t, http.StatusNotFound, get(t, s, "/calibrations/"+strings.Repeat("a", 64)).Code)
	assert.Equal(t, http.StatusNotFound, get(t, s, "/calibrations/nothex").Code)
	assert.Equal(t, http.StatusNotFound, get(t, s, "/?calibration="+strings.Repeat("a", 64)).Code)
}

func TestAPICalibrations(t *testing.T) {
	s := newFakeServer(t, runs.Config{}, false)
	body := fpmLines(60)
	rec := postJSON(t, s, "/api/v1/calibrations?worker=w", body)
	require.Equal(t, http.StatusCreated, rec.Code, rec.Body.String())
	assert.Regexp(t, `^/calibrations/[0-9a-f]{64}\?worker=w$`, rec.Header().Get("Location"))
	var doc map[string]any
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &doc))
	for _, k := range []string{"timing", "passes", "classes", "warnings"} {
		assert.Contains(t, doc, k)
	}
	assert.Len(t, doc, 4, "exactly the documented members")
	rec = postJSON(t, s, "/api/v1/calibrations?worker=w", body)
	assert.Equal(t, http.StatusOK, rec.Code, "stored once")

	rec = postJSON(t, s, "/api/v1/calibrations", "not json\n"+body+"{}\n")
	require.Equal(t, http.StatusUnprocessableEntity, rec.Code)
	var bad struct {
		Error string                `json:"error"`
		Lines []calibrate.LineError `json:"lines"`
	}
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &bad))
	require.Len(t, bad.Lines, 2)
	assert.Equal(t, 1, bad.Lines[0].Line)
	assert.Equal(t, 62, bad.Lines[1].Line)
	assert.Contains(t, bad.Error, "2 bad line(s)")

	rec = postJSON(t, s, "/api/v1/calibrations?worker=nobody", body)
	require.Equal(t, http.StatusUnprocessableEntity, rec.Code)
	assert.Contains(t, rec.Body.String(), "no pass to fit")
}

// A run's passes come back as FPM lines that calibrate to the run's timing.
func TestRunPassesJSONL(t *testing.T) {
	s := newFakeServer(t, runs.Config{}, true)
	id := submitAPI(t, s, `{"name": "passes", "fleet": {"workers": 2, "gpu_blocks": 2048, "host_blocks": 0, "block_size": 16,
		"max_num_seqs": 16, "max_batched_tokens": 512,
		"timing": {"prefill_ms": 1.5, "prefill_ms_per_1k_tokens": 40, "decode_ms": 5, "decode_ms_per_seq": 0.2, "decode_ms_per_1k_kv_tokens": 0.8}},
		"kvcr": {"enabled": false},
		"workload": {"type": "sessions", "sessions": {"count": 30, "turns": 3, "rate_per_s": 40,
			"system_prompt_tokens": 700, "new_input_tokens": 300, "output_tokens": 40, "think_time_ms": 300}}}`)
	waitStatus(t, s, id, store.StatusDone) // a run that is not done has no passes yet (409)
	rec := get(t, s, "/runs/"+id+"/passes.jsonl?worker=1")
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	assert.Equal(t, "false", rec.Header().Get("X-Passes-Truncated"))
	read, err := calibrate.Parse(rec.Body, calibrate.Options{Worker: "1"})
	require.NoError(t, err)
	res := calibrate.Fit(read)
	assert.InDelta(t, 0.8, res.Timing.DecodeMSPer1kKVTokens, 1e-6)
	assert.InDelta(t, 40, res.Timing.PrefillMSPer1kTokens, 1e-6)

	assert.Equal(t, http.StatusBadRequest, get(t, s, "/runs/"+id+"/passes.jsonl?worker=2").Code)
	assert.Equal(t, http.StatusBadRequest, get(t, s, "/runs/"+id+"/passes.jsonl").Code)
}
