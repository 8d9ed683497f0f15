package store

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"net/url"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/stdlib"
)

// Dialects a store can run on.
const (
	DialectSQLite   = "sqlite"
	DialectPostgres = "postgres"
)

// IsPostgresDSN reports whether a -db value names a PostgreSQL database (a postgres:// or
// postgresql:// URL) rather than a SQLite file.
func IsPostgresDSN(target string) bool {
	t := strings.ToLower(strings.TrimSpace(target))
	return strings.HasPrefix(t, "postgres://") || strings.HasPrefix(t, "postgresql://")
}

// RedactDSN hides the password of a PostgreSQL URL so it can be logged; a SQLite path is
// returned as is.
func RedactDSN(target string) string {
	if !IsPostgresDSN(target) {
		return target
	}
	u, err := url.Parse(target)
	if err != nil {
		return "postgres://(unparsable URL)"
	}
	return u.Redacted()
}

// pgDriverName is the database/sql driver the store opens PostgreSQL with: pgx's stdlib driver
// behind a thin wrapper that turns the store's portable '?' placeholders into PostgreSQL's $n,
// so every query in this package (and in packages added later) is written once for both
// dialects.
const pgDriverName = "scalein-pgx"

func init() {
	sql.Register(pgDriverName, rebindDriver{inner: stdlib.GetDefaultDriver()})
}

// rebind turns each '?' placeholder outside quotes into $1, $2, …. A query that already uses
// $n placeholders (goose's and River's own SQL, which may use the jsonb '?' operator) is
// returned unchanged.
func rebind(query string) string {
	if !strings.Contains(query, "?") || hasDollarPlaceholder(query) {
		return query
	}
	var (
		b     strings.Builder
		n     int
		quote byte
	)
	b.Grow(len(query) + 8)
	for i := 0; i < len(query); i++ {
		c := query[i]
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			}
		case c == '\'' || c == '"':
			quote = c
		case c == '?':
			n++
			b.WriteByte('$')
			b.WriteString(strconv.Itoa(n))
			continue
		}
		b.WriteByte(c)
	}
	return b.String()
}

func hasDollarPlaceholder(q string) bool {
	for i := 0; i+1 < len(q); i++ {
		if q[i] == '$' && q[i+1] >= '0' && q[i+1] <= '9' {
			return true
		}
	}
	return false
}

type rebindDriver struct{ inner driver.Driver }

func (d rebindDriver) Open(name string) (driver.Conn, error) {
	c, err := d.inner.Open(name)
	if err != nil {
		return nil, err
	}
	return &rebindConn{inner: c}, nil
}

// rebindConn forwards everything to pgx's connection, rewriting query text on the way.
type rebindConn struct{ inner driver.Conn }

var (
	_ driver.ConnPrepareContext = (*rebindConn)(nil)
	_ driver.ConnBeginTx        = (*rebindConn)(nil)
	_ driver.ExecerContext      = (*rebindConn)(nil)
	_ driver.QueryerContext     = (*rebindConn)(nil)
	_ driver.Pinger             = (*rebindConn)(nil)
	_ driver.NamedValueChecker  = (*rebindConn)(nil)
	_ driver.SessionResetter    = (*rebindConn)(nil)
)

func (c *rebindConn) Prepare(q string) (driver.Stmt, error) { return c.inner.Prepare(rebind(q)) }
func (c *rebindConn) Close() error                          { return c.inner.Close() }

// Begin is required by driver.Conn; database/sql calls BeginTx.
func (c *rebindConn) Begin() (driver.Tx, error) {
	//lint:ignore SA1019 forwarding the deprecated method that driver.Conn still requires
	return c.inner.Begin()
}

func (c *rebindConn) PrepareContext(ctx context.Context, q string) (driver.Stmt, error) {
	if p, ok := c.inner.(driver.ConnPrepareContext); ok {
		return p.PrepareContext(ctx, rebind(q))
	}
	return c.inner.Prepare(rebind(q))
}

func (c *rebindConn) BeginTx(ctx context.Context, opts driver.TxOptions) (driver.Tx, error) {
	if b, ok := c.inner.(driver.ConnBeginTx); ok {
		return b.BeginTx(ctx, opts)
	}
	return nil, errors.New("store: the PostgreSQL driver does not support BeginTx")
}

func (c *rebindConn) ExecContext(ctx context.Context, q string, args []driver.NamedValue) (driver.Result, error) {
	if e, ok := c.inner.(driver.ExecerContext); ok {
		return e.ExecContext(ctx, rebind(q), args)
	}
	return nil, driver.ErrSkip
}

func (c *rebindConn) QueryContext(ctx context.Context, q string, args []driver.NamedValue) (driver.Rows, error) {
	if e, ok := c.inner.(driver.QueryerContext); ok {
		return e.QueryContext(ctx, rebind(q), args)
	}
	return nil, driver.ErrSkip
}

func (c *rebindConn) Ping(ctx context.Context) error {
	if p, ok := c.inner.(driver.Pinger); ok {
		return p.Ping(ctx)
	}
	return nil
}

func (c *rebindConn) CheckNamedValue(v *driver.NamedValue) error {
	if ch, ok := c.inner.(driver.NamedValueChecker); ok {
		return ch.CheckNamedValue(v)
	}
	return driver.ErrSkip
}

func (c *rebindConn) ResetSession(ctx context.Context) error {
	if r, ok := c.inner.(driver.SessionResetter); ok {
		return r.ResetSession(ctx)
	}
	return nil
}

// retryable reports whether a PostgreSQL error means "run the transaction again": a
// serialization failure or deadlock (SERIALIZABLE write transactions), or a unique violation
// from two processes inserting the same content-addressed row at once (the retry then finds
// the row and takes the "exists" path).
func retryable(err error) bool {
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) {
		return false
	}
	switch pgErr.Code {
	case "40001", "40P01", "23505":
		return true
	}
	return false
}

// isConflict reports whether err is PostgreSQL's serialization failure (40001) or deadlock
// (40P01): the transaction lost to a concurrent one and may succeed when run again.
func isConflict(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && (pgErr.Code == "40001" || pgErr.Code == "40P01")
}
