package web

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"

	"github.com/scalein-planner/scalein/store"
)

// handleReportJSON serves the stored report byte for byte: a permalink never changes. It is the
// only page that reads the full report (per-request rows included), and it never decodes it: the
// report is stored as one gzip stream in chunks (store.OpenReport), which a client that accepts
// gzip (every browser, curl --compressed) gets as they are, and any other client gets gunzipped
// as it is sent. Either way the server holds about one chunk per download, however large the
// report.
func (s *Server) handleReportJSON(w http.ResponseWriter, r *http.Request) error {
	run, err := s.doneRun(r)
	if err != nil {
		return err
	}
	report, err := s.store.OpenReport(r.Context(), run.ID)
	if err != nil {
		return err
	}
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Content-Disposition", `inline; filename="`+run.ID+`-report.json"`)
	varyAcceptEncoding(h)
	gz := acceptsGzip(r)
	if gz {
		// Set before the first write, so the compress middleware passes the bytes through.
		h.Set("Content-Encoding", "gzip")
		h.Set("Content-Length", strconv.FormatInt(report.GzipBytes, 10))
	} else {
		h.Set("Content-Length", strconv.FormatInt(report.JSONBytes, 10))
	}
	w.WriteHeader(http.StatusOK)
	if r.Method == http.MethodHead {
		return nil
	}
	if gz {
		_, err = report.WriteGzipTo(r.Context(), w)
	} else {
		err = copyReportJSON(r, w, report)
	}
	if err != nil {
		s.abortStream(r, run.ID, err)
	}
	return nil
}

// copyReportJSON writes the report's JSON to w, gunzipping it as it goes.
func copyReportJSON(r *http.Request, w io.Writer, report *store.StoredReport) error {
	rc, err := report.JSON(r.Context())
	if err != nil {
		return err
	}
	defer func() { _ = rc.Close() }()
	_, err = io.Copy(w, rc)
	return err
}

// abortStream ends a response whose status and part of whose body are already sent: the
// connection is cut, so the client sees a short body (below its Content-Length) rather than an
// error page appended to half a report. A client that went away is not worth a log line.
func (s *Server) abortStream(r *http.Request, id string, err error) {
	if r.Context().Err() == nil {
		s.log.ErrorContext(r.Context(), "streaming a stored report failed", "run", id, "err", err)
	}
	panic(http.ErrAbortHandler)
}

// writeRunWithReport writes the API's run document of a done run, out, with its stored report
// under "report", streamed from the chunks: the same bytes writeJSON would send with the report
// in out.Report (the stored report is compact JSON, as json.Marshal writes it), without holding
// the report.
func (s *Server) writeRunWithReport(w http.ResponseWriter, r *http.Request, out apiRun, report *store.StoredReport) error {
	out.Report = nil
	head, err := json.Marshal(out)
	if err != nil {
		return fmt.Errorf("encode run %s: %w", out.ID, err)
	}
	// head ends with the closing brace of the document; the report goes last, before it.
	head = bytes.TrimSuffix(head, []byte("}"))
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	if r.Method == http.MethodHead {
		return nil
	}
	if _, err := w.Write(append(head, `,"report":`...)); err != nil {
		return nil // the client went away
	}
	if err := copyReportJSON(r, w, report); err != nil {
		s.abortStream(r, out.ID, err)
	}
	_, _ = w.Write([]byte("}\n"))
	return nil
}
