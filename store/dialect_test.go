package store

import "testing"

func TestRebind(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{`SELECT 1`, `SELECT 1`},
		{`SELECT a FROM t WHERE id = ? AND b = ?`, `SELECT a FROM t WHERE id = $1 AND b = $2`},
		{`UPDATE t SET s = '?', x = ? WHERE "q?" = ?`, `UPDATE t SET s = '?', x = $1 WHERE "q?" = $2`},
		// Already PostgreSQL's placeholders (goose, River): left alone, including the jsonb ? operator.
		{`SELECT id FROM river_job WHERE id = any($1::bigint[]) AND metadata ? 'cancel_attempted_at'`,
			`SELECT id FROM river_job WHERE id = any($1::bigint[]) AND metadata ? 'cancel_attempted_at'`},
	} {
		if got := rebind(c.in); got != c.want {
			t.Errorf("rebind(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestRedactDSN(t *testing.T) {
	if got := RedactDSN("postgres://u:secret@h/db"); got != "postgres://u:xxxxx@h/db" {
		t.Errorf("RedactDSN = %q", got)
	}
	if got := RedactDSN("./data/scalein.db"); got != "./data/scalein.db" {
		t.Errorf("RedactDSN of a path = %q", got)
	}
}
