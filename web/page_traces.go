package web

import (
	"net/http"
	"net/url"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/scalein-planner/scalein/sim"
	"github.com/scalein-planner/scalein/store"
	"github.com/scalein-planner/scalein/templates"
	"github.com/scalein-planner/scalein/web/format"
)

// handleTraces is GET /traces: uploaded traces and the upload form.
func (s *Server) handleTraces(w http.ResponseWriter, r *http.Request) error {
	notice := ""
	switch r.URL.Query().Get("stored") {
	case "new":
		notice = "The trace was validated and stored."
	case "existing":
		notice = "This trace was already stored (same SHA-256); nothing was added."
	}
	return s.renderTraces(w, r, http.StatusOK, notice, "", "")
}

func (s *Server) renderTraces(w http.ResponseWriter, r *http.Request, status int, notice, errMsg, name string) error {
	traces, err := s.store.ListTraces(r.Context())
	if err != nil {
		return err
	}
	p := templates.TracesPage{Page: s.pageInfo("Traces", "traces"), Notice: notice, Error: errMsg, Name: name,
		Builtins: sim.BuiltinTraces()}
	shas := make([]string, len(traces))
	for i, t := range traces {
		shas[i] = t.SHA256
	}
	owners, err := s.ownersOf(r.Context(), store.OwnedTrace, shas)
	if err != nil {
		return err
	}
	for _, t := range traces {
		p.Traces = append(p.Traces, templates.TraceItem{
			SHA256: t.SHA256, Short: t.SHA256[:12] + "…", Name: t.Name,
			Size: format.BinaryBytes(t.SizeBytes), Rows: format.Number(float64(t.Rows)) + " rows",
			Created: format.Time(t.CreatedAt), UseURL: "/?trace=" + url.QueryEscape(t.SHA256), CreatedBy: owners[t.SHA256],
		})
	}
	return s.render(w, r, status, templates.TracesView(p))
}

// traceUpload is the trace upload form's file.
var traceUpload = upload{what: "trace", maxBytes: maxTraceBytes,
	tooLarge: &Error{Status: http.StatusRequestEntityTooLarge, Title: "Trace too large",
		Message: "the upload is larger than the 64 MiB limit; upload the first part of the trace, or use the trace's limit option on a smaller file"},
	tooLargeFile: &Error{Status: http.StatusRequestEntityTooLarge, Title: "Trace too large",
		Message: "the trace is larger than the 64 MiB limit; upload the first part of it"}}

// handleUploadTrace is POST /traces: a multipart upload, validated with sim.ParseTrace and stored
// once by SHA-256. It takes the calibration upload's bounds (finding H1): the quota is judged
// from Content-Length before the body is read (the uploadQuota gate, routes.go), the body is spooled to disk and hashed (so a
// trace stored already costs no quota), and only then does the upload wait for a large-body
// slot and a memory grant to read and parse it. The route counts as run creation (routes.go).
func (s *Server) handleUploadTrace(w http.ResponseWriter, r *http.Request) error {
	unreadable, done, err := traceUpload.parseForm(r)
	if err != nil {
		return err
	}
	if unreadable != "" {
		return s.renderTraces(w, r, http.StatusBadRequest, "", unreadable, "")
	}
	defer done()
	name := strings.TrimSpace(r.FormValue("name"))
	file, missing, err := traceUpload.spooled(r)
	if missing {
		return s.renderTraces(w, r, http.StatusUnprocessableEntity, "", "choose a trace file to upload (a Mooncake-format JSONL file)", name)
	}
	if err != nil {
		return err
	}
	if name == "" {
		name = file.name()
	}
	name = traceName(name)
	sha, err := file.hash()
	if err != nil {
		return err
	}
	if err := s.checkTraceQuota(r.Context(), sha, file.size()); err != nil {
		return err
	}
	release, err := s.admitUpload(r.Context(), file.size())
	if err != nil {
		return err
	}
	defer release()
	content, err := file.read()
	if err != nil {
		return err
	}
	rows, err := sim.ParseTrace(content)
	if err != nil {
		return s.renderTraces(w, r, http.StatusUnprocessableEntity, "", "The trace was not stored: "+err.Error(), name)
	}
	created, err := s.store.PutTrace(r.Context(), sha, name, content, len(rows), s.now())
	if err != nil {
		return err
	}
	stored := "existing"
	if created {
		stored = "new"
	}
	http.Redirect(w, r, "/traces?stored="+stored, http.StatusSeeOther)
	return nil
}

// maxTraceNameBytes bounds an uploaded trace's name.
const maxTraceNameBytes = 200

// traceName makes a display name of an upload's name: control characters (a NUL, line breaks)
// become spaces, and a name over maxTraceNameBytes is cut at a character boundary, never inside
// a UTF-8 sequence.
func traceName(name string) string {
	name = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return ' '
		}
		return r
	}, strings.ToValidUTF8(name, "\uFFFD"))
	name = strings.TrimSpace(name)
	if len(name) <= maxTraceNameBytes {
		return name
	}
	cut := maxTraceNameBytes
	for cut > 0 && !utf8.RuneStart(name[cut]) {
		cut--
	}
	return name[:cut]
}
