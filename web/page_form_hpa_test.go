package web

import (
	"bytes"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/scalein-planner/scalein/runs"
	"github.com/scalein-planner/scalein/store"
	"github.com/scalein-planner/scalein/web/form"
)

// formFields reads every named control of the scenario form as a browser would submit it.
func formFields(doc *goquery.Document) map[string]string {
	out := map[string]string{}
	byTestID(doc, "scenario-form").Find("input[name], textarea[name], select[name]").Each(func(_ int, s *goquery.Selection) {
		name, _ := s.Attr("name")
		switch goquery.NodeName(s) {
		case "textarea":
			out[name] = s.Text()
		case "select":
			opt := s.Find("option[selected]")
			if opt.Length() == 0 {
				opt = s.Find("option").First()
			}
			out[name], _ = opt.Attr("value")
		default:
			if t, _ := s.Attr("type"); t == "file" {
				return
			}
			out[name], _ = s.Attr("value")
		}
	})
	return out
}

// postFormMultipart posts the scenario form multipart to /, with an optional hpa_file.
func postFormMultipart(t *testing.T, s *Server, fields map[string]string, file string) *httptest.ResponseRecorder {
	t.Helper()
	var b bytes.Buffer
	mw := multipart.NewWriter(&b)
	for k, v := range fields {
		require.NoError(t, mw.WriteField(k, v))
	}
	if file != "" {
		part, err := mw.CreateFormFile("hpa_file", "hpa.yaml")
		require.NoError(t, err)
		_, err = part.Write([]byte(file))
		require.NoError(t, err)
	}
	require.NoError(t, mw.Close())
	req := httptest.NewRequest(http.MethodPost, "/", &b)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	return do(t, s.Handler(), req)
}

// The scenario form imports an HPA manifest, pasted or uploaded, into its autoscaler's fields:
// the autoscaler is chosen, the fields are the manifest's, the schedule is emptied, and what the
// model cannot represent is named. A missing or unusable manifest and a form with problems come
// back with their message, nothing imported.
func TestScenarioFormImportsHPA(t *testing.T) {
	s := newFakeServer(t, runs.Config{}, false)
	rec := get(t, s, "/?preset=incident")
	require.Equal(t, http.StatusOK, rec.Code)
	fields := formFields(parseHTML(t, rec.Body))
	require.Equal(t, form.ModeSchedule, fields[form.ScaleInModePath], "the incident preset has a schedule")
	fields["action"] = "import_hpa"

	for name, in := range map[string]struct{ paste, file string }{
		"pasted": {cpuHPA, ""}, "uploaded": {"", cpuHPA},
	} {
		t.Run(name, func(t *testing.T) {
			fields["hpa_manifest"] = in.paste
			rec := postFormMultipart(t, s, fields, in.file)
			require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
			doc := parseHTML(t, rec.Body)
			got := formFields(doc)
			assert.Equal(t, form.ModeAutoscaler, got[form.ScaleInModePath])
			assert.Equal(t, "8", got["autoscaler.target"])
			assert.Equal(t, "2", got["autoscaler.min_workers"])
			assert.Equal(t, "4", got["autoscaler.max_workers"])
			assert.Equal(t, form.BehaviorSet, got[form.BehaviorModePath], "the manifest's behavior")
			assert.Equal(t, "120000", got["autoscaler.behavior.scale_down.window_ms"])
			assert.Equal(t, "pods", got["autoscaler.behavior.scale_down.policies[0].type"])
			assert.Equal(t, "1", got["autoscaler.behavior.scale_down.policies[0].value"])
			assert.Equal(t, fields["fleet.workers"], got["fleet.workers"], "the rest of the form is kept")
			notice := byTestID(doc, "form-notice").Text()
			assert.Contains(t, notice, "Filled from the HPA manifest: ")
			assert.Contains(t, notice, "Target", "the form's label, not the field's path")
			assert.NotContains(t, notice, "autoscaler.target")
			assert.Contains(t, notice, "The scale-in schedule was removed")
			assert.Contains(t, byTestID(doc, "form-hpa-problems").Text(), "spec.metrics[0]: a Resource (cpu) metric")

			// The notes stay through another form action (Fill with a day) until dismissed.
			again := url.Values{}
			byTestID(doc, "scenario-form").Find("input[name], textarea[name], select[name]").Each(func(_ int, sel *goquery.Selection) {
				if typ, _ := sel.Attr("type"); typ == "file" || typ == "submit" {
					return
				}
				name, _ := sel.Attr("name")
				v, _ := sel.Attr("value")
				switch goquery.NodeName(sel) {
				case "textarea":
					v = sel.Text()
				case "select":
					v, _ = sel.Find("option[selected]").Attr("value")
				}
				again.Add(name, v)
			})
			again.Set("action", "fill_day")
			next := parseHTML(t, postForm(t, s, "/", again).Body)
			assert.Contains(t, byTestID(next, "form-hpa-note").Text(), "Filled from the HPA manifest: ")
			assert.Contains(t, byTestID(next, "form-hpa-problems").Text(), "spec.metrics[0]: a Resource (cpu) metric")
			again.Set("action", "dismiss_hpa_notes")
			gone := parseHTML(t, postForm(t, s, "/", again).Body)
			assert.Equal(t, 0, byTestID(gone, "form-hpa-notes").Length(), "dismissed")
		})
	}

	// Nothing to import.
	fields["hpa_manifest"] = "  "
	rec = postFormMultipart(t, s, fields, "")
	require.Equal(t, http.StatusBadRequest, rec.Code)
	doc := parseHTML(t, rec.Body)
	assert.Contains(t, byTestID(doc, "form-notice").Text(), "HPA manifest: paste an HPA manifest")
	assert.Equal(t, form.ModeSchedule, formFields(doc)[form.ScaleInModePath], "the form is kept as it was")

	// A manifest without a usable metric: its reason, the pasted text kept.
	onlyCPU := cpuHPA[:bytes.Index([]byte(cpuHPA), []byte("  - type: Pods"))]
	fields["hpa_manifest"] = onlyCPU
	rec = postFormMultipart(t, s, fields, "")
	require.Equal(t, http.StatusBadRequest, rec.Code)
	doc = parseHTML(t, rec.Body)
	assert.Contains(t, byTestID(doc, "form-notice").Text(), "spec.metrics: no Pods or External metric")
	assert.Contains(t, byTestID(doc, "form-hpa-manifest").Text(), "averageUtilization: 70")

	// A form with a problem is not imported: the problem is shown at its field.
	fields["hpa_manifest"] = cpuHPA
	fields["fleet.gpu_blocks"] = "lots"
	rec = postFormMultipart(t, s, fields, "")
	require.Equal(t, http.StatusUnprocessableEntity, rec.Code)
	doc = parseHTML(t, rec.Body)
	assert.Contains(t, byTestID(doc, "form-notice").Text(), "fix the form's problems first")
	assert.NotEmpty(t, byTestID(doc, "error-fleet.gpu_blocks").Text())
}

// The import's origin travels with the scenario: the form keeps a key to it, the run made from
// the form is opened with it, the run page's "Plan a scale-in" passes it on, and the plan form
// carries the user's file in its hidden origin field.
func TestImportOriginTravelsFormRunPlan(t *testing.T) {
	s := newFakeServer(t, runs.Config{Workers: 1}, true)
	rec := get(t, s, "/?preset=incident")
	require.Equal(t, http.StatusOK, rec.Code)
	fields := formFields(parseHTML(t, rec.Body))
	fields["action"] = "import_hpa"
	fields["hpa_manifest"] = cpuHPA
	rec = postFormMultipart(t, s, fields, "")
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	got := formFields(parseHTML(t, rec.Body))
	key := got["origin_key"]
	require.Len(t, key, 64, "the form keeps the import's key")

	values := url.Values{}
	for k, v := range got {
		if k != "action" {
			values.Set(k, v)
		}
	}
	rec = postForm(t, s, "/runs", values)
	require.Equal(t, http.StatusSeeOther, rec.Code, rec.Body.String())
	loc := rec.Header().Get("Location")
	assert.Contains(t, loc, "?origin="+key)

	waitStatus(t, s, strings.TrimPrefix(strings.Split(loc, "?")[0], "/runs/"), store.StatusDone)
	run := parseHTML(t, get(t, s, loc).Body)
	href, _ := byTestID(run, "plan-this").Attr("href")
	assert.Contains(t, href, "&origin="+key)

	plan := parseHTML(t, get(t, s, href).Body)
	origin, ok := byTestID(plan, "plan-origin").Attr("value")
	require.True(t, ok, "the plan form carries the origin")
	assert.Contains(t, origin, `"manifest":`)
	assert.Contains(t, origin, "vllm_num_requests_running_and_waiting")

	// Without the key (a run opened from the list) the plan form has no origin.
	plain := parseHTML(t, get(t, s, strings.Split(href, "&")[0]).Body)
	assert.Equal(t, 0, byTestID(plain, "plan-origin").Length())
}

// A refused import is shown whole (not clipped like an echoed value) and styled as an error.
func TestScenarioFormImportRefusalWholeAndError(t *testing.T) {
	s := newFakeServer(t, runs.Config{}, false)
	fields := formFields(parseHTML(t, get(t, s, "/?preset=incident").Body))
	fields["action"] = "import_hpa"
	onlyCPU := cpuHPA[:strings.Index(cpuHPA, "  - type: Pods")]
	var docs []string
	for _, name := range []string{"first", "second", "third", "fourth"} {
		docs = append(docs, strings.Replace(onlyCPU, "name: vllm\n", "name: cpu-"+name+"-"+strings.Repeat("x", 40)+"\n", 1))
	}
	fields["hpa_manifest"] = strings.Join(docs, "---\n")
	rec := postFormMultipart(t, s, fields, "")
	require.Equal(t, http.StatusBadRequest, rec.Code)
	doc := parseHTML(t, rec.Body)
	notice := byTestID(doc, "form-notice")
	assert.True(t, notice.HasClass("error"), "styled as an error")
	role, _ := notice.Attr("role")
	assert.Equal(t, "alert", role)
	text := notice.Text()
	assert.Greater(t, len(text), 600, "long enough to have been clipped")
	assert.Contains(t, text, "cpu-fourth-", "the whole message, to its last autoscaler")
	assert.NotContains(t, text, "more bytes")
}
