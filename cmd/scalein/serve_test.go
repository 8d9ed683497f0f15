package main

import (
	"bytes"
	"context"
	"net/http"
	"path/filepath"
	"regexp"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// syncBuffer lets the test read what runServe writes from another goroutine.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func TestServeStartsLogsURLAndStopsCleanly(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stdout, stderr syncBuffer
	db := filepath.Join(t.TempDir(), "nested", "serve.db")
	done := make(chan int, 1)
	go func() {
		done <- runServe(ctx, []string{"-addr", "127.0.0.1:0", "-db", db, "-workers", "1"}, &stdout, &stderr)
	}()

	urlPattern := regexp.MustCompile(`http://127\.0\.0\.1:\d+/`)
	var base string
	require.Eventually(t, func() bool {
		base = urlPattern.FindString(stdout.String())
		return base != ""
	}, 20*time.Second, 10*time.Millisecond, "no URL logged; stderr: %s", stderr.String())

	resp, err := http.Get(base + "healthz")
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusOK, resp.StatusCode)

	cancel()
	select {
	case code := <-done:
		assert.Equal(t, 0, code, stderr.String())
	case <-time.After(20 * time.Second):
		t.Fatal("serve did not stop after its context was cancelled")
	}
}

func TestServeRejectsBadFlags(t *testing.T) {
	var stdout, stderr syncBuffer
	assert.Equal(t, 2, runServe(context.Background(), []string{"-nope"}, &stdout, &stderr))
	assert.Equal(t, 2, runServe(context.Background(), []string{"extra"}, &stdout, &stderr))
}

// Issue 19 L5: a limit set to 0 or less, or a plan bound beyond the planner's own, is refused at
// start-up (it used to start with the bound silently removed).
func TestServeRefusesUnboundedLimits(t *testing.T) {
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"-queue", "0"}, "-queue must be at least 1"},
		{[]string{"-queue", "-5"}, "-queue must be at least 1"},
		{[]string{"-runs-per-minute", "0"}, "-runs-per-minute must be at least 1"},
		{[]string{"-max-sweep-points", "0"}, "-max-sweep-points must be at least 1"},
		{[]string{"-max-plan-runs", "5000"}, "-max-plan-runs must be between 2 and 1000"},
		{[]string{"-max-plan-runs", "1"}, "-max-plan-runs must be between 2 and 1000"},
	}
	for _, tc := range cases {
		var stdout, stderr syncBuffer
		db := filepath.Join(t.TempDir(), "s.db")
		code := runServe(context.Background(), append([]string{"-addr", "127.0.0.1:0", "-db", db}, tc.args...), &stdout, &stderr)
		assert.Equal(t, 2, code, tc.args)
		assert.Contains(t, stderr.String(), tc.want, tc.args)
	}
}
