package web

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"

	"github.com/scalein-planner/scalein/sim"
	"github.com/scalein-planner/scalein/sim/hpa"
	"github.com/scalein-planner/scalein/templates"
	"github.com/scalein-planner/scalein/web/form"
)

// importHPA fills a scenario's autoscaler (and migration limit) from an HPA manifest
// (hpa.IntoScenario), with the scenario's and the manifest's problems as the API shows them.
func (s *Server) importHPA(scenarioJSON, manifest []byte, opt ...hpa.ImportOptions) (out []byte, im *hpa.Imported, dropped bool, err error) {
	var o hpa.ImportOptions
	if len(opt) > 0 {
		o = opt[0]
	}
	out, im, dropped, err = hpa.IntoScenarioWith(scenarioJSON, manifest, sim.ParseEnv{Traces: s.store}, o)
	if se, ok := errors.AsType[*hpa.ScenarioError](err); ok {
		if _, ok := errors.AsType[*sim.ValidationError](se.Err); ok {
			return nil, nil, false, se.Err
		}
		if strings.HasPrefix(se.Err.Error(), "scenario: ") {
			return nil, nil, false, badRequest(se.Err.Error())
		}
		return nil, nil, false, badRequest("scenario: " + se.Err.Error())
	}
	if err != nil {
		return nil, nil, false, &importRefusal{"manifest: " + err.Error()}
	}
	return out, im, dropped, nil
}

// importRefusal is why a manifest was not imported. The pages show it whole (it names the
// document, the field and the fix, and quotes at most a few characters of the file); the API
// answers it as a 400.
type importRefusal struct{ msg string }

func (e *importRefusal) Error() string { return e.msg }

// importMessages is what a page shows for an import's error: a refusal whole, a problem of the
// scenario by its fields; ok is false for errors that are not the user's to fix.
func importMessages(err error) ([]string, bool) {
	if r, ok := errors.AsType[*importRefusal](err); ok {
		return []string{r.msg}, true
	}
	return problemMessages(err)
}

// importNotes is what the form says after an import: what was filled, then what the manifest
// holds that the model cannot represent.
func importNotes(im *hpa.Imported, dropped bool) (filled string, problems []string) {
	labels := make([]string, len(im.Filled))
	for i, f := range im.Filled {
		labels[i] = form.LabelOf(f)
	}
	filled = "Filled from the HPA manifest: " + strings.Join(labels, ", ") + "."
	if dropped {
		filled += " The scale-in schedule was removed: an autoscaler replaces a hand-written schedule."
	}
	for _, p := range im.Problems {
		problems = append(problems, p.String())
	}
	return filled, problems
}

// handleImportHPA is POST /plans/import-hpa: the plan form's "Import an HPA manifest" (pasted in
// the manifest box or uploaded as a file), which re-renders the form with the scenario's
// autoscaler filled and every part of the manifest the model cannot represent named.
func (s *Server) handleImportHPA(w http.ResponseWriter, r *http.Request) error {
	var manifest []byte
	if strings.HasPrefix(r.Header.Get("Content-Type"), "multipart/form-data") {
		if err := r.ParseMultipartForm(2 << 20); err != nil {
			return badRequest("the upload could not be read (" + err.Error() + "); choose a file and try again")
		}
		defer func() { _ = r.MultipartForm.RemoveAll() }()
		if file, _, err := r.FormFile("file"); err == nil {
			defer file.Close()
			manifest, err = io.ReadAll(io.LimitReader(file, hpa.MaxManifestBytes+1))
			if err != nil {
				return err
			}
		}
	} else if err := r.ParseForm(); err != nil {
		return badRequest("the form could not be read: " + err.Error())
	}
	if len(bytes.TrimSpace(manifest)) == 0 {
		manifest = pastedText(r.FormValue("manifest"))
	}
	p, _ := s.planFormPage(&http.Request{Method: http.MethodGet, URL: r.URL})
	p.Scenario, p.Notice, p.Manifest = r.FormValue("scenario"), "", string(manifest)
	status := http.StatusOK
	if len(bytes.TrimSpace(manifest)) == 0 {
		p.Errors, status = []string{"manifest: paste an HPA manifest (YAML) or choose a file"}, http.StatusBadRequest
		return s.render(w, r, status, templates.PlanNewView(p))
	}
	var out []byte
	var im *hpa.Imported
	var dropped bool
	err := s.parseBody(r.Context(), r.ContentLength, func() (err error) {
		out, im, dropped, err = s.importHPA([]byte(p.Scenario), manifest)
		return err
	})
	if err != nil {
		msgs, ok := importMessages(err)
		if !ok {
			return err
		}
		p.Errors = msgs
		return s.render(w, r, http.StatusBadRequest, templates.PlanNewView(p))
	}
	p.Scenario, p.HasAutoscaler, p.Goal = string(out), true, "tune"
	p.Imported, p.ImportProblems = importNotes(im, dropped)
	if im.Origin != nil {
		origin, err := json.Marshal(im.Origin)
		if err != nil {
			return err
		}
		p.Origin = string(origin)
	}
	return s.render(w, r, status, templates.PlanNewView(p))
}

// apiImportHPA is POST /api/v1/hpa/import: {"scenario"?: {…}, "manifest": "YAML", "select"?:
// "NAME"} → the scenario with its autoscaler filled, what was filled and what the model cannot
// represent. select names the autoscaler to read when the manifest holds several.
func (s *Server) apiImportHPA(w http.ResponseWriter, r *http.Request) error {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return err
	}
	var req struct {
		Scenario json.RawMessage `json:"scenario"`
		Manifest string          `json:"manifest"`
		Select   string          `json:"select"`
	}
	if err := decodeStrict(body, &req, `{"scenario"?: {…}, "manifest": "apiVersion: autoscaling/v2\nkind: HorizontalPodAutoscaler\n…", "select"?: "NAME"}`); err != nil {
		return err
	}
	if strings.TrimSpace(req.Manifest) == "" {
		return badRequest("manifest: required: the HPA manifest as YAML text")
	}
	if len(req.Scenario) == 0 {
		req.Scenario = defaultScenarioBody
	}
	var out []byte
	var im *hpa.Imported
	var dropped bool
	err = s.parseBody(r.Context(), int64(len(body)), func() (err error) {
		out, im, dropped, err = s.importHPA(req.Scenario, []byte(req.Manifest), hpa.ImportOptions{Select: req.Select})
		return err
	})
	if r, ok := errors.AsType[*importRefusal](err); ok {
		return badRequest(r.msg)
	}
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"scenario": json.RawMessage(out), "autoscaler": im.Autoscaler,
		"migration_limit": im.MigrationLimit, "filled": im.Filled, "problems": im.Problems, "origin": im.Origin, "pools": im.Pools, "scale_in_removed": dropped})
	return nil
}
