package web

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"

	"github.com/scalein-planner/scalein/sim"
	"github.com/scalein-planner/scalein/sim/hpa"
	"github.com/scalein-planner/scalein/templates"
	"github.com/scalein-planner/scalein/web/form"
)

// formHPAManifest reads the scenario form's HPA manifest: the uploaded file (hpa_file) if one
// was chosen, else the pasted text (hpa_manifest). The form must have been parsed.
func formHPAManifest(r *http.Request) ([]byte, error) {
	if r.MultipartForm != nil {
		if file, _, err := r.FormFile("hpa_file"); err == nil {
			defer file.Close()
			b, err := io.ReadAll(io.LimitReader(file, hpa.MaxManifestBytes+1))
			if err != nil {
				return nil, err
			}
			if len(bytes.TrimSpace(b)) > 0 {
				return b, nil
			}
		}
	}
	return pastedText(r.PostFormValue("hpa_manifest")), nil
}

// pastedText is a textarea's text with LF line breaks: a browser sends every line break of a
// textarea as CRLF, which an export onto the pasted file would otherwise write back on every
// line but the header it adds. An uploaded file keeps its bytes.
func pastedText(s string) []byte {
	return []byte(strings.ReplaceAll(s, "\r\n", "\n"))
}

// formImportHPA is the scenario form's "Import into the autoscaler" (POST / with
// action=import_hpa): the form as it stands becomes a scenario, the manifest fills its
// autoscaler (and migration limit) as on the plan form, and the form comes back with those
// fields filled, the autoscaler chosen and a notice naming what the manifest holds that the
// model cannot represent. A form with problems comes back with them, unimported (422); a
// missing or unreadable manifest comes back with its message (400), the pasted text kept.
func (s *Server) formImportHPA(w http.ResponseWriter, r *http.Request, f *form.Form) error {
	manifest, err := formHPAManifest(r)
	if err != nil {
		return err
	}
	fail := func(status int, msg string) error {
		return s.renderFormWith(w, r, status, f, form.NoErrors(), "The HPA manifest was not imported: "+msg, func(v *templates.FormPage) {
			v.HPAManifest, v.NoticeError = string(manifest), true
		})
	}
	if len(bytes.TrimSpace(manifest)) == 0 {
		return fail(http.StatusBadRequest, "HPA manifest: paste an HPA manifest (autoscaling/v2 YAML) or choose a file, then press Import again.")
	}
	sc, err := form.Scenario(f, sim.ParseEnv{Traces: s.store})
	if invalid, ok := errors.AsType[*form.Invalid](err); ok {
		return s.renderFormHPA(w, r, http.StatusUnprocessableEntity, invalid.Form, invalid.Errs,
			"The HPA manifest was not imported: fix the form's problems first.", string(manifest), nil)
	}
	if err != nil {
		return err
	}
	// The choice among a stream's autoscalers applies to the manifest it was offered for.
	var opt hpa.ImportOptions
	if sel := strings.TrimSpace(r.PostFormValue("hpa_select")); sel != "" && r.PostFormValue("hpa_select_for") == manifestSHA(manifest) {
		opt.Select = sel
	}
	out, im, dropped, err := s.importHPA(sc.CanonicalJSON(), manifest, opt)
	if err != nil {
		msgs, ok := importMessages(err)
		if !ok {
			return err
		}
		return fail(http.StatusBadRequest, strings.Join(msgs, "; "))
	}
	imported, err := sim.Parse(out, sim.ParseEnv{Traces: s.store})
	if err != nil {
		return err
	}
	if im.Origin != nil {
		// The import travels with the scenario: form → run → plan → download.
		if key, err := s.putOrigin(r.Context(), im.Origin); err == nil {
			r.PostForm.Set("origin_key", key)
		} else {
			s.log.Warn("an import's origin could not be stored", "err", err)
		}
	}
	filled, problems := importNotes(im, dropped)
	nf := form.FromScenario(imported)
	nf.Set(form.ScaleInModePath, form.ModeAutoscaler)
	notice := filled
	if len(problems) > 0 {
		notice += " What the model cannot represent is listed under Import an HPA manifest."
	}
	if problems == nil {
		problems = []string{} // this import's notes, not the previous one's
	}
	r.PostForm.Set("hpa_note", filled)
	choices := hpaChoices(im.Autoscalers)
	return s.renderFormWith(w, r, http.StatusOK, nf, form.NoErrors(), notice, func(v *templates.FormPage) {
		v.HPAProblems = problems
		if len(choices) > 1 {
			// The manifest stays in the box so that choosing another autoscaler re-imports it.
			v.HPAManifest, v.HPAChoices, v.HPAChoiceFor = string(manifest), choices, manifestSHA(manifest)
		}
	})
}

// hpaChoices is the form's choice among a stream's autoscalers, one per name (Select reads the
// first usable object of a name), the one read selected.
func hpaChoices(all []hpa.AutoscalerName) []templates.HPAChoice {
	var out []templates.HPAChoice
	at := map[string]int{}
	for _, a := range all {
		if i, ok := at[a.Name]; ok {
			out[i].Label += " / " + a.Kind
			out[i].Selected = out[i].Selected || a.Used
			continue
		}
		at[a.Name] = len(out)
		out = append(out, templates.HPAChoice{Name: a.Name, Label: a.Kind + " " + strconv.Quote(a.Name), Selected: a.Used})
	}
	return out
}

// manifestSHA is the hex SHA-256 of a manifest.
func manifestSHA(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}
