package web

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/scalein-planner/scalein/sim"
	"github.com/scalein-planner/scalein/store"
	"github.com/scalein-planner/scalein/templates"
	"github.com/scalein-planner/scalein/web/form"
	"github.com/scalein-planner/scalein/web/format"
)

const recentRunsOnForm = 8

// handleForm is GET /: the scenario form, empty (defaults), from a preset (?preset=KEY), from
// a stored run (?from=ID, "edit as new") or with an uploaded trace chosen (?trace=SHA).
func (s *Server) handleForm(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	f := form.Default()
	notice := ""
	switch {
	case q.Get("preset") != "":
		key := q.Get("preset")
		p, ok := findPreset(key)
		if !ok {
			return notFound(fmt.Sprintf("there is no preset %q; pick one of the presets listed on the form", key))
		}
		sc, err := sim.Parse(p.JSON, sim.ParseEnv{Traces: s.store})
		if err != nil {
			// Still useful: show the preset as raw JSON so its problems can be fixed in place.
			f.Set(form.RawJSONField, string(p.JSON))
			notice = "Preset " + p.Title + " did not validate; its JSON is in the box at the bottom."
		} else {
			f = form.FromScenario(sc)
			notice = "Prefilled from the preset " + p.Title + ": " + p.Description
		}
	case q.Get("from") != "":
		id := q.Get("from")
		if !idPattern.MatchString(id) {
			return notFound("no run has this id; run ids are 16 characters of a–z and 2–7")
		}
		run, err := s.store.GetRun(r.Context(), id)
		if err != nil {
			return err
		}
		sc, err := sim.Parse(run.ScenarioJSON, sim.ParseEnv{Traces: s.store})
		if err != nil {
			f.Set(form.RawJSONField, string(run.ScenarioJSON))
			notice = "The scenario of run " + id + " no longer validates; its JSON is in the box at the bottom."
		} else {
			sc.Name = editAsNewName(sc.Name) // the new run must not carry the same name
			f = form.FromScenario(sc)
			notice = "Prefilled from run " + id + " (" + run.Name + "). Change what you like and run it as a new scenario."
		}
	case q.Get("calibration") != "":
		msg, err := s.prefillCalibration(r, f)
		if err != nil {
			return err
		}
		notice = msg
	case q.Get("trace") != "":
		info, err := s.store.GetTraceInfo(r.Context(), q.Get("trace"))
		if err != nil {
			return notFound("no uploaded trace has this SHA-256; upload it on the Traces page")
		}
		f.Set(form.WorkloadTypePath, sim.WorkloadTrace)
		f.Set(form.TraceSourceField, "sha256:"+info.SHA256)
		notice = "Workload set to the uploaded trace " + info.Name + "."
	}
	return s.renderForm(w, r, http.StatusOK, f, form.NoErrors(), notice)
}

// handleFormEdit is POST /: the no-JavaScript schedule editor. "Add row" and "Remove" post the
// whole form here and get it back with one row more or less; nothing runs.
func (s *Server) handleFormEdit(w http.ResponseWriter, r *http.Request) error {
	if strings.HasPrefix(r.Header.Get("Content-Type"), "multipart/form-data") {
		// "Import into the autoscaler" posts the form multipart, with the manifest's file.
		if err := r.ParseMultipartForm(2 << 20); err != nil {
			return formParseError(err)
		}
		defer func() { _ = r.MultipartForm.RemoveAll() }()
	} else if err := r.ParseForm(); err != nil {
		return formParseError(err)
	}
	f := form.FromValues(r.PostForm)
	action := r.PostForm.Get("action")
	switch {
	case action == "import_hpa" || action == "load_prometheus":
		// Transforms: a creation's admission, then parsed under the large-body slots.
		if err := s.admitTransform(w, r); err != nil {
			return err
		}
		return s.parseBody(r.Context(), r.ContentLength, func() error {
			if action == "import_hpa" {
				return s.formImportHPA(w, r, f)
			}
			return s.formLoadPrometheus(w, r, f)
		})
	case action == "add_row":
		f.AddRow()
	case action == "fill_day":
		f.FillDay()
	case strings.HasPrefix(action, "add_policy:"):
		f.AddPolicy(strings.TrimPrefix(action, "add_policy:"))
	case strings.HasPrefix(action, "remove_row:"):
		i, err := strconv.Atoi(strings.TrimPrefix(action, "remove_row:"))
		if err != nil {
			i = -1 // no row: one row less is shown, as before
		}
		f.RemoveRow(i)
	}
	return s.renderForm(w, r, http.StatusOK, f, form.NoErrors(), "")
}

// handleCreateRun is POST /runs: validate, then 303 to the run (new or identical existing); an
// invalid form comes back with its problems (422).
func (s *Server) handleCreateRun(w http.ResponseWriter, r *http.Request) error {
	sc, err := s.scenarioFromForm(r)
	if invalid, ok := errors.AsType[*form.Invalid](err); ok {
		return s.renderForm(w, r, http.StatusUnprocessableEntity, invalid.Form, invalid.Errs, "")
	}
	if err != nil {
		return err
	}
	subs, err := s.runs.Submit(r.Context(), sc)
	if err != nil {
		return err
	}
	to := "/runs/" + subs[0].Run.ID
	if key := r.PostForm.Get("origin_key"); store.IsOriginKey(key) && sc.Autoscaler != nil {
		to += "?origin=" + key // the import the scenario came from, for its plan's download
	}
	http.Redirect(w, r, to, http.StatusSeeOther)
	return nil
}

// handleCreatePair is POST /pairs: a scenario (from the form, or from a stored run with
// from=ID) and its counterpart, then 303 to the compare page.
func (s *Server) handleCreatePair(w http.ResponseWriter, r *http.Request) error {
	if err := r.ParseForm(); err != nil {
		return formParseError(err)
	}
	kind := r.PostForm.Get("kind")
	if !isPairKind(kind) {
		return badRequest(fmt.Sprintf("kind must be %s (got %q)", pairKinds, kind))
	}
	var sc *sim.Scenario
	if from := r.PostForm.Get("from"); from != "" {
		if !idPattern.MatchString(from) {
			return notFound("no run has this id; run ids are 16 characters of a–z and 2–7")
		}
		run, err := s.store.GetRun(r.Context(), from)
		if err != nil {
			return err
		}
		sc, err = sim.Parse(run.ScenarioJSON, sim.ParseEnv{Traces: s.store})
		if err != nil {
			return &Error{Status: http.StatusUnprocessableEntity, Title: "Stored scenario is invalid",
				Message: "the stored scenario no longer validates; open it with Edit as new and fix it", Err: err}
		}
	} else {
		var err error
		sc, err = s.scenarioFromForm(r)
		if invalid, ok := errors.AsType[*form.Invalid](err); ok {
			return s.renderForm(w, r, http.StatusUnprocessableEntity, invalid.Form, invalid.Errs, "")
		}
		if err != nil {
			return err
		}
	}
	baseline := 0
	if v := strings.TrimSpace(r.PostForm.Get("baseline_workers")); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			return badRequest(fmt.Sprintf("baseline_workers: the fixed fleet's workers must be a whole number of at least 1, or empty for the autoscaler's maximum (got %q)", v))
		}
		if kind != sim.CounterpartAutoscaler {
			return badRequest("baseline_workers is the fixed fleet of the autoscaler pair; leave it empty for the " + kind + " pair")
		}
		baseline = n
	}
	a, b, err := pairOrder(sc, kind, baseline)
	if err != nil {
		return err
	}
	batch := []*sim.Scenario{a, b}
	if kind == sim.CounterpartPrefillDrain {
		// The third drain mode (fixed) runs beside the pair compared (wait against skip).
		_, _, extra, err := poolPairOrder(sc, kind)
		if err != nil {
			return err
		}
		batch = append(batch, extra...)
	}
	if _, err := s.runs.Submit(r.Context(), batch...); err != nil {
		return err
	}
	http.Redirect(w, r, "/compare?a="+url.QueryEscape(a.ID())+"&b="+url.QueryEscape(b.ID()), http.StatusSeeOther)
	return nil
}

// scenarioFromForm reads and validates the posted form. A form with problems gives an
// *invalidForm, which the handler renders as the form again.
func (s *Server) scenarioFromForm(r *http.Request) (*sim.Scenario, error) {
	if err := r.ParseForm(); err != nil {
		return nil, formParseError(err)
	}
	f := form.FromValues(r.PostForm)
	var sc *sim.Scenario
	err := s.parseBody(r.Context(), r.ContentLength, func() (err error) {
		sc, err = form.Scenario(f, sim.ParseEnv{Traces: s.store})
		return err
	})
	if err != nil {
		return nil, err
	}
	// A full queue refuses the run before its memory estimate is computed (issue 19 M8).
	if err := s.runs.QueueRoom(r.Context(), sc); err != nil {
		return nil, err
	}
	if err := s.runs.Admit(sc); err != nil {
		return nil, form.AdmissionError(f, err)
	}
	return sc, nil
}

func formParseError(err error) error {
	var tooBig *http.MaxBytesError
	if errors.As(err, &tooBig) {
		return err
	}
	return badRequest("the form could not be read (" + err.Error() + "); reload the page and submit it again")
}

func (s *Server) renderForm(w http.ResponseWriter, r *http.Request, status int, f *form.Form, errs form.Errors, notice string) error {
	return s.renderFormHPA(w, r, status, f, errs, notice, "", nil)
}

// renderFormHPA is renderForm with the HPA import's pasted manifest and what it could not represent.
func (s *Server) renderFormHPA(w http.ResponseWriter, r *http.Request, status int, f *form.Form, errs form.Errors, notice, manifest string, hpaProblems []string) error {
	return s.renderFormWith(w, r, status, f, errs, notice, func(v *templates.FormPage) {
		v.HPAManifest, v.HPAProblems = manifest, hpaProblems
	})
}

// renderFormWith renders the scenario form; set fills the view's helper inputs.
func (s *Server) renderFormWith(w http.ResponseWriter, r *http.Request, status int, f *form.Form, errs form.Errors, notice string, set func(*templates.FormPage)) error {
	options, err := s.traceOptions(r.Context(), f.Get(form.TraceSourceField))
	if err != nil {
		return err
	}
	title := "New scenario"
	if errs.Count() > 0 {
		// The title is the first thing a screen reader reads of the page that comes back.
		title = fmt.Sprintf("Fix %d %s · New scenario", errs.Count(), format.Plural(int64(errs.Count()), "problem", "problems"))
	}
	view := f.View(s.pageInfo(title, "new"), errs, options)
	view.Notice = notice
	if key := r.PostForm.Get("origin_key"); store.IsOriginKey(key) {
		view.OriginKey = key
	}
	set(&view)
	// The last import's notes stay through the form's other actions until dismissed.
	// An import that succeeded passes its problems (maybe none) and sets hpa_note.
	switch {
	case view.HPAProblems != nil:
		view.HPANote = r.PostForm.Get("hpa_note")
	case r.PostForm.Get("action") != "dismiss_hpa_notes":
		view.HPANote, view.HPAProblems = r.PostForm.Get("hpa_note"), r.PostForm["hpa_problem"]
	}
	for _, p := range sim.Presets() {
		view.Presets = append(view.Presets, templates.PresetLink{Key: p.Key, Title: p.Title, Description: p.Description})
	}
	recent, _, err := s.store.ListRuns(r.Context(), recentRunsOnForm, 0)
	if err != nil {
		return err
	}
	for _, run := range recent {
		view.Recent = append(view.Recent, templates.RunLink{ID: run.ID, Name: run.Name, Status: run.Status})
	}
	return s.render(w, r, status, templates.FormView(view))
}

// traceOptions lists the built-in and uploaded traces for the workload's trace select, keeping
// the current choice even if it is no longer listed.
func (s *Server) traceOptions(ctx context.Context, current string) ([][2]string, error) {
	var opts [][2]string
	seen := map[string]bool{}
	for _, name := range sim.BuiltinTraces() {
		v := "name:" + name
		opts = append(opts, [2]string{v, "built-in: " + name})
		seen[v] = true
	}
	traces, err := s.store.ListTraces(ctx)
	if err != nil {
		return nil, err
	}
	for _, t := range traces {
		v := "sha256:" + t.SHA256
		opts = append(opts, [2]string{v, fmt.Sprintf("uploaded: %s (%s…, %d rows)", t.Name, t.SHA256[:12], t.Rows)})
		seen[v] = true
	}
	if current != "" && !seen[current] {
		opts = append(opts, [2]string{current, current})
	}
	return opts, nil
}

func findPreset(key string) (sim.Preset, bool) {
	for _, p := range sim.Presets() {
		if p.Key == key {
			return p, true
		}
	}
	return sim.Preset{}, false
}
