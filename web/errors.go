package web

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"

	"github.com/a-h/templ"
	"github.com/go-chi/httplog/v3"
	"github.com/scalein-planner/scalein/runs"
	"github.com/scalein-planner/scalein/sim"
	"github.com/scalein-planner/scalein/store"
	"github.com/scalein-planner/scalein/templates"
	"github.com/scalein-planner/scalein/web/format"
)

// Error is an error with the status and the words the user sees. Handlers return it (or any
// error; see problemOf) and one wrapper renders it as a page or as JSON.
type Error struct {
	Status  int
	Title   string
	Message string
	// Fields are per-field validation problems (JSON API: the "fields" member).
	Fields []sim.FieldError
	// Err is the cause, logged for 5xx and never shown.
	Err error
	// RetryAfter, when above 0, is sent as the Retry-After header (seconds).
	RetryAfter int
}

func (e *Error) Error() string {
	if e.Err != nil {
		return fmt.Sprintf("%d %s: %v", e.Status, e.Message, e.Err)
	}
	return fmt.Sprintf("%d %s", e.Status, e.Message)
}

func (e *Error) Unwrap() error { return e.Err }

func notFound(what string) *Error {
	return &Error{Status: http.StatusNotFound, Title: "Not found", Message: what}
}

func badRequest(msg string) *Error {
	return &Error{Status: http.StatusBadRequest, Title: "Bad request", Message: msg}
}

// problemOf is the one mapping from errors to statuses and user-facing messages. Every message
// is clipped, so an echoed bad value never makes a megabyte answer.
func problemOf(err error) *Error { return clipped(classify(err)) }

func classify(err error) *Error {
	var e *Error
	var maxBytes *http.MaxBytesError
	var invalid *sim.ValidationError
	var request *runs.RequestError
	var missing *runs.NotFoundError
	var quota *store.QuotaError
	var unreadable *runs.UnreadableScenarioError
	var bodyRead *bodyReadError
	switch {
	case errors.As(err, &e):
		return e
	case errors.As(err, &bodyRead): // before the store's, which take a broken connection for the database's
		return clientAborted(bodyRead)
	case errors.As(err, &unreadable):
		return badRequest(unreadable.Error())
	case errors.As(err, &request): // before the scenario's own ValidationError, which it wraps
		what := request.What
		n := len(request.Invalid.Errors)
		return &Error{Status: http.StatusBadRequest, Title: "Invalid " + what,
			Message: fmt.Sprintf("the %s is invalid: %d %s; each is listed with its path", what, n, format.Plural(int64(n), "problem", "problems")),
			Fields:  request.Invalid.Errors}
	case errors.As(err, &missing):
		return notFound(missing.Error())
	case errors.As(err, &maxBytes):
		return &Error{Status: http.StatusRequestEntityTooLarge, Title: "Too large",
			Message: fmt.Sprintf("the request body is larger than the %s limit; trim the scenario or the trace, or split it", format.BinaryBytes(maxBytes.Limit))}
	case errors.As(err, &invalid):
		return &Error{Status: http.StatusBadRequest, Title: "Invalid scenario",
			Message: fmt.Sprintf("the scenario is invalid: %d %s; each is listed with its field path", len(invalid.Errors), format.Plural(int64(len(invalid.Errors)), "problem", "problems")),
			Fields:  invalid.Errors}
	case errors.As(err, &quota):
		return quotaProblem(quota)
	case errors.Is(err, runs.ErrQueueFull):
		return &Error{Status: http.StatusTooManyRequests, Title: "The run queue is full",
			Message: "every worker is busy and the queue is full; try again in a minute, or cancel a run you no longer need"}
	case errors.Is(err, store.ErrNotFound):
		return notFound("no such run or trace; check the link (run ids are 16 characters)")
	case store.IsBusy(err): // before IsUnavailable, which includes it
		return dbBusy(err)
	case store.IsUnavailable(err):
		return dbUnavailable(err)
	case errors.Is(err, context.Canceled):
		return &Error{Status: 499, Title: "Request cancelled", Message: "the request was cancelled", Err: err}
	default:
		return &Error{Status: http.StatusInternalServerError, Title: "Something went wrong",
			Message: "an internal error stopped this page; it has been logged. Try again, and report it if it persists", Err: err}
	}
}

// htmlHandler is a handler that returns an error instead of writing it.
type htmlHandler func(w http.ResponseWriter, r *http.Request) error

// page adapts a handler that returns an error: the error goes to writeError, which writes it
// as the route's group says (the designed error page, or JSON in the API groups).
func (s *Server) page(h htmlHandler) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if err := h(w, r); err != nil {
			s.writeError(w, r, err)
		}
	}
}

// api is page for the JSON handlers: that their errors are JSON ({"error": …, "fields": […]})
// is the API group's doing (answerAsAPI), not the adapter's.
func (s *Server) api(h htmlHandler) http.HandlerFunc { return s.page(h) }

// answerForm is how a request's errors are written. withAnswerForm gives every request one
// before routing, so that the recoverer, which runs before the route's group is known, reads
// what the group decided; answerAsAPI, the API group's first middleware, marks it.
type answerForm struct{ api bool }

type answerFormKey struct{}

// withAnswerForm gives the request an unmarked answerForm: errors are pages until a group says
// otherwise.
func withAnswerForm(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), answerFormKey{}, &answerForm{})))
	})
}

// answerAsAPI marks the request as the API's: its errors, refusals of the gates that follow
// included, are written as JSON.
func answerAsAPI(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if f, ok := r.Context().Value(answerFormKey{}).(*answerForm); ok {
			f.api = true
		} else {
			r = r.WithContext(context.WithValue(r.Context(), answerFormKey{}, &answerForm{api: true}))
		}
		next.ServeHTTP(w, r)
	})
}

// writeError is the one place that decides how an error is written: as API JSON when the
// route's group marked the request (answerAsAPI), as the designed error page otherwise.
func (s *Server) writeError(w http.ResponseWriter, r *http.Request, err error) {
	if f, ok := r.Context().Value(answerFormKey{}).(*answerForm); ok && f.api {
		s.writeAPIError(w, r, err)
		return
	}
	s.renderError(w, r, err)
}

func (s *Server) logProblem(r *http.Request, p *Error) {
	if _, ok := errors.AsType[*bodyReadError](p.Err); ok {
		httplog.SetAttrs(r.Context(), slog.String("error.type", "ClientAborted"), slog.String("error.message", p.Err.Error()))
	}
	if p.Status == http.StatusServiceUnavailable {
		s.noteStoreError(p.Err)
	}
	if p.Status >= 500 {
		s.log.ErrorContext(r.Context(), "request failed", "method", r.Method, "path", r.URL.Path, "status", p.Status, "err", p.Err)
	}
}

func (s *Server) renderError(w http.ResponseWriter, r *http.Request, err error) {
	p := problemOf(err)
	s.logProblem(r, p)
	if p.Status == 499 {
		return
	}
	setRetryAfter(w, p)
	details := make([]string, 0, len(p.Fields))
	for _, f := range p.Fields {
		details = append(details, f.String())
	}
	view := templates.ErrorView(templates.ErrorPage{
		Page:    s.pageInfo(p.Title, ""),
		Status:  p.Status,
		Title:   p.Title,
		Message: p.Message,
		Details: details,
	})
	if err := s.render(w, r, p.Status, view); err != nil {
		s.log.ErrorContext(r.Context(), "rendering the error page failed", "err", err)
		http.Error(w, p.Message, p.Status)
	}
}

// apiError is the JSON body of every API error.
type apiError struct {
	Error  string           `json:"error"`
	Fields []sim.FieldError `json:"fields,omitempty"`
}

func (s *Server) writeAPIError(w http.ResponseWriter, r *http.Request, err error) {
	p := problemOf(err)
	s.logProblem(r, p)
	if p.Status == 499 {
		return
	}
	setRetryAfter(w, p)
	writeJSON(w, p.Status, apiError{Error: p.Message, Fields: p.Fields})
}

// render writes a component into a buffer first, so a render error never leaves half a page
// behind a 200.
func (s *Server) render(w http.ResponseWriter, r *http.Request, status int, c templ.Component) error {
	var buf bytes.Buffer
	if err := c.Render(r.Context(), &buf); err != nil {
		return fmt.Errorf("render %s: %w", r.URL.Path, err)
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	if r.Method == http.MethodHead {
		return nil // answered like GET, without the body
	}
	_, err := w.Write(buf.Bytes())
	return err
}

// writeJSON encodes v before writing anything, for the same reason as render.
func writeJSON(w http.ResponseWriter, status int, v any) {
	body, err := json.Marshal(v)
	if err != nil {
		http.Error(w, `{"error":"encoding the response failed"}`, http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(append(body, '\n'))
}
