package web

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/go-chi/chi/v5"

	"github.com/scalein-planner/scalein/sim"
	"github.com/scalein-planner/scalein/sim/calibrate"
	"github.com/scalein-planner/scalein/store"
	"github.com/scalein-planner/scalein/templates"
	"github.com/scalein-planner/scalein/web/charts"
	"github.com/scalein-planner/scalein/web/form"
	"github.com/scalein-planner/scalein/web/format"
)

// maxFPMBytes bounds an uploaded FPM file (the upload body limit of middleware.go covers it).
const maxFPMBytes = maxTraceBytes

// calibrationKeyOf reads a calibration's permalink: /calibrations/{sha256}?worker=…&skip=….
func calibrationKeyOf(r *http.Request) (store.CalibrationKey, error) {
	k := store.CalibrationKey{SHA256: chi.URLParam(r, "sha"), Worker: r.URL.Query().Get("worker")}
	if !sha256Pattern(k.SHA256) {
		return k, notFound("no calibration has this id; a calibration is named by the 64 hex digits of its input's SHA-256")
	}
	if v := r.URL.Query().Get("skip"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return k, badRequest("skip must be a whole number of passes, 0 or more")
		}
		k.Skip = n
	}
	return k, nil
}

func sha256Pattern(s string) bool {
	if len(s) != 64 {
		return false
	}
	for _, c := range s {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// calibrationURL is a calibration's permalink (options in the query only when set).
func calibrationURL(prefix string, k store.CalibrationKey) string {
	q := url.Values{}
	if k.Worker != "" {
		q.Set("worker", k.Worker)
	}
	if k.Skip != 0 {
		q.Set("skip", strconv.Itoa(k.Skip))
	}
	u := prefix + k.SHA256
	if len(q) > 0 {
		sep := "?"
		if strings.Contains(prefix, "?") {
			sep = "&"
		}
		u += sep + q.Encode()
	}
	return u
}

// calibrateInput parses and fits; an input error becomes a 422 with the bad lines.
type calibrationInputError struct {
	msg   string
	lines []calibrate.LineError
	more  int
}

func (e *calibrationInputError) Error() string { return e.msg }

func fitFPM(content []byte, k store.CalibrationKey) (*calibrate.Read, calibrate.Result, error) {
	read, err := calibrate.Parse(bytes.NewReader(content), calibrate.Options{Worker: k.Worker, Skip: k.Skip})
	if err != nil {
		var ie *calibrate.InputError
		if errors.As(err, &ie) {
			msg := ie.Msg
			if msg == "" {
				n := len(ie.Lines) + ie.More
				msg = fmt.Sprintf("the FPM file has %d bad line(s); fix them (each is listed with its line number) and upload it again", n)
			}
			return nil, calibrate.Result{}, &calibrationInputError{msg: msg, lines: ie.Lines, more: ie.More}
		}
		return nil, calibrate.Result{}, err
	}
	return read, calibrate.Fit(read), nil
}

// storeCalibration fits content and stores it (once per input and options).
func (s *Server) storeCalibration(r *http.Request, content []byte, name string, k store.CalibrationKey) (calibrate.Result, store.CalibrationKey, bool, error) {
	sum := sha256.Sum256(content)
	k.SHA256 = hex.EncodeToString(sum[:])
	if err := s.checkCalibrationRoom(r.Context(), k.SHA256, int64(len(content))); err != nil {
		return calibrate.Result{}, k, false, err
	}
	if err := s.checkUploadQuota(r.Context(), int64(len(content))); err != nil {
		return calibrate.Result{}, k, false, err
	}
	_, res, err := fitFPM(content, k)
	if err != nil {
		return res, k, false, err
	}
	body, err := json.Marshal(res)
	if err != nil {
		return res, k, false, err
	}
	if len(name) > 200 {
		name = name[:200]
	}
	created, err := s.store.PutCalibration(r.Context(), store.CalibrationInfo{CalibrationKey: k, Name: name,
		Passes: res.Passes, ResultJSON: body, CreatedAt: s.now()}, content)
	return res, k, created, err
}

// handleCalibrations is GET /calibrations: the upload form and the stored calibrations.
func (s *Server) handleCalibrations(w http.ResponseWriter, r *http.Request) error {
	return s.renderCalibrations(w, r, http.StatusOK, templates.CalibrationsPage{})
}

func (s *Server) renderCalibrations(w http.ResponseWriter, r *http.Request, status int, p templates.CalibrationsPage) error {
	list, err := s.store.ListCalibrations(r.Context(), 200)
	if err != nil {
		return err
	}
	p.Page = s.pageInfo("Calibrate", "calibrate")
	for _, c := range list {
		worker := c.Worker
		if worker == "" {
			worker = "every worker"
		}
		p.Items = append(p.Items, templates.CalibrationItem{
			URL: calibrationURL("/calibrations/", c.CalibrationKey), Name: c.Name, Short: c.SHA256[:12] + "…",
			Worker: worker, Skip: strconv.Itoa(c.Skip), Passes: format.Number(float64(c.Passes)), Created: format.Time(c.CreatedAt),
		})
	}
	return s.render(w, r, status, templates.CalibrationsView(p))
}

// fpmUpload is the calibration upload form's file.
var fpmUpload = upload{what: "FPM file", maxBytes: maxFPMBytes,
	tooLarge: &Error{Status: http.StatusRequestEntityTooLarge, Title: "FPM file too large",
		Message: "the upload is larger than the 64 MiB limit; upload part of the file (a few thousand passes are plenty)"},
	tooLargeFile: &Error{Status: http.StatusRequestEntityTooLarge, Title: "FPM file too large",
		Message: "the file is larger than the 64 MiB limit; upload part of it (a few thousand passes are plenty)"}}

// handleUploadCalibration is POST /calibrations: a multipart upload, fitted, stored, then 303 to
// its permalink; bad lines answer 422 with the form and every bad line's number.
func (s *Server) handleUploadCalibration(w http.ResponseWriter, r *http.Request) error {
	unreadable, done, err := fpmUpload.parseForm(r)
	if err != nil {
		return err
	}
	if unreadable != "" {
		return s.renderCalibrations(w, r, http.StatusBadRequest, templates.CalibrationsPage{Error: unreadable})
	}
	defer done()
	p := templates.CalibrationsPage{Name: strings.TrimSpace(r.FormValue("name")),
		Worker: strings.TrimSpace(r.FormValue("worker")), Skip: strings.TrimSpace(r.FormValue("skip"))}
	k := store.CalibrationKey{Worker: p.Worker}
	if p.Skip != "" {
		n, err := strconv.Atoi(p.Skip)
		if err != nil || n < 0 {
			p.Error = "Skip must be a whole number of passes, 0 or more."
			return s.renderCalibrations(w, r, http.StatusUnprocessableEntity, p)
		}
		k.Skip = n
	}
	file, missing, err := fpmUpload.spooled(r)
	if missing {
		p.Error = "Choose an FPM file to upload (JSON lines, one forward pass per line)."
		return s.renderCalibrations(w, r, http.StatusUnprocessableEntity, p)
	}
	if err != nil {
		return err
	}
	// The quota was judged from Content-Length before the body was read (the uploadQuota gate,
	// routes.go); a body without one (chunked) is judged here from the spooled file's size,
	// before it is read into memory or fitted, as a trace's is.
	if err := s.checkUploadQuota(r.Context(), file.size()); err != nil {
		return err
	}
	// The body has arrived (spooled): only now does it wait for a slot and memory.
	release, err := s.admitUpload(r.Context(), file.size())
	if err != nil {
		return err
	}
	defer release()
	content, err := file.read()
	if err != nil {
		return err
	}
	name := p.Name
	if name == "" {
		name = file.name()
	}
	_, k, _, err = s.storeCalibration(r, content, name, k)
	var ie *calibrationInputError
	if errors.As(err, &ie) {
		p.Error = "Nothing was stored: " + ie.msg
		for _, l := range ie.lines {
			p.Lines = append(p.Lines, l.String())
		}
		if ie.more > 0 {
			p.Lines = append(p.Lines, fmt.Sprintf("… and %d more bad lines", ie.more))
		}
		return s.renderCalibrations(w, r, http.StatusUnprocessableEntity, p)
	}
	if err != nil {
		return err
	}
	http.Redirect(w, r, calibrationURL("/calibrations/", k), http.StatusSeeOther)
	return nil
}

// timingRows are the five coefficients as the page shows them.
func timingRows(t sim.Timing) []templates.TimingCell {
	return []templates.TimingCell{
		{Key: "prefill_ms", Label: "prefill base", Value: format.Coefficient(t.PrefillMS), Unit: "ms per pass that prefills"},
		{Key: "prefill_ms_per_1k_tokens", Label: "prefill per 1k tokens", Value: format.Coefficient(t.PrefillMSPer1kTokens), Unit: "ms per 1,000 prefilled tokens"},
		{Key: "decode_ms", Label: "decode base", Value: format.Coefficient(t.DecodeMS), Unit: "ms per pass that emits tokens"},
		{Key: "decode_ms_per_seq", Label: "decode per request", Value: format.Coefficient(t.DecodeMSPerSeq), Unit: "ms per request emitting a token"},
		{Key: "decode_ms_per_1k_kv_tokens", Label: "decode per 1k KV tokens", Value: format.Coefficient(t.DecodeMSPer1kKVTokens), Unit: "ms per 1k KV tokens"},
	}
}

// loadCalibration reads a stored calibration and its result document.
func (s *Server) loadCalibration(r *http.Request) (store.CalibrationInfo, calibrate.Result, error) {
	k, err := calibrationKeyOf(r)
	if err != nil {
		return store.CalibrationInfo{}, calibrate.Result{}, err
	}
	info, err := s.store.GetCalibration(r.Context(), k)
	if errors.Is(err, store.ErrNotFound) {
		return info, calibrate.Result{}, notFound("no calibration has this SHA-256 and these options; upload the FPM file on the Calibrate page")
	}
	if err != nil {
		return info, calibrate.Result{}, err
	}
	var res calibrate.Result
	if err := json.Unmarshal(info.ResultJSON, &res); err != nil {
		return info, res, fmt.Errorf("decode stored calibration %s: %w", k.SHA256, err)
	}
	return info, res, nil
}

// handleCalibration is GET /calibrations/{sha}: a calibration's permalink.
func (s *Server) handleCalibration(w http.ResponseWriter, r *http.Request) error {
	info, res, err := s.loadCalibration(r)
	if err != nil {
		return err
	}
	content, err := s.store.CalibrationContent(r.Context(), info.CalibrationKey)
	if err != nil {
		return err
	}
	read, _, err := fitFPM(content, info.CalibrationKey)
	if err != nil {
		return fmt.Errorf("re-read stored calibration input %s: %w", info.SHA256, err)
	}
	worker := info.Worker
	if worker == "" {
		worker = "every worker"
	}
	p := templates.CalibrationPage{
		Page: s.calibrationPageInfo(r.Context(), "Calibration "+info.Name, info.CalibrationKey), Name: info.Name, SHA256: info.SHA256,
		Worker: worker, Skip: strconv.Itoa(info.Skip), Created: format.Time(info.CreatedAt),
		Passes: format.Number(float64(res.Passes)), Timing: timingRows(res.Timing), Warnings: res.Warnings,
		UseURL:  calibrationURL("/?calibration=", info.CalibrationKey),
		JSONURL: calibrationURL("/api/v1/calibrations/", info.CalibrationKey),
		Chart:   charts.Calibration("calibration-fit", res.Timing, read.Passes),
	}
	p.Page.Charts = true
	if s.mayDeleteCalibrations(r.Context()) {
		p.DeleteURL = "/calibrations/" + info.SHA256 + "/delete"
	}
	p.Classes = templates.DataTable{Caption: "How well the fitted timing predicts each class of pass",
		Columns: []templates.Column{{Label: "class"}, {Label: "passes", Num: true}, {Label: "R²", Num: true}, {Label: "MAPE (%)", Num: true}}}
	for _, c := range []struct {
		name string
		fit  calibrate.ClassFit
	}{{"prefill only", res.Classes.Prefill}, {"decode only", res.Classes.Decode}, {"mixed", res.Classes.Mixed}} {
		p.Classes.Rows = append(p.Classes.Rows, []string{c.name, format.Number(float64(c.fit.N)), format.Significant(c.fit.R2, 4), format.Significant(c.fit.MAPE, 3)})
	}
	return s.render(w, r, http.StatusOK, templates.CalibrationView(p))
}

// apiCreateCalibration is POST /api/v1/calibrations?worker=ID&skip=N&name=NAME with FPM lines as
// the body: 201 with the calibration document (200 when it was already stored), its permalink
// in Location; bad lines answer 422 with {"error", "lines": [{"line", "message"}]}.
func (s *Server) apiCreateCalibration(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	k := store.CalibrationKey{Worker: q.Get("worker")}
	if v := q.Get("skip"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return &Error{Status: http.StatusUnprocessableEntity, Title: "Bad skip", Message: "skip must be a whole number of passes, 0 or more"}
		}
		k.Skip = n
	}
	// The body is spooled to disk first (paced by paceUpload), so a slow client holds no slot
	// (finding M4).
	spool, size, done, err := spoolBody(r)
	if err != nil {
		if p := uploadReadError(err, fpmUpload.tooLarge); p != nil {
			return p
		}
		return err
	}
	defer done()
	release, err := s.admitUpload(r.Context(), size)
	if err != nil {
		return err
	}
	defer release()
	content := make([]byte, size)
	if _, err := io.ReadFull(spool, content); err != nil {
		return fmt.Errorf("read spooled calibration upload: %w", err)
	}
	name := q.Get("name")
	if name == "" {
		name = "API upload"
	}
	res, k, created, err := s.storeCalibration(r, content, name, k)
	var ie *calibrationInputError
	if errors.As(err, &ie) {
		lines := ie.lines
		if lines == nil {
			lines = []calibrate.LineError{}
		}
		writeJSON(w, http.StatusUnprocessableEntity, struct {
			Error     string                `json:"error"`
			Lines     []calibrate.LineError `json:"lines"`
			MoreLines int                   `json:"more_lines,omitempty"`
		}{ie.msg, lines, ie.more})
		return nil
	}
	if err != nil {
		return err
	}
	w.Header().Set("Location", calibrationURL("/calibrations/", k))
	status := http.StatusOK
	if created {
		status = http.StatusCreated
	}
	writeJSON(w, status, res)
	return nil
}

// apiGetCalibration is GET /api/v1/calibrations/{sha}?worker=…&skip=…: the stored document.
func (s *Server) apiGetCalibration(w http.ResponseWriter, r *http.Request) error {
	_, res, err := s.loadCalibration(r)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, res)
	return nil
}

// prefillCalibration puts a stored calibration's timing into the form (GET
// /?calibration=SHA&worker=…&skip=…, the "Use this timing" link).
func (s *Server) prefillCalibration(r *http.Request, f *form.Form) (string, error) {
	q := r.URL.Query()
	k := store.CalibrationKey{SHA256: q.Get("calibration"), Worker: q.Get("worker")}
	if !sha256Pattern(k.SHA256) {
		return "", notFound("no calibration has this id; a calibration is named by the 64 hex digits of its input's SHA-256")
	}
	if v := q.Get("skip"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return "", badRequest("skip must be a whole number of passes, 0 or more")
		}
		k.Skip = n
	}
	info, err := s.store.GetCalibration(r.Context(), k)
	if errors.Is(err, store.ErrNotFound) {
		return "", notFound("no calibration has this SHA-256 and these options; upload the FPM file on the Calibrate page")
	}
	if err != nil {
		return "", err
	}
	var res calibrate.Result
	if err := json.Unmarshal(info.ResultJSON, &res); err != nil {
		return "", fmt.Errorf("decode stored calibration %s: %w", k.SHA256, err)
	}
	for _, c := range timingRows(res.Timing) {
		f.Set("fleet.timing."+c.Key, c.Value)
	}
	return "Timing set from the calibration " + info.Name + " (" + format.Number(float64(res.Passes)) + " measured passes, rounded to six significant digits).", nil
}
