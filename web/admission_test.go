package web

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"testing"

	"github.com/scalein-planner/scalein/runs"
	"github.com/scalein-planner/scalein/sim"
	"github.com/scalein-planner/scalein/web/form"
	"github.com/stretchr/testify/require"
)

// hostileScenario is the smaller hostile scenario, scaled: it parses in a millisecond
// and its estimate is far above the small budgets the tests give.
func hostileScenario(name string) string {
	return fmt.Sprintf(`{"name": %q, "fleet": {"workers": 64, "gpu_blocks": 10000000, "host_blocks": 10000000, "block_size": 16,
		"max_batched_tokens": 2000000},
		"workload": {"type": "sessions", "sessions": {"count": 5000, "rate_per_s": 100, "turns": 1,
			"system_prompt_tokens": 1000000, "new_input_tokens": 999000, "output_tokens": 10}}}`, name)
}

func TestAdmissionRefusesAScenarioOverTheRunBudget(t *testing.T) {
	s := newFakeServer(t, runs.Config{MaxRunMemory: 1 << 30, MaxTotalMemory: 2 << 30}, false)

	rec := postJSON(t, s, "/api/v1/runs", hostileScenario("hostile"))
	require.Equal(t, http.StatusBadRequest, rec.Code, rec.Body.String())
	var out struct {
		Error  string           `json:"error"`
		Fields []sim.FieldError `json:"fields"`
	}
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &out))
	require.NotEmpty(t, out.Fields)
	require.Equal(t, "fleet.gpu_blocks", out.Fields[0].Path)
	require.Contains(t, out.Fields[0].Message, "64 workers")
	require.Contains(t, out.Fields[0].Message, "this server allows 1.1 GB per run")
	runs, total, err := s.store.ListRuns(context.Background(), 10, 0)
	require.NoError(t, err)
	require.Zero(t, total, "a refused scenario must not be stored: %+v", runs)

	// The pair endpoint refuses it the same way.
	rec = postJSON(t, s, "/api/v1/pairs", `{"kind": "hints", "scenario": `+hostileScenario("hostile pair")+`}`)
	require.Equal(t, http.StatusBadRequest, rec.Code, rec.Body.String())
	require.Contains(t, rec.Body.String(), "fleet.gpu_blocks")

	// The form shows the message beside the field that drives it, with 422.
	form := url.Values{form.RawJSONField: {hostileScenario("hostile form")}}
	rec = postForm(t, s, "/runs", form)
	require.Equal(t, http.StatusUnprocessableEntity, rec.Code)
	require.Contains(t, rec.Body.String(), "this server allows 1.1 GB per run")

	// A small scenario is accepted.
	rec = postJSON(t, s, "/api/v1/runs", testScenario("small"))
	require.Equal(t, http.StatusAccepted, rec.Code, rec.Body.String())
}

func TestAdmissionShowsTheMessageBesideTheFormField(t *testing.T) {
	s := newFakeServer(t, runs.Config{MaxRunMemory: 1 << 30, MaxTotalMemory: 2 << 30}, false)
	form := url.Values{
		"fleet.workers": {"64"}, "fleet.gpu_blocks": {"10000000"}, "fleet.host_blocks": {"10000000"},
		"fleet.block_size": {"16"}, "fleet.max_batched_tokens": {"2000000"},
		"workload.type": {"sessions"}, "workload.sessions.count": {"5000"}, "workload.sessions.turns": {"1"},
		"workload.sessions.system_prompt_tokens": {"1000000"}, "workload.sessions.new_input_tokens": {"999000"},
	}
	rec := postForm(t, s, "/runs", form)
	require.Equal(t, http.StatusUnprocessableEntity, rec.Code, rec.Body.String())
	doc := parseHTML(t, rec.Body)
	require.Contains(t, byTestID(doc, "error-fleet.gpu_blocks").Text(), "this server allows 1.1 GB per run")
}
