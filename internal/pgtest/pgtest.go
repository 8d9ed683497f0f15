// Package pgtest starts a private, throwaway PostgreSQL 15 cluster for tests: initdb in a
// temporary directory, the server listening only on a Unix socket in that directory (so
// clusters of packages tested at the same time never fight over a port), fsync off.
//
// It uses the server binaries of Debian's postgresql-15 package (/usr/lib/postgresql/15/bin,
// or $SCALEIN_PG_BIN). As root, initdb and the server run as the postgres user (runuser), as
// PostgreSQL refuses to run as root. Without the binaries, tests skip with a message, except
// under CI=true, where they fail: CI must test PostgreSQL.
package pgtest

import (
	"bytes"
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	// Registers the "pgx" database/sql driver used to create databases.
	_ "github.com/jackc/pgx/v5/stdlib"
)

// DefaultBinDir is where Debian's postgresql-15 package puts the server binaries.
const DefaultBinDir = "/usr/lib/postgresql/15/bin"

// EnvDSN names the variable through which a parent test hands a running cluster's base URL to
// a child process (see the store's TestPostgres).
const EnvDSN = "SCALEIN_TEST_POSTGRES"

// Cluster is one running private server.
type Cluster struct {
	Dir    string // holds data/, the socket and server.log
	binDir string
	asUser string // "postgres" when the caller is root, "" otherwise
}

func binDir() string {
	if d := os.Getenv("SCALEIN_PG_BIN"); d != "" {
		return d
	}
	return DefaultBinDir
}

// Available says whether a cluster can be started here, and why not.
func Available() error {
	dir := binDir()
	for _, b := range []string{"initdb", "pg_ctl", "postgres"} {
		if _, err := os.Stat(filepath.Join(dir, b)); err != nil {
			return fmt.Errorf("PostgreSQL server binaries not found in %s (%v); install Debian's postgresql-15 package (apt-get install postgresql-15) or set SCALEIN_PG_BIN", dir, err)
		}
	}
	if os.Geteuid() == 0 {
		if _, err := user.Lookup("postgres"); err != nil {
			return fmt.Errorf("running as root needs a postgres user to run the server as: %v", err)
		}
	}
	return nil
}

// SkipOrFail skips the test with reason, or fails it under CI=true.
func SkipOrFail(tb testing.TB, reason error) {
	tb.Helper()
	if os.Getenv("CI") == "true" {
		tb.Fatalf("PostgreSQL tests cannot run, and CI=true requires them: %v", reason)
	}
	tb.Skipf("skipping the PostgreSQL tests: %v", reason)
}

// SlowOnly skips a PostgreSQL test that takes most of a minute (a whole suite run again on
// PostgreSQL, or a rescue delay waited out) unless SCALEIN_SLOW=1: the slow run, which CI does,
// runs it, and the everyday run stays under a minute. The everyday run keeps the quick
// PostgreSQL tests.
func SlowOnly(tb testing.TB, what string) {
	tb.Helper()
	if os.Getenv("SCALEIN_SLOW") != "1" {
		tb.Skipf("%s: SCALEIN_SLOW=1 (the slow run, which CI does) runs it", what)
	}
}

// Require starts a cluster for the test and stops it when the test ends; without the server
// binaries it skips (fails under CI=true).
func Require(tb testing.TB) *Cluster {
	tb.Helper()
	if err := Available(); err != nil {
		SkipOrFail(tb, err)
	}
	c, err := Start()
	if err != nil {
		tb.Fatalf("start PostgreSQL: %v", err)
	}
	tb.Cleanup(func() {
		if err := c.Stop(); err != nil {
			tb.Logf("stop PostgreSQL: %v", err)
		}
	})
	return c
}

// Start initialises and starts a cluster. Stop it with Stop.
func Start() (*Cluster, error) {
	if err := Available(); err != nil {
		return nil, err
	}
	// A short path: a Unix socket path must fit in about 100 bytes.
	dir, err := os.MkdirTemp("", "scalein-pg-")
	if err != nil {
		return nil, err
	}
	c := &Cluster{Dir: dir, binDir: binDir()}
	if os.Geteuid() == 0 {
		c.asUser = "postgres"
		u, err := user.Lookup("postgres")
		if err != nil {
			return nil, err
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		if err := os.Chown(dir, uid, gid); err != nil {
			return nil, fmt.Errorf("chown %s to postgres: %w", dir, err)
		}
	}
	data := filepath.Join(dir, "data")
	if out, err := c.cmd("initdb", "-D", data, "-U", "postgres", "--auth=trust", "--no-sync", "-E", "UTF8").CombinedOutput(); err != nil {
		_ = os.RemoveAll(dir)
		return nil, fmt.Errorf("initdb: %v\n%s", err, out)
	}
	if err := c.start(); err != nil {
		_ = os.RemoveAll(dir)
		return nil, err
	}
	return c, nil
}

func (c *Cluster) start() error {
	data := filepath.Join(c.Dir, "data")
	opts := fmt.Sprintf("-k %s -c listen_addresses='' -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=300", c.Dir)
	if out, err := c.cmd("pg_ctl", "-D", data, "-l", filepath.Join(c.Dir, "server.log"), "-o", opts, "-w", "-t", "60", "start").CombinedOutput(); err != nil {
		log, _ := os.ReadFile(filepath.Join(c.Dir, "server.log"))
		return fmt.Errorf("pg_ctl start: %v\n%s\n%s", err, out, log)
	}
	return nil
}

// Pause stops the server as an outage would (pg_ctl stop -m fast: open connections are cut),
// keeping its data; Resume starts it again on the same socket.
func (c *Cluster) Pause() error {
	out, err := c.cmd("pg_ctl", "-D", filepath.Join(c.Dir, "data"), "-m", "fast", "-w", "stop").CombinedOutput()
	if err != nil {
		return fmt.Errorf("pg_ctl stop: %v\n%s", err, bytes.TrimSpace(out))
	}
	return nil
}

// Resume starts a paused server again.
func (c *Cluster) Resume() error { return c.start() }

func (c *Cluster) cmd(name string, args ...string) *exec.Cmd {
	bin := filepath.Join(c.binDir, name)
	if c.asUser != "" {
		return exec.Command("runuser", append([]string{"-u", c.asUser, "--", bin}, args...)...)
	}
	return exec.Command(bin, args...)
}

// Stop stops the server at once and removes its directory.
func (c *Cluster) Stop() error {
	out, err := c.cmd("pg_ctl", "-D", filepath.Join(c.Dir, "data"), "-m", "immediate", "-w", "stop").CombinedOutput()
	if err != nil {
		err = fmt.Errorf("pg_ctl stop: %v\n%s", err, bytes.TrimSpace(out))
	}
	return errors.Join(err, os.RemoveAll(c.Dir))
}

// DSN is the URL of database db on the cluster.
func (c *Cluster) DSN(db string) string { return DSNAt(c.Dir, db) }

// DSNAt is the URL of database db on a cluster whose socket is in dir.
func DSNAt(dir, db string) string {
	return "postgres://postgres@localhost/" + url.PathEscape(db) + "?host=" + url.QueryEscape(dir) + "&sslmode=disable"
}

// NewDatabase gives the test an empty namespace of its own on the cluster and returns its URL:
// a fresh schema in database postgres, named by the URL's search_path (creating a schema takes
// a millisecond; creating a database, about a second).
func (c *Cluster) NewDatabase(tb testing.TB) string {
	tb.Helper()
	dsn, err := CreateSchema(c.DSN("postgres"), "")
	if err != nil {
		tb.Fatal(err)
	}
	return dsn
}

// CreateSchema creates schema name (a random one when empty) through the server that baseDSN
// reaches, unless it exists, and returns baseDSN with search_path set to it, so that everything
// a store opened on that URL creates lands in the schema.
func CreateSchema(baseDSN, name string) (string, error) {
	if name == "" {
		var b [8]byte
		_, _ = rand.Read(b[:])
		name = "t_" + hex.EncodeToString(b[:])
	}
	u, err := url.Parse(baseDSN)
	if err != nil {
		return "", fmt.Errorf("pgtest: parse %q: %w", baseDSN, err)
	}
	db, err := sql.Open("pgx", baseDSN)
	if err != nil {
		return "", err
	}
	defer db.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := db.ExecContext(ctx, `CREATE SCHEMA IF NOT EXISTS "`+name+`"`); err != nil {
		return "", fmt.Errorf("pgtest: create schema %s: %w", name, err)
	}
	q := u.Query()
	q.Set("search_path", name)
	u.RawQuery = q.Encode()
	return u.String(), nil
}

// SlowCommits makes every transaction that inserted into one of tables (in the schema that
// dsn's search_path names) pause for d as it commits, after its other statements, through a
// deferred constraint trigger that calls pg_sleep. A write that counts rows and then inserts
// (a quota, a queue bound) thus keeps its insert invisible for d after its count: without a
// lock that makes such writes one at a time, every other write counting meanwhile misses it,
// so a test of the count fails on each run rather than when the scheduler happens to
// interleave the transactions.
func SlowCommits(tb testing.TB, dsn string, d time.Duration, tables ...string) {
	tb.Helper()
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		tb.Fatal(err)
	}
	defer db.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	stmts := []string{fmt.Sprintf(`CREATE OR REPLACE FUNCTION pgtest_slow_commit() RETURNS trigger LANGUAGE plpgsql AS
		$$ BEGIN PERFORM pg_sleep(%g); RETURN NULL; END $$`, d.Seconds())}
	for _, t := range tables {
		stmts = append(stmts, fmt.Sprintf(`CREATE CONSTRAINT TRIGGER pgtest_slow_commit AFTER INSERT ON %q
			DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION pgtest_slow_commit()`, t))
	}
	for _, s := range stmts {
		if _, err := db.ExecContext(ctx, s); err != nil {
			tb.Fatalf("pgtest: slow commits: %v", err)
		}
	}
}
