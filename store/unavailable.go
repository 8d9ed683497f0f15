package store

import (
	"context"
	"database/sql/driver"
	"errors"
	"io"
	"net"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/mattn/go-sqlite3"
)

// IsUnavailable reports whether err means the database could not be reached or could not serve
// the request for now (a PostgreSQL server stopped, restarting or out of connections, a broken
// connection, a SQLite file locked past the busy timeout, a PostgreSQL write that conflicted
// with concurrent ones past its retries: ErrBusy), as opposed to a bug or a bad
// request: the same request may succeed once the database is back. The web layer answers it
// with 503 and Retry-After, and a run's attempt lost to it is not counted against the run.
func IsUnavailable(err error) bool {
	if err == nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false // a request that ended, not a database that did (context errors are net.Errors)
	}
	if IsBusy(err) {
		return true // writes that lost to concurrent ones, as SQLite's busy below
	}
	var connectErr *pgconn.ConnectError
	var pgErr *pgconn.PgError
	var netErr net.Error
	var liteErr sqlite3.Error
	switch {
	case errors.As(err, &connectErr), errors.As(err, &netErr):
		return true
	case errors.As(err, &pgErr):
		// Class 08: connection exception; 57P01–57P03: the server is shutting down or
		// starting; 53300: too many connections.
		return strings.HasPrefix(pgErr.Code, "08") || pgErr.Code == "57P01" || pgErr.Code == "57P02" ||
			pgErr.Code == "57P03" || pgErr.Code == "53300"
	case errors.As(err, &liteErr):
		return liteErr.Code == sqlite3.ErrBusy || liteErr.Code == sqlite3.ErrLocked
	case errors.Is(err, driver.ErrBadConn), errors.Is(err, io.ErrUnexpectedEOF):
		return true
	}
	// pgx reports a connection closed under a query by message only.
	msg := err.Error()
	return strings.Contains(msg, "conn closed") || strings.Contains(msg, "failed to connect to")
}

// IsBusy reports whether err is a PostgreSQL write that lost to concurrent writes (ErrBusy, or
// a serialization failure or deadlock from a transaction that is not retried, such as the job
// queue's): the database is up, and the same request may succeed a moment later.
func IsBusy(err error) bool {
	return errors.Is(err, ErrBusy) || isConflict(err)
}
