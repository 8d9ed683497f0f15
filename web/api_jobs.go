package web

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"

	"github.com/scalein-planner/scalein/runs"
)

// The API of every kind of job (sweeps, plans) has the run's shape: the body is decoded
// strictly into the run service's request, the service checks it whole and creates the job,
// and the answer is 202 while the job has runs to do, 200 when every one was done already.

// createJob is POST /api/v1/<kind>s: shape describes the body for a 400, create hands the
// request to the run service, and answer is the JSON of what it created.
func createJob[R any](shape string, create func(context.Context, R) (runs.Created, error), answer func(runs.Created) map[string]any) htmlHandler {
	return func(w http.ResponseWriter, r *http.Request) error {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			return err
		}
		var req R
		if err := decodeStrict(body, &req, shape); err != nil {
			return err
		}
		created, err := create(r.Context(), req)
		if err != nil {
			return err
		}
		status := http.StatusAccepted
		if created.Done {
			status = http.StatusOK
		}
		writeJSON(w, status, answer(created))
		return nil
	}
}

// decodeStrict decodes a JSON body, keeping numbers exact and refusing unknown members.
func decodeStrict(body []byte, v any, shape string) error {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	dec.UseNumber()
	if err := dec.Decode(v); err != nil {
		return badRequest("the body must be " + shape + ": " + err.Error())
	}
	if dec.More() {
		return badRequest("the body must be one JSON object " + shape)
	}
	return nil
}

// decodeNumbers decodes stored JSON, keeping numbers exact.
func decodeNumbers(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	return dec.Decode(v)
}
