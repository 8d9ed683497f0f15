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

// PutOrigin stores an imported manifest's origin (hpa.Origin as JSON, checked by the caller)
// under the SHA-256 of its bytes and returns that key; storing the same bytes again changes
// nothing.
func (s *Store) PutOrigin(ctx context.Context, originJSON []byte, now time.Time) (string, error) {
	if len(originJSON) == 0 || len(originJSON) > MaxOriginBytes {
		return "", fmt.Errorf("store: origin of %d bytes: 1 to %d: %w", len(originJSON), MaxOriginBytes, ErrInvalid)
	}
	sum := sha256.Sum256(originJSON)
	key := hex.EncodeToString(sum[:])
	err := s.write(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO origins (key, origin_json, created_at) VALUES (?, ?, ?)
			ON CONFLICT (key) DO NOTHING`, key, originJSON, toUnixMS(now))
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
