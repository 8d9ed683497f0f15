package web

import (
	"bufio"
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"
	"github.com/scalein-planner/scalein/runs"
	"github.com/scalein-planner/scalein/store"
	"github.com/scalein-planner/scalein/web/form"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestHealthz(t *testing.T) {
	s := newFakeServer(t, runs.Config{}, false)
	rec := get(t, s, "/healthz")
	assert.Equal(t, http.StatusOK, rec.Code)
	assert.Equal(t, "ok\n", rec.Body.String())
}

func TestFormShowsDefaultsUnitsAndTimingNote(t *testing.T) {
	s := newFakeServer(t, runs.Config{}, false)
	rec := get(t, s, "/")
	require.Equal(t, http.StatusOK, rec.Code)
	doc := parseHTML(t, rec.Body)
	assert.Equal(t, "4096", byTestID(doc, "field-fleet.gpu_blocks").AttrOr("value", ""))
	assert.Contains(t, doc.Find(`label[for="fleet.gpu_blocks"]`).Text(), "blocks")
	assert.Contains(t, doc.Text(), "not measurements")
	assert.Equal(t, 1, doc.Find("[data-schedule-rows] [data-schedule-row]").Length())
	assert.Equal(t, 1, byTestID(doc, "run-pair-hints").Length())
	assert.Equal(t, 1, byTestID(doc, "run-pair-guard").Length())
	assert.Equal(t, 1, byTestID(doc, "recent-empty").Length())
}

func TestFormPresetsPrefill(t *testing.T) {
	s := newFakeServer(t, runs.Config{}, false)
	rec := get(t, s, "/?preset=mooncake-16to12")
	require.Equal(t, http.StatusOK, rec.Code)
	doc := parseHTML(t, rec.Body)
	assert.Equal(t, "trace", doc.Find(`select[name="workload.type"] option[selected]`).AttrOr("value", ""))
	assert.NotEmpty(t, byTestID(doc, "field-scale_in[0].at_ms").AttrOr("value", ""), "the preset's scale-in lands in row 0")

	assert.Equal(t, http.StatusNotFound, get(t, s, "/?preset=no-such-preset").Code)
}

func TestCreateRunBadFormIs422WithMessagesBesideFields(t *testing.T) {
	s := newFakeServer(t, runs.Config{}, false)
	form := url.Values{
		"name":                         {"typed name"},
		"fleet.gpu_blocks":             {"lots"},
		"fleet.workers":                {"0"},
		"workload.type":                {"sessions"},
		"scale_in[0].at_ms":            {"10"},
		"scale_in[0].workers":          {"1, x"},
		"workload.sessions.count":      {"5"},
		"kvcr.enabled":                 {"true"},
		"kvcr.reject_draining_sources": {"true"},
	}
	rec := postForm(t, s, "/runs", form)
	require.Equal(t, http.StatusUnprocessableEntity, rec.Code)
	doc := parseHTML(t, rec.Body)
	assert.Contains(t, byTestID(doc, "error-fleet.gpu_blocks").Text(), "must be a number")
	assert.Contains(t, byTestID(doc, "error-scale_in[0].workers").Text(), "worker ids")
	assert.Equal(t, "lots", byTestID(doc, "field-fleet.gpu_blocks").AttrOr("value", ""), "typed values are kept")
	assert.Equal(t, "typed name", byTestID(doc, "field-name").AttrOr("value", ""))
	assert.Equal(t, "1, x", byTestID(doc, "field-scale_in[0].workers").AttrOr("value", ""))
	assert.Equal(t, 1, byTestID(doc, "form-errors").Length())
	// sim.Parse's messages land beside their fields in the same pass as the unparsable ones.
	assert.NotEmpty(t, strings.TrimSpace(byTestID(doc, "error-fleet.workers").Text()), "workers 0 is out of range")
}

func TestCreateRunRawJSONWinsAndReportsPaths(t *testing.T) {
	s := newFakeServer(t, runs.Config{}, false)
	rec := postForm(t, s, "/runs", url.Values{form.RawJSONField: {`{"fleet": {"gpu_blocks": 0}, "bogus": 1}`}})
	require.Equal(t, http.StatusUnprocessableEntity, rec.Code)
	doc := parseHTML(t, rec.Body)
	list := byTestID(doc, "form-errors-list").Text()
	assert.Contains(t, list, "fleet.gpu_blocks")
	assert.Contains(t, list, "bogus")
	assert.NotEmpty(t, byTestID(doc, "error-"+form.RawJSONField).Text())
}

func TestCreateRunRedirectsAndIdenticalScenarioSameID(t *testing.T) {
	s := newFakeServer(t, runs.Config{}, false)
	values := url.Values{form.RawJSONField: {testScenario("same")}}
	first := postForm(t, s, "/runs", values)
	require.Equal(t, http.StatusSeeOther, first.Code, first.Body.String())
	loc := first.Header().Get("Location")
	assert.Regexp(t, `^/runs/[a-z2-7]{16}$`, loc)
	second := postForm(t, s, "/runs", values)
	require.Equal(t, http.StatusSeeOther, second.Code)
	assert.Equal(t, loc, second.Header().Get("Location"))

	other := postForm(t, s, "/runs", url.Values{form.RawJSONField: {testScenario("other")}})
	assert.NotEqual(t, loc, other.Header().Get("Location"))
}

func TestDefaultFormRunsEndToEnd(t *testing.T) {
	s := newFakeServer(t, runs.Config{}, true)
	// Take the fresh form's values as a browser would submit them, with a small workload.
	doc := parseHTML(t, get(t, s, "/").Body)
	form := url.Values{}
	doc.Find(`form[data-testid="scenario-form"] input, form[data-testid="scenario-form"] textarea`).Each(func(_ int, sel *goquery.Selection) {
		if name, ok := sel.Attr("name"); ok {
			if sel.Is("textarea") {
				form.Set(name, sel.Text())
			} else {
				form.Set(name, sel.AttrOr("value", ""))
			}
		}
	})
	doc.Find(`form[data-testid="scenario-form"] select`).Each(func(_ int, sel *goquery.Selection) {
		form.Set(sel.AttrOr("name", ""), sel.Find("option[selected]").AttrOr("value", ""))
	})
	form.Set("workload.sessions.count", "4")
	form.Set("workload.sessions.turns", "2")
	form.Set("scale_in[0].at_ms", "100")
	form.Set("scale_in[0].count", "2")
	rec := postForm(t, s, "/runs", form)
	require.Equal(t, http.StatusSeeOther, rec.Code, rec.Body.String())
	id := strings.TrimPrefix(rec.Header().Get("Location"), "/runs/")
	waitStatus(t, s, id, store.StatusDone)

	page := parseHTML(t, get(t, s, "/runs/"+id).Body)
	assert.Equal(t, 1, byTestID(page, "figure-latest_removal_ms").Length())
	assert.Contains(t, byTestID(page, "figure-ttft_p99_ms").Text(), "ms")
	assert.Equal(t, 2, byTestID(page, "workers-table").Find("tbody tr").Length(), "the two drained workers")
	assert.Equal(t, "/?from="+id, byTestID(page, "edit-as-new").AttrOr("href", ""))

	// Edit as new gives the same values back: submitting them unchanged is the same scenario.
	again := parseHTML(t, get(t, s, "/?from="+id).Body)
	assert.Equal(t, "2", byTestID(again, "field-scale_in[0].count").AttrOr("value", ""))
	assert.Equal(t, "4", byTestID(again, "field-workload.sessions.count").AttrOr("value", ""))
}

func TestAddRowWithoutJavaScript(t *testing.T) {
	s := newFakeServer(t, runs.Config{}, false)
	rec := postForm(t, s, "/", url.Values{"scale_in_rows": {"3"}, "scale_in[0].at_ms": {"5"}, "action": {"add_row"}, "workload.type": {"sessions"}})
	require.Equal(t, http.StatusOK, rec.Code)
	doc := parseHTML(t, rec.Body)
	assert.Equal(t, 4, doc.Find("[data-schedule-rows] [data-schedule-row]").Length())
	assert.Equal(t, "5", byTestID(doc, "field-scale_in[0].at_ms").AttrOr("value", ""))

	rec = postForm(t, s, "/", url.Values{"scale_in_rows": {"4"}, "scale_in[0].at_ms": {"5"}, "scale_in[1].at_ms": {"7"}, "action": {"remove_row:0"}})
	doc = parseHTML(t, rec.Body)
	assert.Equal(t, "7", byTestID(doc, "field-scale_in[0].at_ms").AttrOr("value", ""), "row 1 moved up")
}

func TestAPICreateRun(t *testing.T) {
	s := newFakeServer(t, runs.Config{}, true)

	rec := postJSON(t, s, "/api/v1/runs", `{"fleet": {"gpu_blocks": 0, "workers": "two"}, "nope": true}`)
	require.Equal(t, http.StatusBadRequest, rec.Code)
	var bad apiError
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &bad))
	paths := map[string]bool{}
	for _, f := range bad.Fields {
		paths[f.Path] = true
		assert.NotEmpty(t, f.Message)
	}
	assert.True(t, paths["fleet.gpu_blocks"], "fields: %+v", bad.Fields)
	assert.True(t, paths["fleet.workers"], "fields: %+v", bad.Fields)
	assert.NotEmpty(t, bad.Error)

	rec = postJSON(t, s, "/api/v1/runs", testScenario("api"))
	require.Equal(t, http.StatusAccepted, rec.Code, rec.Body.String())
	var created apiCreated
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &created))
	assert.Equal(t, "/runs/"+created.ID, created.URL)
	waitStatus(t, s, created.ID, store.StatusDone)

	rec = postJSON(t, s, "/api/v1/runs", testScenario("api"))
	assert.Equal(t, http.StatusOK, rec.Code, "an identical scenario returns the existing run")

	rec = get(t, s, "/api/v1/runs/"+created.ID)
	require.Equal(t, http.StatusOK, rec.Code)
	var got apiRun
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &got))
	assert.Equal(t, "done", got.Status)
	var report struct {
		ScenarioID string `json:"scenario_id"`
	}
	require.NoError(t, json.Unmarshal(got.Report, &report))
	assert.Equal(t, created.ID, report.ScenarioID)

	rec = get(t, s, "/api/v1/runs")
	require.Equal(t, http.StatusOK, rec.Code)
	assert.Contains(t, rec.Body.String(), created.ID)
}

func TestUnknownAndMalformedRunIDsAre404(t *testing.T) {
	s := newFakeServer(t, runs.Config{}, false)
	for _, target := range []string{"/runs/aaaaaaaaaaaaaaaa", "/runs/NOT-AN-ID", "/runs/aaaaaaaaaaaaaaaa/report.json",
		"/runs/aaaaaaaaaaaaaaaa/events", "/compare?a=aaaaaaaaaaaaaaaa&b=bbbbbbbbbbbbbbbb", "/nowhere"} {
		rec := get(t, s, target)
		assert.Equal(t, http.StatusNotFound, rec.Code, target)
		doc := parseHTML(t, rec.Body)
		assert.Equal(t, 1, byTestID(doc, "error-page").Length(), "designed page for %s", target)
	}
	for _, target := range []string{"/api/v1/runs/aaaaaaaaaaaaaaaa", "/api/v1/runs/x"} {
		rec := get(t, s, target)
		assert.Equal(t, http.StatusNotFound, rec.Code, target)
		assert.Equal(t, "application/json", rec.Header().Get("Content-Type"))
		assert.Contains(t, rec.Body.String(), `"error"`)
	}
}

func TestOversizeUploadIs413(t *testing.T) {
	s := newFakeServer(t, runs.Config{}, false)
	pr, pw := io.Pipe()
	mw := multipart.NewWriter(pw)
	go func() {
		part, _ := mw.CreateFormFile("file", "big.jsonl")
		chunk := bytes.Repeat([]byte("x"), 1<<20)
		for range 70 {
			if _, err := part.Write(chunk); err != nil {
				break
			}
		}
		_ = mw.Close()
		_ = pw.Close()
	}()
	req := httptest.NewRequest(http.MethodPost, "/traces", pr)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	rec := do(t, s.Handler(), req)
	_ = pr.Close()
	assert.Equal(t, http.StatusRequestEntityTooLarge, rec.Code)
	assert.Contains(t, rec.Body.String(), "64 MiB")
}

func TestTraceUploadStoredOnceAndValidated(t *testing.T) {
	s := newFakeServer(t, runs.Config{}, false)
	upload := func(content string) *httptest.ResponseRecorder {
		var body bytes.Buffer
		mw := multipart.NewWriter(&body)
		part, _ := mw.CreateFormFile("file", "mine.jsonl")
		_, _ = part.Write([]byte(content))
		_ = mw.WriteField("name", "my trace")
		_ = mw.Close()
		req := httptest.NewRequest(http.MethodPost, "/traces", &body)
		req.Header.Set("Content-Type", mw.FormDataContentType())
		return do(t, s.Handler(), req)
	}
	good := `{"timestamp": 0, "input_length": 600, "output_length": 10, "hash_ids": [1, 2]}` + "\n" +
		`{"timestamp": 5, "input_length": 100, "output_length": 3, "hash_ids": [1]}` + "\n"
	rec := upload(good)
	require.Equal(t, http.StatusSeeOther, rec.Code, rec.Body.String())
	assert.Equal(t, "/traces?stored=new", rec.Header().Get("Location"))
	rec = upload(good)
	assert.Equal(t, "/traces?stored=existing", rec.Header().Get("Location"))

	doc := parseHTML(t, get(t, s, "/traces").Body)
	assert.Equal(t, 1, byTestID(doc, "traces-table").Find("tbody tr").Length())

	rec = upload(`{"timestamp": 0, "input_length": -1}`)
	assert.Equal(t, http.StatusUnprocessableEntity, rec.Code)
	doc = parseHTML(t, rec.Body)
	assert.Contains(t, byTestID(doc, "traces-error").Text(), "line 1")
}

// A full queue is a 429 over the API and the error page on the form; what the queue counts
// (waiting runs, not running ones) is the service's (runs' TestQueueBoundCountsWaitingRuns).
func TestFullQueueIs429(t *testing.T) {
	s := newFakeServer(t, runs.Config{QueueSize: 1}, false) // nothing works the queue: one run fills it
	submitAPI(t, s, testScenario("one"))
	rec := postJSON(t, s, "/api/v1/runs", testScenario("three"))
	assert.Equal(t, http.StatusTooManyRequests, rec.Code)
	assert.Contains(t, rec.Body.String(), "queue is full")

	rec = postForm(t, s, "/runs", url.Values{form.RawJSONField: {testScenario("four")}})
	assert.Equal(t, http.StatusTooManyRequests, rec.Code)
	assert.Equal(t, 1, byTestID(parseHTML(t, rec.Body), "error-page").Length())

	// An identical scenario is not new work: it is answered even when the queue is full.
	rec = postJSON(t, s, "/api/v1/runs", testScenario("one"))
	assert.Equal(t, http.StatusOK, rec.Code)
}

func TestCrossOriginPostRefused(t *testing.T) {
	s := newFakeServer(t, runs.Config{}, false)
	req := httptest.NewRequest(http.MethodPost, "/runs", strings.NewReader("name=x"))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Sec-Fetch-Site", "cross-site")
	assert.Equal(t, http.StatusForbidden, do(t, s.Handler(), req).Code)

	req = httptest.NewRequest(http.MethodPost, "/api/v1/runs", strings.NewReader(testScenario("x")))
	req.Header.Set("Origin", "https://evil.example")
	req.Host = "planner.example"
	assert.Equal(t, http.StatusForbidden, do(t, s.Handler(), req).Code)
}

func TestCSPNonceMatchesScripts(t *testing.T) {
	s := newFakeServer(t, runs.Config{}, false)
	rec := get(t, s, "/")
	csp := rec.Header().Get("Content-Security-Policy")
	m := regexp.MustCompile(`script-src 'self' 'nonce-([A-Za-z0-9_-]+)'`).FindStringSubmatch(csp)
	require.NotNil(t, m, csp)
	assert.Contains(t, csp, "object-src 'none'")
	assert.Contains(t, csp, "frame-ancestors 'none'")
	doc := parseHTML(t, rec.Body)
	scripts := doc.Find("script")
	require.Positive(t, scripts.Length())
	scripts.Each(func(_ int, sel *goquery.Selection) {
		assert.Equal(t, m[1], sel.AttrOr("nonce", ""))
		assert.NotEmpty(t, sel.AttrOr("src", ""), "no inline scripts")
	})
	assert.Zero(t, doc.Find("[onclick], [onload], [onchange], [onsubmit], style").Length())
	assert.Equal(t, "nosniff", rec.Header().Get("X-Content-Type-Options"))
	assert.Equal(t, "DENY", rec.Header().Get("X-Frame-Options"))

	other := get(t, s, "/").Header().Get("Content-Security-Policy")
	assert.NotEqual(t, csp, other, "a fresh nonce per request")
}

func TestStaticAssetsAreCacheBusted(t *testing.T) {
	s := newFakeServer(t, runs.Config{}, false)
	u := s.assets.url("css/app.css")
	require.Regexp(t, `^/static/css/app\.css\?v=[0-9a-f]{12}$`, u)
	rec := get(t, s, u)
	assert.Equal(t, http.StatusOK, rec.Code)
	assert.Contains(t, rec.Header().Get("Cache-Control"), "immutable")
	assert.Contains(t, rec.Header().Get("Content-Type"), "text/css")
	assert.Equal(t, http.StatusNotFound, get(t, s, "/static/embed.go").Code)
}

// The cancel button's post redirects to the run, whose page then says cancelled and why, and
// the same scenario submitted again is new work. Stopping a running run is the service's (runs'
// TestCancelRunningAndQueuedRuns).
func TestCancelRunningAndQueuedRuns(t *testing.T) {
	s := newFakeServer(t, runs.Config{}, false) // nothing works the queue: the run stays queued
	queued := submitAPI(t, s, testScenario("queued"))

	rec := postForm(t, s, "/runs/"+queued+"/cancel", nil)
	require.Equal(t, http.StatusSeeOther, rec.Code)
	assert.Equal(t, "/runs/"+queued, rec.Header().Get("Location"))
	run := waitStatus(t, s, queued, store.StatusCancelled)
	assert.Contains(t, run.Error, "cancelled")

	doc := parseHTML(t, get(t, s, "/runs/"+queued).Body)
	assert.Equal(t, "cancelled", byTestID(doc, "status").Text())
	assert.Equal(t, 1, byTestID(doc, "run-error").Length())

	// Resubmitting a cancelled scenario runs it again.
	rec = postJSON(t, s, "/api/v1/runs", testScenario("queued"))
	assert.Equal(t, http.StatusAccepted, rec.Code)
}

func TestEventsStreamEndsWithDone(t *testing.T) {
	fake := newBlockingRun()
	s := newTestServer(t, runs.Config{Workers: 1, Simulate: fake.Run}, false)
	require.NoError(t, s.startRuns(context.Background()))
	ts := httptest.NewServer(s.Handler())
	defer ts.Close()

	id := submitAPI(t, s, testScenario("streamed"))
	fake.WaitStarted(t)
	resp, err := http.Get(ts.URL + "/runs/" + id + "/events")
	require.NoError(t, err)
	defer resp.Body.Close()
	assert.Equal(t, "text/event-stream", resp.Header.Get("Content-Type"))

	var events []string
	sc := bufio.NewScanner(resp.Body)
	released := false
	for sc.Scan() {
		line := sc.Text()
		if name, ok := strings.CutPrefix(line, "event: "); ok {
			events = append(events, name)
			if name == "progress" && !released {
				released = true
				close(fake.Release)
			}
		}
	}
	require.NotEmpty(t, events)
	assert.Equal(t, "progress", events[0])
	assert.Equal(t, "done", events[len(events)-1])

	// A finished run's stream is just its final event.
	resp2, err := http.Get(ts.URL + "/runs/" + id + "/events")
	require.NoError(t, err)
	body, _ := io.ReadAll(resp2.Body)
	resp2.Body.Close()
	assert.True(t, strings.HasPrefix(string(body), "event: done\n"), string(body))
}

func TestDownloadsAndWorkersCSV(t *testing.T) {
	s := newFakeServer(t, runs.Config{}, true)
	id := submitAPI(t, s, testScenario("downloads"))
	waitStatus(t, s, id, store.StatusDone)

	rep := get(t, s, "/runs/"+id+"/report.json")
	require.Equal(t, http.StatusOK, rep.Code)
	stored, err := s.store.GetReportJSON(context.Background(), id)
	require.NoError(t, err)
	assert.Equal(t, stored, rep.Body.Bytes(), "served as stored")

	sc := get(t, s, "/runs/"+id+"/scenario.json")
	require.Equal(t, http.StatusOK, sc.Code)
	assert.Contains(t, sc.Body.String(), `"downloads"`)

	rec := get(t, s, "/runs/"+id+"/workers.csv")
	require.Equal(t, http.StatusOK, rec.Code)
	rows, err := csv.NewReader(rec.Body).ReadAll()
	require.NoError(t, err)
	require.Len(t, rows, 3, "header + 2 workers")
	assert.Equal(t, workersCSVHeader, rows[0])
	assert.Equal(t, "1", rows[2][0])
	assert.Equal(t, "1", rows[2][2], "worker 1 marked at 1 ms")
	assert.Equal(t, "", rows[1][2], "worker 0 never marked")
}

func TestPairAndCompare(t *testing.T) {
	s := newFakeServer(t, runs.Config{}, true)
	rec := postForm(t, s, "/pairs", url.Values{"kind": {"hints"}, form.RawJSONField: {testScenario("pair")}})
	require.Equal(t, http.StatusSeeOther, rec.Code, rec.Body.String())
	loc, err := url.Parse(rec.Header().Get("Location"))
	require.NoError(t, err)
	assert.Equal(t, "/compare", loc.Path)
	a, b := loc.Query().Get("a"), loc.Query().Get("b")
	require.NotEqual(t, a, b)
	waitStatus(t, s, a, store.StatusDone)
	waitStatus(t, s, b, store.StatusDone)

	doc := parseHTML(t, get(t, s, loc.String()).Body)
	assert.Contains(t, byTestID(doc, "compare-a").Text(), "hinted")
	assert.Contains(t, byTestID(doc, "compare-b").Text(), "no hints")
	assert.Equal(t, 1, byTestID(doc, "diff-router.hints").Length())
	assert.Zero(t, byTestID(doc, "more-than-toggle").Length(), "only the toggle differs")
	assert.Equal(t, 1, byTestID(doc, "cmp-figure-latest_removal_ms").Length())

	// A hint pair that differs in more than the toggle gets the warning.
	bRun, err := s.store.GetRun(context.Background(), b)
	require.NoError(t, err)
	var sc map[string]any
	require.NoError(t, json.Unmarshal(bRun.ScenarioJSON, &sc))
	sc["fleet"].(map[string]any)["workers"] = 3
	mixed, err := json.Marshal(sc)
	require.NoError(t, err)
	other := submitAPI(t, s, string(mixed))
	waitStatus(t, s, other, store.StatusDone)
	doc = parseHTML(t, get(t, s, "/compare?a="+a+"&b="+other).Body)
	assert.Equal(t, 1, byTestID(doc, "more-than-toggle").Length())

	// Two what-ifs that differ in one field are named by it, without the toggle warning.
	doc = parseHTML(t, get(t, s, "/compare?a="+b+"&b="+other).Body)
	assert.Zero(t, byTestID(doc, "more-than-toggle").Length(), "no toggle involved")
	assert.Equal(t, "fleet.workers 2", byTestID(doc, "label-a").Text())
	assert.Equal(t, "fleet.workers 3", byTestID(doc, "label-b").Text())
	assert.Contains(t, byTestID(doc, "compare-differs").Text(), "fleet.workers 2 / 3")
	assert.Equal(t, strings.TrimSpace(byTestID(doc, "name-a").Text())+" vs "+strings.TrimSpace(byTestID(doc, "name-b").Text()),
		strings.Join(strings.Fields(byTestID(doc, "compare-title").Text()), " "), "titled by the runs' names")
	assert.NotZero(t, byTestID(doc, "verdict").Length())

	assert.Equal(t, http.StatusBadRequest, postForm(t, s, "/pairs", url.Values{"kind": {"sideways"}}).Code)
}

func TestCompareWaitsForUnfinishedRuns(t *testing.T) {
	s := newFakeServer(t, runs.Config{}, false)
	a := submitAPI(t, s, testScenario("wait-a"))
	b := submitAPI(t, s, testScenario("wait-b"))
	rec := get(t, s, "/compare?a="+a+"&b="+b)
	require.Equal(t, http.StatusOK, rec.Code)
	// A parser with scripting on (like goquery's) reads <noscript> as text: check the markup.
	assert.Contains(t, rec.Body.String(), `<noscript><meta http-equiv="refresh" content="2"></noscript>`)
	doc := parseHTML(t, rec.Body)
	assert.Equal(t, 1, byTestID(doc, "compare-waiting").Length())
	assert.Equal(t, 1, byTestID(doc, "progress-"+a).Length())
}

func TestRunsListPaginatesAndHasEmptyState(t *testing.T) {
	s := newFakeServer(t, runs.Config{}, false)
	doc := parseHTML(t, get(t, s, "/runs").Body)
	assert.Equal(t, 1, byTestID(doc, "runs-empty").Length())

	for i := range runsPerPage + 1 {
		submitAPI(t, s, testScenario("list-"+string(rune('a'+i))))
	}
	doc = parseHTML(t, get(t, s, "/runs").Body)
	assert.Equal(t, runsPerPage, byTestID(doc, "runs-table").Find("tbody tr").Length())
	assert.Equal(t, "/runs?page=2", byTestID(doc, "next-page").AttrOr("href", ""))
	doc = parseHTML(t, get(t, s, "/runs?page=2").Body)
	assert.Equal(t, 1, byTestID(doc, "runs-table").Find("tbody tr").Length())
	assert.Equal(t, http.StatusNotFound, get(t, s, "/runs?page=9").Code)
}

func TestRunPageWhileQueuedHasProgressAndRefresh(t *testing.T) {
	s := newFakeServer(t, runs.Config{}, false)
	id := submitAPI(t, s, testScenario("queued-page"))
	doc := parseHTML(t, get(t, s, "/runs/"+id).Body)
	assert.Equal(t, "queued", byTestID(doc, "status").Text())
	assert.Equal(t, 1, doc.Find("progress").Length())
	assert.Equal(t, "/runs/"+id+"/events", byTestID(doc, "progress-"+id).AttrOr("data-run-events", ""))
	assert.Equal(t, 1, byTestID(doc, "cancel").Length())
	assert.Equal(t, http.StatusConflict, get(t, s, "/runs/"+id+"/report.json").Code)
}

func TestRunCreationIsRateLimitedPerClient(t *testing.T) {
	s := newLimitedServer(t, runs.Config{}, 2, false)
	for i := range 2 {
		rec := postJSON(t, s, "/api/v1/runs", testScenario("limited-"+string(rune('a'+i))))
		require.Equal(t, http.StatusAccepted, rec.Code)
	}
	rec := postJSON(t, s, "/api/v1/runs", testScenario("limited-c"))
	assert.Equal(t, http.StatusTooManyRequests, rec.Code)
	assert.Contains(t, rec.Body.String(), "wait a minute")
	// Reading is never limited.
	assert.Equal(t, http.StatusOK, get(t, s, "/api/v1/runs").Code)
}

// HEAD requests answer like GET (net/http drops the body).
func TestHeadAnswersLikeGet(t *testing.T) {
	s := newFakeServer(t, runs.Config{}, false)
	for _, path := range []string{"/", "/runs", "/healthz", "/traces"} {
		rec := do(t, s.Handler(), httptest.NewRequest(http.MethodHead, path, nil))
		require.Equal(t, http.StatusOK, rec.Code, path)
	}
}
