package store

import (
	"database/sql"
	"time"
)

// Times are stored as unix milliseconds; a zero time.Time is stored as NULL.

func toUnixMS(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return t.UnixMilli()
}

func fromNullUnixMS(v sql.NullInt64) time.Time {
	if !v.Valid {
		return time.Time{}
	}
	return time.UnixMilli(v.Int64).UTC()
}
