package store

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"time"
)

// TraceInfo describes an uploaded trace without its content.
type TraceInfo struct {
	SHA256, Name string
	SizeBytes    int64 // of the uncompressed JSONL
	Rows         int
	CreatedAt    time.Time
}

// PutTrace stores a trace under the SHA-256 of its content, once: storing the same content
// again returns created=false and keeps the first name. The caller validates the content (and
// counts its rows); the store checks that sha256 is the lower-case hex digest of content.
func (s *Store) PutTrace(ctx context.Context, sha256Hex, name string, content []byte, rows int, now time.Time) (created bool, err error) {
	if err := checkSHA256(sha256Hex); err != nil {
		return false, fmt.Errorf("store: put trace: %w", err)
	}
	if sum := sha256.Sum256(content); hex.EncodeToString(sum[:]) != sha256Hex {
		return false, fmt.Errorf("store: put trace %s: the content's sha256 is %x: %w", sha256Hex, sum, ErrInvalid)
	}
	if rows < 0 || now.IsZero() {
		return false, fmt.Errorf("store: put trace %s: rows %d, time %v: rows must be at least 0 and the time set: %w", sha256Hex, rows, now, ErrInvalid)
	}
	// Compress outside the transaction so the single writer is not held while gzip runs.
	compressed, err := gzipBytes(content)
	if err != nil {
		return false, fmt.Errorf("store: put trace %s: compress: %w", sha256Hex, err)
	}
	locks := quotaLocks(ctx, func(q Quota) bool { return q.UploadBytes > 0 })
	err = s.writeLocked(ctx, locks, func(tx *sql.Tx) error {
		var stored int
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM traces WHERE sha256 = ?`, sha256Hex).Scan(&stored); err != nil {
			return err
		}
		if stored == 0 {
			if err := checkUploadQuota(ctx, tx, int64(len(content))); err != nil {
				return err
			}
		}
		res, err := tx.ExecContext(ctx, `
			INSERT INTO traces (sha256, name, size_bytes, rows, content_gzip, created_at, owner)
			VALUES (?, ?, ?, ?, ?, ?, ?)
			ON CONFLICT (sha256) DO NOTHING`,
			sha256Hex, name, len(content), rows, compressed, toUnixMS(now), OwnerFrom(ctx))
		if err != nil {
			return err
		}
		n, err := res.RowsAffected()
		created = n == 1
		return err
	})
	if err != nil {
		return false, fmt.Errorf("store: put trace %s: %w", sha256Hex, err)
	}
	return created, nil
}

// GetTraceInfo describes one trace.
func (s *Store) GetTraceInfo(ctx context.Context, sha256Hex string) (TraceInfo, error) {
	var info TraceInfo
	err := s.read(ctx, func(tx *sql.Tx) error {
		rows, err := tx.QueryContext(ctx, `SELECT `+traceInfoColumns+` FROM traces WHERE sha256 = ?`, sha256Hex)
		if err != nil {
			return err
		}
		infos, err := scanTraceInfos(rows)
		if err != nil {
			return err
		}
		if len(infos) == 0 {
			return noTrace(sha256Hex)
		}
		info = infos[0]
		return nil
	})
	if err != nil {
		return TraceInfo{}, fmt.Errorf("store: get trace %s: %w", sha256Hex, err)
	}
	return info, nil
}

// ListTraces describes every stored trace, newest first.
func (s *Store) ListTraces(ctx context.Context) ([]TraceInfo, error) {
	var infos []TraceInfo
	err := s.read(ctx, func(tx *sql.Tx) error {
		rows, err := tx.QueryContext(ctx, `SELECT `+traceInfoColumns+` FROM traces ORDER BY created_at DESC, sha256`)
		if err != nil {
			return err
		}
		infos, err = scanTraceInfos(rows)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("store: list traces: %w", err)
	}
	return infos, nil
}

// Trace returns the JSONL content of an uploaded trace; it makes *Store a sim.TraceSource.
func (s *Store) Trace(sha256Hex string) ([]byte, error) {
	return s.TraceContext(context.Background(), sha256Hex)
}

// TraceContext is Trace with a context.
func (s *Store) TraceContext(ctx context.Context, sha256Hex string) ([]byte, error) {
	var compressed []byte
	err := s.read(ctx, func(tx *sql.Tx) error {
		err := tx.QueryRowContext(ctx, `SELECT content_gzip FROM traces WHERE sha256 = ?`, sha256Hex).Scan(&compressed)
		if errors.Is(err, sql.ErrNoRows) {
			return noTrace(sha256Hex)
		}
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("store: read trace %s: %w", sha256Hex, err)
	}
	content, err := gunzipBytes(compressed)
	if err != nil {
		return nil, fmt.Errorf("store: read trace %s: decompress: %w", sha256Hex, err)
	}
	return content, nil
}

const traceInfoColumns = `sha256, name, size_bytes, rows, created_at`

func scanTraceInfos(rows *sql.Rows) ([]TraceInfo, error) {
	defer rows.Close()
	var infos []TraceInfo
	for rows.Next() {
		var (
			t       TraceInfo
			created sql.NullInt64
		)
		if err := rows.Scan(&t.SHA256, &t.Name, &t.SizeBytes, &t.Rows, &created); err != nil {
			return nil, err
		}
		t.CreatedAt = fromNullUnixMS(created)
		infos = append(infos, t)
	}
	return infos, rows.Err()
}

func noTrace(sha256Hex string) error {
	return fmt.Errorf("no uploaded trace has sha256 %s; upload it on the traces page first: %w", sha256Hex, ErrNotFound)
}

// checkSHA256 accepts exactly 64 lower-case hex digits, the form the simulator names traces by.
func checkSHA256(s string) error {
	if len(s) != 64 {
		return fmt.Errorf("sha256 %q has %d characters, want 64 lower-case hex digits: %w", s, len(s), ErrInvalid)
	}
	for _, c := range s {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return fmt.Errorf("sha256 %q contains %q, want lower-case hex digits only: %w", s, c, ErrInvalid)
		}
	}
	return nil
}

func gzipBytes(b []byte) ([]byte, error) {
	var buf bytes.Buffer
	w, err := gzip.NewWriterLevel(&buf, gzip.BestSpeed)
	if err != nil {
		return nil, err
	}
	if _, err := w.Write(b); err != nil {
		return nil, err
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func gunzipBytes(b []byte) ([]byte, error) {
	r, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return io.ReadAll(r)
}
