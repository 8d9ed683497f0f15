package store

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"regexp"
	"time"
)

// MaxOriginBytes bounds a stored origin (an imported manifest as hpa.Origin JSON).
const MaxOriginBytes = 4 << 20

var originKeyPattern = regexp.MustCompile(`^[0-9a-f]{64}$`)

// IsOriginKey reports whether key has the form PutOrigin returns.
func IsOriginKey(key string) bool { return originKeyPattern.MatchString(key) }

// OriginTTL is how long an origin is kept after its last import. Origins are the glue between
// a web import, the runs made from its form and a plan made from such a run (the plan keeps its
// own copy), referenced only by keys in links and forms, so nothing else says when one is no
// longer wanted; without an end, every import of up to 4 MiB would be kept for ever. A link
// older than this still works: the plan form then says the download's names are placeholders
// and offers the import again.
const OriginTTL = 30 * 24 * time.Hour

// PutOrigin stores an imported manifest's origin (hpa.Origin as JSON, checked by the caller)
// under the SHA-256 of its bytes and returns that key; storing the same bytes again only
// renews it. It deletes the origins last imported more than OriginTTL before now.
func (s *Store) PutOrigin(ctx context.Context, originJSON []byte, now time.Time) (string, error) {
	if len(originJSON) == 0 || len(originJSON) > MaxOriginBytes {
		return "", fmt.Errorf("store: origin of %d bytes: 1 to %d: %w", len(originJSON), MaxOriginBytes, ErrInvalid)
	}
	sum := sha256.Sum256(originJSON)
	key := hex.EncodeToString(sum[:])
	err := s.write(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `INSERT INTO origins (key, origin_json, created_at) VALUES (?, ?, ?)
			ON CONFLICT (key) DO UPDATE SET created_at = excluded.created_at`, key, originJSON, toUnixMS(now)); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `DELETE FROM origins WHERE created_at < ?`, toUnixMS(now.Add(-OriginTTL)))
		return err
	})
	if err != nil {
		return "", fmt.Errorf("store: put origin: %w", err)
	}
	return key, nil
}

// GetOrigin returns the origin stored under key (ErrNotFound when there is none).
func (s *Store) GetOrigin(ctx context.Context, key string) ([]byte, error) {
	if !IsOriginKey(key) {
		return nil, fmt.Errorf("store: origin %q: %w", key, ErrNotFound)
	}
	var out []byte
	err := s.read(ctx, func(tx *sql.Tx) error {
		return tx.QueryRowContext(ctx, `SELECT origin_json FROM origins WHERE key = ?`, key).Scan(&out)
	})
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("store: origin %q: %w", key, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("store: get origin: %w", err)
	}
	return out, nil
}
