package web

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/scalein-planner/scalein/runs"
	"github.com/scalein-planner/scalein/web/form"
)

// A stream with several autoscalers: the form reads the first the model can use, offers the
// others in a choice (the one read selected) and re-imports the manifest with the one chosen;
// a choice made for another manifest is not applied to a new one.
func TestScenarioFormChoosesAmongAutoscalers(t *testing.T) {
	s := newFakeServer(t, runs.Config{}, false)
	keda, err := os.ReadFile("../sim/hpa/testdata/edit/commented-keda.yaml")
	require.NoError(t, err)
	stream := cpuHPA + "---\n" + string(keda)

	fields := formFields(parseHTML(t, get(t, s, "/").Body))
	fields["action"] = "import_hpa"
	fields["hpa_manifest"] = strings.ReplaceAll(stream, "\n", "\r\n") // as a browser sends a textarea
	rec := postFormMultipart(t, s, fields, "")
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	doc := parseHTML(t, rec.Body)
	got := formFields(doc)
	assert.Equal(t, form.ModeAutoscaler, got[form.ScaleInModePath])
	assert.Equal(t, "8", got["autoscaler.target"], "the HPA, first in the stream, is read")
	assert.Equal(t, "4", got["autoscaler.max_workers"])
	sel := byTestID(doc, "form-hpa-select")
	require.Equal(t, 1, sel.Length(), "several autoscalers: a choice")
	opts := sel.Find("option")
	require.Equal(t, 2, opts.Length())
	assert.Equal(t, `HorizontalPodAutoscaler "vllm"`, opts.Eq(0).Text())
	assert.Equal(t, `ScaledObject "qwen-decode"`, opts.Eq(1).Text())
	assert.Equal(t, "vllm", got["hpa_select"], "the one read is preselected")
	assert.Equal(t, stream, byTestID(doc, "form-hpa-manifest").Text(), "the manifest stays, to re-import")
	originHPA := got["origin_key"]
	require.NotEmpty(t, originHPA)
	stored, err := s.store.GetOrigin(context.Background(), originHPA)
	require.NoError(t, err)
	var origin struct{ Manifest string }
	require.NoError(t, json.Unmarshal(stored, &origin))
	assert.Equal(t, stream, origin.Manifest, "the pasted file with its LF line breaks, for the download")

	// Choose the ScaledObject: re-imported with it.
	got["hpa_select"] = "qwen-decode"
	got["action"] = "import_hpa"
	rec = postFormMultipart(t, s, got, "")
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	doc = parseHTML(t, rec.Body)
	again := formFields(doc)
	assert.Equal(t, "6", again["autoscaler.target"], "the ScaledObject's threshold")
	assert.Equal(t, "2", again["autoscaler.min_workers"])
	assert.Equal(t, "12", again["autoscaler.max_workers"])
	assert.Equal(t, "qwen-decode", again["hpa_select"], "the one chosen is selected")
	assert.NotEqual(t, originHPA, again["origin_key"], "the origin is the ScaledObject's")
	assert.Contains(t, byTestID(doc, "form-hpa-problems").Text(), `not read, "qwen-decode" was selected`)

	// A new manifest pasted with the old choice still posted: the choice is not applied.
	again["hpa_manifest"] = cpuHPA
	again["action"] = "import_hpa"
	rec = postFormMultipart(t, s, again, "")
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	doc = parseHTML(t, rec.Body)
	assert.Equal(t, "8", formFields(doc)["autoscaler.target"])
	assert.Equal(t, 0, byTestID(doc, "form-hpa-choice").Length(), "one autoscaler: no choice")
}

// "Replicas at the start" beside the Prometheus load sets the fleet's workers; a bad value
// comes back with its message naming the field, nothing changed.
func TestScenarioFormLoadSetsReplicasAtStart(t *testing.T) {
	s := newFakeServer(t, runs.Config{}, false)
	doc := parseHTML(t, get(t, s, "/").Body)
	require.Equal(t, 1, byTestID(doc, "prom-replicas").Length(), "the field is beside the load")
	fields := formFields(doc)
	fields["action"] = "load_prometheus"
	fields["prom_answer"] = promAnswer(t, "night_1m.json")
	fields["prom_replicas"] = "3"
	require.NotEqual(t, "3", fields["fleet.workers"])

	rec := postFormMultipart(t, s, fields, "")
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	doc = parseHTML(t, rec.Body)
	got := formFields(doc)
	assert.Equal(t, "3", got["fleet.workers"])
	assert.Equal(t, "3", got["prom_replicas"], "the field keeps its value")
	assert.Contains(t, byTestID(doc, "form-notice").Text(), "the night starts with 3 workers")

	// Empty: the form's workers stay.
	fields["prom_replicas"] = ""
	rec = postFormMultipart(t, s, fields, "")
	require.Equal(t, http.StatusOK, rec.Code)
	assert.Equal(t, fields["fleet.workers"], formFields(parseHTML(t, rec.Body))["fleet.workers"])

	// Under an autoscaler, replicas outside its bounds are said before anything else.
	keda := parseHTML(t, get(t, s, "/?preset=autoscaler-keda").Body)
	kf := formFields(keda)
	require.Equal(t, form.ModeAutoscaler, kf[form.ScaleInModePath])
	require.NotEmpty(t, kf["autoscaler.max_workers"])
	kf["action"], kf["prom_answer"], kf["prom_replicas"] = "load_prometheus", promAnswer(t, "night_1m.json"), "40"
	rec = postFormMultipart(t, s, kf, "")
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	doc = parseHTML(t, rec.Body)
	assert.Equal(t, "40", formFields(doc)["fleet.workers"])
	assert.Contains(t, byTestID(doc, "form-fleet-warning").Text(), "fleet.workers 40 lies outside the autoscaler's bounds")

	for _, bad := range []string{"0", "two", "2.5"} {
		fields["prom_replicas"] = bad
		rec = postFormMultipart(t, s, fields, "")
		require.Equal(t, http.StatusBadRequest, rec.Code, bad)
		doc = parseHTML(t, rec.Body)
		assert.Contains(t, byTestID(doc, "form-notice").Text(), "prom_replicas: \""+bad+"\" is not a whole number of at least 1")
		assert.Equal(t, bad, formFields(doc)["prom_replicas"], "the value is kept to fix")
		assert.Equal(t, fields["fleet.workers"], formFields(doc)["fleet.workers"])
	}
}
