package web

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"mime/multipart"
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

// uploadFormMemory is how much of an upload form's file parts the multipart reader keeps in
// memory; the rest is spooled to a temporary file. Spooling happens before the upload is
// admitted (admitUpload), so it must cost little memory per connection.
const uploadFormMemory = 256 << 10

// parseForm parses the multipart form, spooling its file to disk (paceUpload bounds how
// long that may take). A body past the limit is the 413, one too slow the 408; another error is returned as the message the form shows (unreadable). done removes the
// form's temporary files.
func (u upload) parseForm(r *http.Request) (unreadable string, done func(), err error) {
	if err := r.ParseMultipartForm(uploadFormMemory); err != nil {
		if p := uploadReadError(err, u.tooLarge); p != nil {
			return "", nil, p
		}
		return "the upload could not be read (" + err.Error() + "); choose a file and try again", nil, nil
	}
	return "", func() { _ = r.MultipartForm.RemoveAll() }, nil
}

// spooledFile is the form's file as the multipart reader left it (in memory up to
// uploadFormMemory, on disk beyond): its size and SHA-256 are known before its content is read
// into memory.
type spooledFile struct {
	header *multipart.FileHeader
	what   string
}

// spooled finds the form's file; missing is true when the form has none. A file over maxBytes
// is tooLargeFile.
func (u upload) spooled(r *http.Request) (f spooledFile, missing bool, err error) {
	if r.MultipartForm == nil || len(r.MultipartForm.File["file"]) == 0 {
		return f, true, nil
	}
	f = spooledFile{header: r.MultipartForm.File["file"][0], what: u.what}
	if f.header.Size > int64(u.maxBytes) {
		return f, false, u.tooLargeFile
	}
	return f, false, nil
}

// size is the file's size in bytes.
func (f spooledFile) size() int64 { return f.header.Size }

// hash is the file's SHA-256 in hex, read from where it was spooled.
func (f spooledFile) hash() (string, error) {
	file, err := f.header.Open()
	if err != nil {
		return "", fmt.Errorf("open uploaded %s: %w", f.what, err)
	}
	defer file.Close()
	h := sha256.New()
	if _, err := io.Copy(h, file); err != nil {
		return "", fmt.Errorf("hash uploaded %s: %w", f.what, err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// name is the file's base name, for a display name the user left empty.
func (f spooledFile) name() string { return filepath.Base(f.header.Filename) }

// read reads the spooled file into memory, in one allocation of its size.
func (f spooledFile) read() ([]byte, error) {
	file, err := f.header.Open()
	if err != nil {
		return nil, fmt.Errorf("open uploaded %s: %w", f.what, err)
	}
	defer file.Close()
	content := make([]byte, f.header.Size)
	if _, err := io.ReadFull(file, content); err != nil {
		return nil, fmt.Errorf("read uploaded %s: %w", f.what, err)
	}
	return content, nil
}
