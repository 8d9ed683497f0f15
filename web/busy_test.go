package web

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/stretchr/testify/assert"

	"github.com/scalein-planner/scalein/store"
)

// A write that lost to concurrent writes (the store's retries ran out, or a transaction that
// is not retried hit a serialization failure or deadlock) is a 503 with Retry-After: the
// database is up and the request can be sent again. The soak test of issue 29 saw it as a 500.
func TestConflictingWritesAreServiceUnavailable(t *testing.T) {
	serialization := &pgconn.PgError{Code: "40001", Message: "could not serialize access due to read/write dependencies among transactions"}
	for name, err := range map[string]error{
		"retries ran out": fmt.Errorf("submit: store: submit runs: %w", fmt.Errorf("%w: 50 attempts conflicted with concurrent writes: %w", store.ErrBusy, serialization)),
		"serialization":   fmt.Errorf("queue: %w", serialization),
		"deadlock":        &pgconn.PgError{Code: "40P01", Message: "deadlock detected"},
	} {
		t.Run(name, func(t *testing.T) {
			p := problemOf(err)
			assert.Equal(t, http.StatusServiceUnavailable, p.Status)
			assert.Equal(t, dbBusyRetryAfterSeconds, p.RetryAfter)
			assert.Contains(t, p.Message, "send it again")
		})
	}
}
