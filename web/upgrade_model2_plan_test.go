package web

import (
	"context"
	"crypto/sha256"
	"encoding/base32"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/scalein-planner/scalein/runs"
	"github.com/scalein-planner/scalein/sim"
	"github.com/scalein-planner/scalein/sim/whatif"
	"github.com/scalein-planner/scalein/store"
)

// model2Version is the model version the stored fixtures were simulated under.
const model2Version = "scalein-model/2"

// model2ContentID is a plan id computed the way the model-2 build computed it
// (runs/content_id.go with model 2's version): SHA-256 over the kind, the length-prefixed parts
// and the model version. The fixture's scenario JSON has its keys in map order, so the id need
// not be the one the model-2 build gave this scenario; what matters is that it is a model-2 id.
func model2ContentID(kind string, parts ...[]byte) string {
	h := sha256.New()
	h.Write([]byte(kind))
	for _, p := range parts {
		fmt.Fprintf(h, "\x00%d\x00", len(p))
		h.Write(p)
	}
	h.Write([]byte(model2Version))
	return strings.ToLower(base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString(h.Sum(nil)))[:16]
}

// model2RunID is a run id computed the way the model-2 build computed it (sim.Scenario.ID with
// model 2's version) over the fixture's model-2 scenario JSON.
func model2RunID(scenario []byte) string {
	h := sha256.New()
	h.Write(scenario)
	h.Write([]byte(model2Version))
	return strings.ToLower(base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString(h.Sum(nil)))[:16]
}

// storeModel2Run stores a done run as the model-2 build wrote it: its model-2 scenario, its
// stored model-2 report (testdata/model2, written by the model-2 build) and its headline.
func storeModel2Run(t *testing.T, s *Server, file string, sc *sim.Scenario) (id string, rep sim.Report) {
	t.Helper()
	ctx := context.Background()
	report, err := os.ReadFile(filepath.Join("testdata", "model2", file))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(report, &rep))
	require.Equal(t, model2Version, rep.ModelVersion)
	headline, err := json.Marshal(sim.Headline(&rep))
	require.NoError(t, err)
	scenario := model2Scenario(t, sc)
	id = model2RunID(scenario)
	_, _, err = s.store.CreateRun(ctx, id, rep.Name, scenario, time.Now())
	require.NoError(t, err)
	require.NoError(t, s.store.StartRun(ctx, id, time.Now()))
	require.NoError(t, s.store.FinishRun(ctx, id, report, headline, time.Now()))
	return id, rep
}

// A drain plan stored under model 2 (its two candidates' runs and the plan row with its
// ranked result) answers as stored after model 3: the plan page and GET /api/v1/plans/{id}
// show the stored recommendation, ranks and candidate links; asking for the same plan again
// makes a new plan (a new id, since plan ids are content-addressed over the model version) and
// leaves the stored one as it was. Each export of a stored model-2 run works, except
// passes.jsonl, which would simulate the run again under model 3 and so answers 409 naming why.
func TestModel2PlanAndExportsKeepWorking(t *testing.T) {
	s := newFakeServer(t, runs.Config{}, false)
	ctx := context.Background()
	on, _ := runPreset(t, "incident", nil)
	off, err := sim.Counterpart(on, sim.CounterpartGuard)
	require.NoError(t, err)
	bestID, bestRep := storeModel2Run(t, s, "incident-report.json", on)
	otherID, otherRep := storeModel2Run(t, s, "incident-guard-off-report.json", off)
	require.NotEqual(t, on.ID(), bestID, "a model-2 run id is not the model-3 id of its scenario")

	// The plan row as model 2 wrote it: the canonical model-2 scenario, the normalized request
	// and the result, ranked by the model-2 planner.
	base := model2Scenario(t, on)
	norm, err := whatif.Normalize(on, whatif.Request{Goal: whatif.Goal{Remove: 1, StartMS: 100}})
	require.NoError(t, err)
	reqJSON, err := json.Marshal(norm)
	require.NoError(t, err)
	planID := model2ContentID("plan", base, reqJSON)
	const reason = "stored model-2 reason: the fastest drain without killed requests"
	result := whatif.Result{Goal: norm.Goal, Constraints: norm.Constraints, Search: norm.Search, Runs: 2,
		Candidates: []whatif.Candidate{
			{Label: "guard on", Selection: "idle-first", Waves: 1, Stage: "waves", ScaleIn: on.ScaleIn, ScenarioID: bestID, RunID: bestID,
				Status: store.StatusDone, Digest: bestRep.Digest, Feasible: true, Pareto: true, Rank: 1, Violations: []string{}, Headline: sim.Headline(&bestRep)},
			{Label: "guard off", Selection: "idle-first", Waves: 1, Stage: "waves", ScaleIn: off.ScaleIn, ScenarioID: otherID, RunID: otherID,
				Status: store.StatusDone, Digest: otherRep.Digest, Feasible: false, Rank: 2, Violations: []string{"1 request killed"}, Headline: sim.Headline(&otherRep)},
		},
		Recommended: &whatif.Recommendation{Label: "guard on", ScenarioID: bestID, RunID: bestID, ScaleIn: on.ScaleIn, Reason: reason},
	}
	resultJSON, err := json.Marshal(result)
	require.NoError(t, err)
	_, _, err = s.store.CreatePlan(ctx, store.Plan{ID: planID, Name: "Remove 1 worker from incident", ScenarioJSON: base, RequestJSON: reqJSON}, time.Now())
	require.NoError(t, err)
	require.NoError(t, s.store.AddPlanPoints(ctx, planID, []string{"guard on", "guard off"}, []string{bestID, otherID}))
	require.NoError(t, s.store.SetPlanStatus(ctx, planID, store.StatusDone, "", resultJSON, time.Now()))

	checkStored := func(t *testing.T) {
		t.Helper()
		api := get(t, s, "/api/v1/plans/"+planID)
		require.Equal(t, http.StatusOK, api.Code, api.Body.String())
		var p runs.PlanView
		require.NoError(t, json.Unmarshal(api.Body.Bytes(), &p))
		assert.Equal(t, store.StatusDone, p.Status)
		require.NotNil(t, p.Recommended)
		assert.Equal(t, bestID, p.Recommended.RunID)
		assert.Equal(t, reason, p.Recommended.Reason)
		require.Len(t, p.Candidates, 2)
		assert.Equal(t, []int{1, 2}, []int{p.Candidates[0].Rank, p.Candidates[1].Rank})
		assert.Equal(t, []string{bestID, otherID}, []string{p.Candidates[0].RunID, p.Candidates[1].RunID})
		assert.Equal(t, []bool{true, false}, []bool{p.Candidates[0].Feasible, p.Candidates[1].Feasible})
		require.Len(t, p.Submitted, 2)
		assert.Equal(t, otherID, p.Submitted[1].RunID)

		page := get(t, s, "/plans/"+planID)
		require.Equal(t, http.StatusOK, page.Code, page.Body.String())
		doc := parseHTML(t, page.Body)
		assert.Contains(t, byTestID(doc, "recommendation").Text(), reason)
		assert.Equal(t, "/runs/"+bestID, byTestID(doc, "open-run").AttrOr("href", ""))
		assert.Equal(t, "/compare?a="+bestID+"&b="+otherID, byTestID(doc, "compare-runner-up").AttrOr("href", ""))
		rows := byTestID(doc, "plan-candidate")
		require.Equal(t, 2, rows.Length())
		for i, want := range []struct{ rank, run string }{{"1", bestID}, {"2", otherID}} {
			row := rows.Eq(i)
			assert.Equal(t, want.rank, strings.TrimSpace(row.Find(`[data-label="Rank"]`).Text()))
			assert.Equal(t, "/runs/"+want.run, row.Find(`[data-label="Run"] a`).AttrOr("href", ""))
		}
	}
	checkStored(t)

	// Asking for the same plan again (same stored scenario, same goal) is a new model-3 plan:
	// its id differs from the stored one, so the model-2 plan is never re-ranked in place.
	rec := postJSON(t, s, "/api/v1/plans", planBody(string(base), `"goal": {"remove": 1, "start_ms": 100}`))
	require.Equal(t, http.StatusAccepted, rec.Code, rec.Body.String())
	again := createdID(t, rec, rec.Body.Bytes())
	assert.NotEqual(t, planID, again, "a model-3 request for the same plan gets a new id")
	stored, points, err := s.store.GetPlan(ctx, planID)
	require.NoError(t, err)
	assert.Equal(t, store.StatusDone, stored.Status)
	assert.JSONEq(t, string(resultJSON), string(stored.ResultJSON), "the stored model-2 result is untouched")
	assert.Len(t, points, 2)
	require.NoError(t, s.runs.CancelPlan(ctx, again)) // the new plan is not this test's subject
	checkStored(t)

	// Every export of a stored model-2 run.
	for _, r := range []struct {
		id  string
		rep sim.Report
		sc  *sim.Scenario
	}{{bestID, bestRep, on}, {otherID, otherRep, off}} {
		sj := get(t, s, "/runs/"+r.id+"/scenario.json")
		require.Equal(t, http.StatusOK, sj.Code)
		assert.JSONEq(t, string(model2Scenario(t, r.sc)), sj.Body.String(), "scenario.json is the stored model-2 scenario")

		wc := get(t, s, "/runs/"+r.id+"/workers.csv")
		require.Equal(t, http.StatusOK, wc.Code, wc.Body.String())
		table, err := csv.NewReader(wc.Body).ReadAll()
		require.NoError(t, err)
		require.Len(t, table, len(r.rep.Workers)+1, "a header and a row per stored worker")
		for i, w := range r.rep.Workers {
			assert.Equal(t, fmt.Sprint(w.ID), table[i+1][0])
			assert.Equal(t, w.FinalState, table[i+1][1])
			removed := ""
			if w.RemovedAtMS != nil {
				removed = strconv.FormatFloat(*w.RemovedAtMS, 'f', -1, 64)
			}
			assert.Equal(t, removed, table[i+1][4], "removed_at_ms is the stored model-2 figure")
		}

		// trace.json draws the stored report and says why it has no passes: they would be
		// simulated again under model 3.
		tr := get(t, s, "/runs/"+r.id+"/trace.json")
		require.Equal(t, http.StatusOK, tr.Code, tr.Body.String())
		var trace struct {
			TraceEvents []json.RawMessage `json:"traceEvents"`
			Metadata    map[string]any    `json:"metadata"`
		}
		require.NoError(t, json.Unmarshal(tr.Body.Bytes(), &trace))
		assert.NotEmpty(t, trace.TraceEvents)
		assert.Contains(t, fmt.Sprint(trace.Metadata["passes_note"]), "earlier model version ("+model2Version+")")
		assert.EqualValues(t, 0, trace.Metadata["passes"])

		// passes.jsonl would simulate the run again, and model 3 could give other passes:
		// 409, naming why and what to do.
		pj := get(t, s, "/runs/"+r.id+"/passes.jsonl?worker=0")
		require.Equal(t, http.StatusConflict, pj.Code, pj.Body.String())
		assert.Contains(t, pj.Body.String(), "earlier model version")
		assert.Contains(t, pj.Body.String(), "Edit as new")
	}
}
