package store_test

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/scalein-planner/scalein/internal/pgtest"
	"github.com/scalein-planner/scalein/migrations"
)

// onPostgres is the base URL of the PostgreSQL cluster this test process runs the suite
// against, or "" on SQLite (the default). TestPostgres sets it for a child process.
var onPostgres = os.Getenv(pgtest.EnvDSN)

// dbTarget maps a SQLite path of a test to what store.Open gets: the path itself on SQLite, or
// on PostgreSQL the URL of a schema named after the path (created on first use), so a test
// that reopens "the same file" reopens the same tables.
func dbTarget(tb testing.TB, path string) string {
	tb.Helper()
	if onPostgres == "" {
		return path
	}
	sum := sha256.Sum256([]byte(path))
	dsn, err := pgtest.CreateSchema(onPostgres, "s_"+hex.EncodeToString(sum[:12]))
	require.NoError(tb, err)
	return dsn
}

// sqliteOnly skips a test about SQLite files when the suite runs on PostgreSQL.
func sqliteOnly(t *testing.T) {
	t.Helper()
	if onPostgres != "" {
		t.Skip("about SQLite files; not applicable on PostgreSQL")
	}
}

// TestPostgres runs this package's whole test suite again, unchanged, against a private
// PostgreSQL 15 cluster: it starts the cluster and re-executes the test binary with the
// cluster's URL in SCALEIN_TEST_POSTGRES, which makes every store the tests open a fresh
// PostgreSQL schema.
func TestPostgres(t *testing.T) {
	if onPostgres != "" {
		t.Skip("already the PostgreSQL run")
	}
	if testing.Short() {
		t.Skip("-short")
	}
	pgtest.SlowOnly(t, "the whole store suite again on PostgreSQL (about a minute)")
	cluster := pgtest.Require(t)
	args := []string{"-test.v", "-test.skip", "^TestPostgres$", "-test.count", "1"}
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), pgtest.EnvDSN+"="+cluster.DSN("postgres"))
	out, err := cmd.CombinedOutput()
	passed, skipped, failed := countResults(out)
	if err != nil || failed > 0 {
		t.Fatalf("the store suite on PostgreSQL failed (%v): %d passed, %d failed\n%s", err, passed, failed, out)
	}
	require.Greater(t, passed, 20, "the PostgreSQL run must run the suite:\n%s", out)
	t.Logf("store suite on PostgreSQL 15: %d passed, %d skipped (SQLite file tests), 0 failed", passed, skipped)
}

var resultLine = regexp.MustCompile(`^\s*--- (PASS|FAIL|SKIP): `)

func countResults(out []byte) (passed, skipped, failed int) {
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		m := resultLine.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		switch m[1] {
		case "PASS":
			passed++
		case "SKIP":
			skipped++
		case "FAIL":
			failed++
		}
	}
	return passed, skipped, failed
}

// TestMigrationTwins checks that the SQLite and PostgreSQL migration sets have the same files
// (same version numbers and names), so neither dialect lacks a migration.
func TestMigrationTwins(t *testing.T) {
	list := func(fsys fs.FS, dir string) []string {
		entries, err := fs.ReadDir(fsys, dir)
		require.NoError(t, err)
		var names []string
		for _, e := range entries {
			if !e.IsDir() && strings.HasSuffix(e.Name(), ".sql") {
				names = append(names, e.Name())
			}
		}
		slices.Sort(names)
		return names
	}
	sqlite := list(migrations.FS, ".")
	postgres := list(migrations.Postgres, "postgres")
	require.NotEmpty(t, sqlite)
	assert.Equal(t, sqlite, postgres, "every migrations/NNNNN_x.sql needs its twin migrations/postgres/NNNNN_x.sql with the same name, and the other way round")
	for _, name := range postgres {
		b, err := fs.ReadFile(migrations.Postgres, filepath.ToSlash(filepath.Join("postgres", name)))
		require.NoError(t, err)
		assert.Contains(t, string(b), "-- +goose Up", name)
		assert.NotContains(t, string(b), "STRICT", "%s: STRICT is SQLite only", name)
		assert.NotContains(t, string(b), "BLOB", "%s: PostgreSQL has BYTEA, not BLOB", name)
	}
}
