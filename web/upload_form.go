package web

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
)

// upload is what the two upload forms (POST /traces, POST /calibrations) share: a multipart
// body parsed within the request's limit, whose "file" part is read whole within maxBytes.
type upload struct {
	what     string // "trace", "FPM file": named in the read error
	maxBytes int
	// tooLarge is the 413 for a body past the request's limit, tooLargeFile for a file past
	// maxBytes; each says how to make it smaller.
	tooLarge, tooLargeFile *Error
}

// parseForm parses the multipart form. A body past the limit is the 413; another error is
// returned as the message the form shows (unreadable). done removes the form's temporary files.
func (u upload) parseForm(r *http.Request) (unreadable string, done func(), err error) {
	if err := r.ParseMultipartForm(8 << 20); err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			return "", nil, u.tooLarge
		}
		return "the upload could not be read (" + err.Error() + "); choose a file and try again", nil, nil
	}
	return "", func() { _ = r.MultipartForm.RemoveAll() }, nil
}

// readFile reads the form's file whole; missing is true when the form has none. name is the
// file's base name, for a display name the user left empty.
func (u upload) readFile(r *http.Request) (content []byte, name string, missing bool, err error) {
	file, header, err := r.FormFile("file")
	if err != nil {
		return nil, "", true, nil
	}
	defer file.Close()
	content, err = io.ReadAll(io.LimitReader(file, int64(u.maxBytes)+1))
	if err != nil {
		return nil, "", false, fmt.Errorf("read uploaded %s: %w", u.what, err)
	}
	if len(content) > u.maxBytes {
		return nil, "", false, u.tooLargeFile
	}
	return content, filepath.Base(header.Filename), false, nil
}
