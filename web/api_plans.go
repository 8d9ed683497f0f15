package web

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"strings"

	"github.com/go-chi/chi/v5"
	"github.com/scalein-planner/scalein/runs"
	"github.com/scalein-planner/scalein/sim"
	"github.com/scalein-planner/scalein/sim/whatif"
	"github.com/scalein-planner/scalein/store"
)

// apiCreatePlan is POST /api/v1/plans: 202 while the plan runs, 200 when it is already done.
func (s *Server) apiCreatePlan(w http.ResponseWriter, r *http.Request) error {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return err
	}
	req, err := decodePlanRequest(body)
	if err != nil {
		return err
	}
	created, err := s.runs.CreatePlan(r.Context(), req)
	if err != nil {
		return err
	}
	status := http.StatusAccepted
	if created.Done {
		status = http.StatusOK
	}
	writeJSON(w, status, map[string]any{"id": created.ID, "url": "/plans/" + created.ID, "status": created.Status})
	return nil
}

// apiGetPlan is GET /api/v1/plans/{id}.
func (s *Server) apiGetPlan(w http.ResponseWriter, r *http.Request) error {
	plan, err := s.runs.Plan(r.Context(), chi.URLParam(r, "id"))
	if err != nil {
		return err
	}
	plan.CreatedBy = s.createdBy(r.Context(), store.OwnedPlan, plan.ID)
	writeJSON(w, http.StatusOK, plan)
	return nil
}

// apiCancelPlan is POST /api/v1/plans/{id}/cancel.
func (s *Server) apiCancelPlan(w http.ResponseWriter, r *http.Request) error {
	id := chi.URLParam(r, "id")
	if err := s.runs.CancelPlan(r.Context(), id); err != nil {
		return err
	}
	plan, err := s.runs.Plan(r.Context(), id)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, plan)
	return nil
}

// The shapes of a plan's body, one per kind of plan, shown with a problem in one (planShape).
const (
	drainPlanShape    = `{"name"?: "…", "scenario": {…}, "goal": {"remove": 4, "start_ms": 480000}, "constraints"?: {"ttft_p99_ms": 8000, "max_killed": 0}, "search"?: {…}}`
	capacityPlanShape = `{"name"?: "…", "scenario": {… with an "slo"}, "goal": {"capacity": {"min_attainment"?: 0.99, "workers"?: 4, "duration_ms"?: 300000}}, "search"?: {"max_runs"?: 12}}`
	diagnosePlanShape = `{"name"?: "…", "scenario": {… with an "autoscaler" and an "slo"}, "goal": {"diagnose": {"rate_per_worker_per_s"?: 4.2, "capacity"?: {"min_attainment"?: 0.99, "workers"?: 4, "duration_ms"?: 300000}}, "baseline_workers"?: 12}, "search"?: {"max_runs"?: 23}}`
	tunePlanShape     = `{"name"?: "…", "scenario": {… with an "autoscaler"}, "goal": {"tune": "autoscaler"}, "constraints"?: {"ttft_p99_ms": 8000, "max_killed": 0}, ` +
		`"search"?: {"targets"?: [6, 12], "scale_down_windows_ms"?: [0, 300000], "max_remove_per_tick"?: [1, null], "selections"?: ["least_loaded"], "grace_ms"?: [null, 30000], "migration_limits"?: [0, 8], "refine_top"?: 3, "max_runs"?: 64}, ` +
		`"origin"?: {the origin of POST /api/v1/hpa/import}}`
)

// planShape is the body's shape for the kind of plan it asks for.
func planShape(k whatif.Kind) string {
	switch k {
	case whatif.KindTune:
		return tunePlanShape
	case whatif.KindCapacity:
		return capacityPlanShape
	case whatif.KindDiagnose:
		return diagnosePlanShape
	case whatif.KindDrain:
	}
	return drainPlanShape
}

// listsWithoutNull are the search lists whose entries are values: in max_remove_per_tick and
// grace_ms a null means "no limit" and "no grace", anywhere else it would silently be 0.
func listsWithoutNull() []string {
	return []string{"selections", "waves", "gaps_ms", "targets", "scale_down_windows_ms", "migration_limits"}
}

// decodePlanRequest reads the body of POST /api/v1/plans. A problem names the field's path
// (search.max_remove_per_tick) and shows the shape of the kind of plan the body asks for (a tune
// plan's when goal.tune is set), and a null in a list of values is refused rather than read as 0
// (finding L5 of 2026-12b).
func decodePlanRequest(body []byte) (runs.PlanRequest, error) {
	var peek struct {
		Goal struct {
			Tune, Capacity, Diagnose json.RawMessage
		} `json:"goal"`
		Search map[string]json.RawMessage `json:"search"`
	}
	_ = json.Unmarshal(body, &peek) // a malformed body gets its message from the strict decode
	// The shape of the goal the body asks for (finding L5 of 2026-12c: capacity and diagnose
	// plans were shown the drain plan's).
	set := func(raw json.RawMessage) bool {
		t := bytes.TrimSpace(raw)
		return len(t) > 0 && !bytes.Equal(t, []byte("null"))
	}
	// The kind as whatif.Goal.Kind reads it, from which members are given.
	goal := whatif.Goal{}
	if set(peek.Goal.Tune) {
		goal.Tune = whatif.TuneAutoscaler
	}
	if set(peek.Goal.Capacity) {
		goal.Capacity = &whatif.CapacityGoal{}
	}
	if set(peek.Goal.Diagnose) {
		goal.Diagnose = &whatif.DiagnoseGoal{}
	}
	shape := planShape(goal.Kind())
	var req runs.PlanRequest
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	dec.UseNumber()
	if err := dec.Decode(&req); err != nil {
		if te, ok := errors.AsType[*json.UnmarshalTypeError](err); ok && te.Field != "" {
			got := te.Value
			if len(got) > 40 {
				got = got[:40] + "…"
			}
			return runs.PlanRequest{}, planFieldProblems(shape, sim.FieldError{Path: te.Field,
				Message: fmt.Sprintf("must be %s (got %s)", kindOfValue(te.Type.Kind()), got)})
		}
		return runs.PlanRequest{}, badRequest("the body must be " + shape + ": " + err.Error())
	}
	if dec.More() {
		return runs.PlanRequest{}, badRequest("the body must be one JSON object " + shape)
	}
	var problems []sim.FieldError
	for _, name := range listsWithoutNull() {
		var list []json.RawMessage
		if json.Unmarshal(peek.Search[name], &list) != nil {
			continue
		}
		for i, v := range list {
			if bytes.Equal(bytes.TrimSpace(v), []byte("null")) && len(problems) < 8 {
				problems = append(problems, sim.FieldError{Path: fmt.Sprintf("search.%s[%d]", name, i),
					Message: "null is not a value here: give one or leave the entry out"})
			}
		}
	}
	if len(problems) > 0 {
		return runs.PlanRequest{}, planFieldProblems(shape, problems...)
	}
	return req, nil
}

// planFieldProblems is a 400 naming each field's path, with the shape of the body.
func planFieldProblems(shape string, fields ...sim.FieldError) *Error {
	msg := make([]string, len(fields))
	for i, f := range fields {
		msg[i] = f.Path + ": " + f.Message
	}
	return &Error{Status: http.StatusBadRequest, Title: "Bad request",
		Message: strings.Join(msg, "; ") + "; the body of a plan is " + shape, Fields: fields}
}

// kindOfValue says what a JSON value must be to fill a Go value of kind k.
func kindOfValue(k reflect.Kind) string {
	switch k {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "a whole number in range"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Slice, reflect.Array:
		return "a list"
	case reflect.Struct, reflect.Map:
		return "an object"
	}
	return "a value of another kind"
}
