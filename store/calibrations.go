package store

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"time"
)

// CalibrationKey names a calibration: the SHA-256 of its input and the options of its fit.
type CalibrationKey struct {
	SHA256 string
	Worker string // worker_id kept ("" = every line)
	Skip   int    // passes skipped
}

// CalibrationInfo describes a stored calibration without its input.
type CalibrationInfo struct {
	CalibrationKey
	Name       string
	SizeBytes  int64
	Passes     int
	ResultJSON []byte // the calibration document
	CreatedAt  time.Time
}

// PutCalibration stores a calibration once: storing the same key again returns created=false
// and keeps the first one. The store checks that the key's sha256 is that of content.
func (s *Store) PutCalibration(ctx context.Context, c CalibrationInfo, content []byte) (created bool, err error) {
	if err := checkSHA256(c.SHA256); err != nil {
		return false, fmt.Errorf("store: put calibration: %w", err)
	}
	if sum := sha256.Sum256(content); hex.EncodeToString(sum[:]) != c.SHA256 {
		return false, fmt.Errorf("store: put calibration %s: the content's sha256 is %x: %w", c.SHA256, sum, ErrInvalid)
	}
	if c.Skip < 0 || c.Passes < 0 || c.CreatedAt.IsZero() || len(c.ResultJSON) == 0 {
		return false, fmt.Errorf("store: put calibration %s: skip %d, passes %d, time %v, %d-byte result: %w",
			c.SHA256, c.Skip, c.Passes, c.CreatedAt, len(c.ResultJSON), ErrInvalid)
	}
	compressed, err := gzipBytes(content)
	if err != nil {
		return false, fmt.Errorf("store: put calibration %s: compress: %w", c.SHA256, err)
	}
	locks := quotaLocks(ctx, func(q Quota) bool { return q.UploadBytes > 0 })
	err = s.writeLocked(ctx, locks, func(tx *sql.Tx) error {
		// An input the owner stored already (fitted with other options) costs nothing more.
		var mine int
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM calibrations WHERE sha256 = ? AND owner = ?`,
			c.SHA256, OwnerFrom(ctx)).Scan(&mine); err != nil {
			return err
		}
		if mine == 0 {
			if err := checkUploadQuota(ctx, tx, int64(len(content))); err != nil {
				return err
			}
		}
		// The content is stored once per sha256, whatever the options it is fitted with.
		if _, err := tx.ExecContext(ctx, `
			INSERT INTO calibration_contents (sha256, size_bytes, content_gzip, created_at) VALUES (?, ?, ?, ?)
			ON CONFLICT (sha256) DO NOTHING`, c.SHA256, len(content), compressed, toUnixMS(c.CreatedAt)); err != nil {
			return err
		}
		res, err := tx.ExecContext(ctx, `
			INSERT INTO calibrations (sha256, worker, skip, name, size_bytes, passes, content_gzip, result_json, created_at, owner)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
			ON CONFLICT (sha256, worker, skip) DO NOTHING`,
			c.SHA256, c.Worker, c.Skip, c.Name, len(content), c.Passes, []byte{}, c.ResultJSON, toUnixMS(c.CreatedAt), OwnerFrom(ctx))
		if err != nil {
			return err
		}
		n, err := res.RowsAffected()
		created = n == 1
		return err
	})
	if err != nil {
		return false, fmt.Errorf("store: put calibration %s: %w", c.SHA256, err)
	}
	return created, nil
}

const calibrationColumns = `sha256, worker, skip, name, size_bytes, passes, result_json, created_at`

// GetCalibration returns one calibration.
func (s *Store) GetCalibration(ctx context.Context, k CalibrationKey) (CalibrationInfo, error) {
	var out CalibrationInfo
	err := s.read(ctx, func(tx *sql.Tx) error {
		rows, err := tx.QueryContext(ctx, `SELECT `+calibrationColumns+` FROM calibrations WHERE sha256 = ? AND worker = ? AND skip = ?`,
			k.SHA256, k.Worker, k.Skip)
		if err != nil {
			return err
		}
		list, err := scanCalibrations(rows)
		if err != nil {
			return err
		}
		if len(list) == 0 {
			return noCalibration(k)
		}
		out = list[0]
		return nil
	})
	if err != nil {
		return CalibrationInfo{}, fmt.Errorf("store: get calibration %s: %w", k.SHA256, err)
	}
	return out, nil
}

// CalibrationContent returns the input of a calibration.
func (s *Store) CalibrationContent(ctx context.Context, k CalibrationKey) ([]byte, error) {
	var compressed []byte
	err := s.read(ctx, func(tx *sql.Tx) error {
		err := tx.QueryRowContext(ctx, `SELECT cc.content_gzip FROM calibrations c
			JOIN calibration_contents cc ON cc.sha256 = c.sha256
			WHERE c.sha256 = ? AND c.worker = ? AND c.skip = ?`,
			k.SHA256, k.Worker, k.Skip).Scan(&compressed)
		if errors.Is(err, sql.ErrNoRows) {
			return noCalibration(k)
		}
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("store: read calibration %s: %w", k.SHA256, err)
	}
	content, err := gunzipBytes(compressed)
	if err != nil {
		return nil, fmt.Errorf("store: read calibration %s: decompress: %w", k.SHA256, err)
	}
	return content, nil
}

// ListCalibrations lists the newest calibrations first, at most limit (1 to 1000).
func (s *Store) ListCalibrations(ctx context.Context, limit int) ([]CalibrationInfo, error) {
	limit = min(max(limit, 1), 1000)
	var out []CalibrationInfo
	err := s.read(ctx, func(tx *sql.Tx) error {
		rows, err := tx.QueryContext(ctx, `SELECT `+calibrationColumns+` FROM calibrations
			ORDER BY created_at DESC, sha256, worker, skip LIMIT ?`, limit)
		if err != nil {
			return err
		}
		out, err = scanCalibrations(rows)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("store: list calibrations: %w", err)
	}
	return out, nil
}

func scanCalibrations(rows *sql.Rows) ([]CalibrationInfo, error) {
	defer rows.Close()
	var out []CalibrationInfo
	for rows.Next() {
		var (
			c       CalibrationInfo
			created sql.NullInt64
		)
		if err := rows.Scan(&c.SHA256, &c.Worker, &c.Skip, &c.Name, &c.SizeBytes, &c.Passes, &c.ResultJSON, &created); err != nil {
			return nil, err
		}
		c.CreatedAt = fromNullUnixMS(created)
		out = append(out, c)
	}
	return out, rows.Err()
}

func noCalibration(k CalibrationKey) error {
	return fmt.Errorf("no calibration has sha256 %s with worker %q and skip %d; upload the FPM file on the Calibrate page: %w",
		k.SHA256, k.Worker, k.Skip, ErrNotFound)
}

// CalibrationStorage is the size of the stored calibration inputs (uncompressed bytes, each
// content counted once), and whether content with this sha256 is stored already
// (storing it again then costs nothing).
func (s *Store) CalibrationStorage(ctx context.Context, sha string) (bytes int64, stored bool, err error) {
	err = s.read(ctx, func(tx *sql.Tx) error {
		if err := tx.QueryRowContext(ctx, `SELECT CAST(COALESCE(SUM(size_bytes), 0) AS BIGINT) FROM calibration_contents`).Scan(&bytes); err != nil {
			return err
		}
		var n int
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM calibration_contents WHERE sha256 = ?`, sha).Scan(&n); err != nil {
			return err
		}
		stored = n > 0
		return nil
	})
	if err != nil {
		return 0, false, fmt.Errorf("store: calibration storage: %w", err)
	}
	return bytes, stored, nil
}

// DeleteCalibrations removes the input with this sha256 and every calibration fitted from it
// (all workers and skips), in one transaction, so the space counts no longer against the
// stored-inputs cap (CalibrationStorage) or its uploader's quota (UsageOf). It returns how many
// calibrations it removed; ErrNotFound when nothing has this sha256.
func (s *Store) DeleteCalibrations(ctx context.Context, sha string) (removed int, err error) {
	if err := checkSHA256(sha); err != nil {
		return 0, fmt.Errorf("store: delete calibrations: %w", err)
	}
	err = s.write(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `DELETE FROM calibrations WHERE sha256 = ?`, sha)
		if err != nil {
			return err
		}
		n, err := res.RowsAffected()
		if err != nil {
			return err
		}
		content, err := tx.ExecContext(ctx, `DELETE FROM calibration_contents WHERE sha256 = ?`, sha)
		if err != nil {
			return err
		}
		c, err := content.RowsAffected()
		if err != nil {
			return err
		}
		if n == 0 && c == 0 {
			return fmt.Errorf("no calibration has sha256 %s: %w", sha, ErrNotFound)
		}
		removed = int(n)
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("store: delete calibrations %s: %w", sha, err)
	}
	return removed, nil
}
