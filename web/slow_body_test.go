package web

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/scalein-planner/scalein/runs"
)

// slowUpload opens a connection that declares a 50 MB calibration upload and sends a byte
// every 100 ms; it returns the status line the server answers with (or the read error).
func slowUpload(t *testing.T, addr string, answer chan<- string) {
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		answer <- err.Error()
		return
	}
	defer conn.Close()
	fmt.Fprintf(conn, "POST /api/v1/calibrations HTTP/1.1\r\nHost: %s\r\nContent-Type: application/x-ndjson\r\nContent-Length: 50000000\r\n\r\n", addr)
	status := make(chan string, 1)
	go func() {
		line, err := bufio.NewReader(conn).ReadString('\n')
		if err != nil {
			line = err.Error()
		}
		status <- strings.TrimSpace(line)
	}()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case line := <-status:
			answer <- line
			return
		case <-tick.C:
			if _, err := conn.Write([]byte("{")); err != nil {
				answer <- <-status
				return
			}
		}
	}
}

// Finding M4: two slow bodies (the server's two large-body slots) keep no upload out: bodies are
// read before they take a slot, and a body slower than the minimum rate is refused with 408.
func TestSlowBodiesHoldNoUploadSlot(t *testing.T) {
	s := newFakeServer(t, runs.Config{}, false)
	g := s.exports()
	g.uploadWait = time.Second
	g.bodyGrace = 500 * time.Millisecond
	g.minBodyRate = 64 << 10
	srv := httptest.NewServer(s.Handler())
	defer srv.Close()
	defer srv.CloseClientConnections() // first: a slow upload still open must not hold Close
	addr := strings.TrimPrefix(srv.URL, "http://")

	answers := make(chan string, cap(s.bodies.slots))
	for range cap(s.bodies.slots) {
		go slowUpload(t, addr, answers)
	}
	time.Sleep(200 * time.Millisecond) // the slow uploads have started

	start := time.Now()
	resp, err := http.Post(srv.URL+"/api/v1/calibrations", "application/x-ndjson", strings.NewReader(fpmLines(60)))
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusCreated, resp.StatusCode, "a legitimate upload beside two slow ones")
	assert.Less(t, time.Since(start), g.uploadWait, "it waited for no slot")

	for range cap(s.bodies.slots) {
		select {
		case line := <-answers:
			assert.Contains(t, line, "408", "a body slower than the minimum rate")
		case <-time.After(10 * time.Second):
			t.Fatal("a slow upload was never refused")
		}
	}
}

// Finding M4: a big API body waits for a large-body slot no longer than an upload does, then
// answers "uploads are busy" with Retry-After.
func TestBigBodyWaitEnds(t *testing.T) {
	s := newFakeServer(t, runs.Config{}, false)
	s.exports().uploadWait = 100 * time.Millisecond
	for range cap(s.bodies.slots) {
		s.bodies.slots <- struct{}{}
	}
	defer func() {
		for range cap(s.bodies.slots) {
			<-s.bodies.slots
		}
	}()
	body := testScenario("big") + strings.Repeat(" ", bigBodyBytes+1)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	req := httptest.NewRequestWithContext(ctx, http.MethodPost, "/api/v1/runs", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	rec := do(t, s.Handler(), req)
	assert.Equal(t, http.StatusServiceUnavailable, rec.Code, rec.Body.String())
	assert.Contains(t, rec.Body.String(), "uploads are busy, retry in 10 s")
	assert.Equal(t, "10", rec.Header().Get("Retry-After"))
}
