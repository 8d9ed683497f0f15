package store

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"

	"github.com/klauspost/compress/gzip"
)

// A done run's full report is stored as one gzip stream cut into chunks of reportChunkBytes
// (migration 00007), so a reader holds one chunk at a time however large the report: report.json
// sends the chunks as they are to a client that accepts gzip, or gunzips them as it goes; the API's
// run document and trace.json decode the JSON from a reader. Reports stored before the chunks (in
// runs.report_json) are moved into chunks on their first read.
//
// Each chunk is read in its own short query, not through one cursor held for the whole download,
// so a slow client never holds one of the few pooled connections (SQLite's read pool has four):
// a done run's report never changes, so the chunks of separate queries belong together.
const reportChunkBytes = 64 << 10

// compressedReport is a report ready to store: its gzip stream in chunks.
type compressedReport struct {
	chunks               [][]byte
	jsonBytes, gzipBytes int64
}

// compressReport gzips reportJSON into chunks of reportChunkBytes. It runs outside any
// transaction, so the single SQLite writer is not held while it compresses.
func compressReport(reportJSON []byte) (compressedReport, error) {
	w := NewReportWriter()
	if _, err := w.Write(reportJSON); err != nil {
		return compressedReport{}, err
	}
	return w.compressed()
}

// ReportWriter gzips a report's JSON, as it is written, into the chunks FinishClaimedReport
// stores, so a report can be stored without ever being held whole: it holds the compressed
// chunks only (JSON of per-request rows compresses about 20×).
type ReportWriter struct {
	cw        chunkWriter
	zw        *gzip.Writer
	jsonBytes int64
	err       error
	done      bool
}

// NewReportWriter returns an empty ReportWriter.
func NewReportWriter() *ReportWriter {
	w := &ReportWriter{}
	w.zw, w.err = gzip.NewWriterLevel(&w.cw, gzip.DefaultCompression)
	return w
}

// Write adds p to the report's JSON.
func (w *ReportWriter) Write(p []byte) (int, error) {
	if w.err != nil {
		return 0, w.err
	}
	if w.done {
		return 0, errors.New("store: write to a finished report")
	}
	n, err := w.zw.Write(p)
	w.jsonBytes += int64(n)
	w.err = err
	return n, err
}

// JSONBytes is how many bytes of JSON were written.
func (w *ReportWriter) JSONBytes() int64 { return w.jsonBytes }

// compressed ends the gzip stream and returns the chunks.
func (w *ReportWriter) compressed() (compressedReport, error) {
	if w.err != nil {
		return compressedReport{}, w.err
	}
	if !w.done {
		w.done = true
		if w.err = w.zw.Close(); w.err != nil {
			return compressedReport{}, w.err
		}
		w.cw.flush()
	}
	return compressedReport{chunks: w.cw.chunks, jsonBytes: w.jsonBytes, gzipBytes: w.cw.total}, nil
}

// chunkWriter cuts what is written to it into chunks of reportChunkBytes.
type chunkWriter struct {
	chunks [][]byte
	cur    []byte
	total  int64
}

func (c *chunkWriter) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 {
		if c.cur == nil {
			c.cur = make([]byte, 0, reportChunkBytes)
		}
		k := min(len(p), reportChunkBytes-len(c.cur))
		c.cur = append(c.cur, p[:k]...)
		p = p[k:]
		if len(c.cur) == reportChunkBytes {
			c.flush()
		}
	}
	c.total += int64(n)
	return n, nil
}

func (c *chunkWriter) flush() {
	if len(c.cur) > 0 {
		c.chunks = append(c.chunks, c.cur)
	}
	c.cur = nil
}

// storeReportChunks replaces the stored report of run id with rep, in tx.
func storeReportChunks(ctx context.Context, tx *sql.Tx, id string, rep compressedReport) error {
	if _, err := tx.ExecContext(ctx, `DELETE FROM run_report_chunks WHERE run_id = ?`, id); err != nil {
		return err
	}
	for seq, data := range rep.chunks {
		if _, err := tx.ExecContext(ctx, `INSERT INTO run_report_chunks (run_id, seq, data) VALUES (?, ?, ?)`,
			id, seq, data); err != nil {
			return err
		}
	}
	_, err := tx.ExecContext(ctx, `
		UPDATE runs SET report_json = NULL, report_bytes = ?, report_gzip_bytes = ?, report_chunks = ?
		WHERE id = ?`, rep.jsonBytes, rep.gzipBytes, len(rep.chunks), id)
	return err
}

// StoredReport is a done run's full report opened for reading (OpenReport). It holds no chunk
// between reads; it is not safe for concurrent use.
type StoredReport struct {
	s      *Store
	id     string
	chunks int
	// JSONBytes is the length of the report's JSON; GzipBytes that of its gzip stream.
	JSONBytes, GzipBytes int64
	// inMemory holds the chunks of a report stored before chunks whose move into chunks could
	// not be written (it is then read from here; the next read tries again).
	inMemory [][]byte
}

// OpenReport opens the full stored report of a done run, per-request rows included: only
// report.json, the API's run document and trace.json need it. Every call is counted
// (ReportReads), so tests can assert a page view reads none. A run that has no report (not done)
// is ErrNotFound.
//
// A report stored before chunks (runs.report_json) is read whole once, moved into chunks and
// cleared from runs; the read that does it is the only one that holds the whole report.
func (s *Store) OpenReport(ctx context.Context, id string) (*StoredReport, error) {
	s.reportReads.Add(1)
	r := &StoredReport{s: s, id: id}
	var (
		legacy                     bool
		jsonBytes, gzBytes, chunks sql.NullInt64
	)
	err := s.read(ctx, func(tx *sql.Tx) error {
		err := tx.QueryRowContext(ctx, `
			SELECT report_json IS NOT NULL, report_bytes, report_gzip_bytes, report_chunks
			FROM runs WHERE id = ?`, id).Scan(&legacy, &jsonBytes, &gzBytes, &chunks)
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("no run with id %q: %w", id, ErrNotFound)
		}
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("store: open report of run %q: %w", id, err)
	}
	switch {
	case chunks.Valid:
		r.chunks, r.JSONBytes, r.GzipBytes = int(chunks.Int64), jsonBytes.Int64, gzBytes.Int64
		return r, nil
	case legacy:
		return s.moveReportIntoChunks(ctx, r)
	default:
		return nil, fmt.Errorf("store: open report of run %q: the run has no report: %w", id, ErrNotFound)
	}
}

// moveReportIntoChunks reads the report_json of r's run, stores it as chunks and clears it.
func (s *Store) moveReportIntoChunks(ctx context.Context, r *StoredReport) (*StoredReport, error) {
	var reportJSON []byte
	err := s.read(ctx, func(tx *sql.Tx) error {
		return tx.QueryRowContext(ctx, `SELECT report_json FROM runs WHERE id = ?`, r.id).Scan(&reportJSON)
	})
	if err != nil {
		return nil, fmt.Errorf("store: open report of run %q: %w", r.id, err)
	}
	if len(reportJSON) == 0 { // moved by a concurrent read since the first query
		return s.OpenReport(ctx, r.id)
	}
	rep, err := compressReport(reportJSON)
	if err != nil {
		return nil, fmt.Errorf("store: compress report of run %q: %w", r.id, err)
	}
	r.chunks, r.JSONBytes, r.GzipBytes = len(rep.chunks), rep.jsonBytes, rep.gzipBytes
	err = s.write(ctx, func(tx *sql.Tx) error {
		var pending bool
		err := tx.QueryRowContext(ctx, `SELECT report_json IS NOT NULL AND report_chunks IS NULL FROM runs WHERE id = ?`,
			r.id).Scan(&pending)
		if err != nil || !pending {
			return err // gone, or moved by a concurrent read: its chunks hold the same report
		}
		return storeReportChunks(ctx, tx, r.id, rep)
	})
	if err != nil {
		r.inMemory = rep.chunks // served from memory this time; the next read tries again
	}
	return r, nil
}

// chunk reads chunk seq.
func (r *StoredReport) chunk(ctx context.Context, seq int) ([]byte, error) {
	if r.inMemory != nil {
		return r.inMemory[seq], nil
	}
	var data []byte
	err := r.s.read(ctx, func(tx *sql.Tx) error {
		return tx.QueryRowContext(ctx, `SELECT data FROM run_report_chunks WHERE run_id = ? AND seq = ?`,
			r.id, seq).Scan(&data)
	})
	if errors.Is(err, sql.ErrNoRows) {
		err = fmt.Errorf("chunk %d of %d is missing", seq, r.chunks)
	}
	if err != nil {
		return nil, fmt.Errorf("store: read report of run %q: %w", r.id, err)
	}
	return data, nil
}

// WriteGzipTo writes the report's gzip stream (GzipBytes bytes) to w, one chunk at a time.
func (r *StoredReport) WriteGzipTo(ctx context.Context, w io.Writer) (int64, error) {
	var n int64
	for seq := range r.chunks {
		data, err := r.chunk(ctx, seq)
		if err != nil {
			return n, err
		}
		k, err := w.Write(data)
		n += int64(k)
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

// Gzip reads the report's gzip stream, one chunk at a time.
func (r *StoredReport) Gzip(ctx context.Context) io.Reader {
	return &chunkReader{ctx: ctx, r: r}
}

// JSON reads the report's JSON, gunzipping the chunks as it goes; it fails if the stream is
// damaged (gzip checks its CRC-32 and length at the end).
func (r *StoredReport) JSON(ctx context.Context) (io.ReadCloser, error) {
	zr, err := gzip.NewReader(r.Gzip(ctx))
	if err != nil {
		return nil, fmt.Errorf("store: read report of run %q: %w", r.id, err)
	}
	zr.Multistream(false)
	return zr, nil
}

// chunkReader is the io.Reader of Gzip.
type chunkReader struct {
	ctx  context.Context
	r    *StoredReport
	next int
	buf  *bytes.Reader
}

func (c *chunkReader) Read(p []byte) (int, error) {
	for c.buf == nil || c.buf.Len() == 0 {
		if c.next >= c.r.chunks {
			return 0, io.EOF
		}
		data, err := c.r.chunk(c.ctx, c.next)
		if err != nil {
			return 0, err
		}
		c.next++
		c.buf = bytes.NewReader(data)
	}
	return c.buf.Read(p)
}

// GetReportJSON returns the full stored report of a done run as one slice: it holds the whole
// report in memory, so servers stream it with OpenReport instead; this is for tests and for the
// rare caller that needs the bytes of a small report. A run without a report gives nil.
func (s *Store) GetReportJSON(ctx context.Context, id string) ([]byte, error) {
	rep, err := s.OpenReport(ctx, id)
	if errors.Is(err, ErrNotFound) {
		if _, err := s.GetRunStatus(ctx, id); err != nil {
			return nil, fmt.Errorf("store: get report of run %q: %w", id, err)
		}
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	rc, err := rep.JSON(ctx)
	if err != nil {
		return nil, err
	}
	defer func() { _ = rc.Close() }()
	out := make([]byte, 0, rep.JSONBytes)
	buf := bytes.NewBuffer(out)
	if _, err := buf.ReadFrom(rc); err != nil {
		return nil, fmt.Errorf("store: read report of run %q: %w", id, err)
	}
	return buf.Bytes(), nil
}

// ReportReads counts the OpenReport calls (GetReportJSON included) of this store since it was
// opened.
func (s *Store) ReportReads() int64 { return s.reportReads.Load() }
