package web

import (
	"bufio"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/scalein-planner/scalein/runs"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// countingListener counts the bytes the server reads from every connection it accepts.
type countingListener struct {
	net.Listener
	read *atomic.Int64
}

func (l countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return countingConn{Conn: c, read: l.read}, nil
}

type countingConn struct {
	net.Conn
	read *atomic.Int64
}

func (c countingConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	c.read.Add(int64(n))
	return n, err
}

// serveCounting serves h on a real listener whose connections count what the server reads.
func serveCounting(t *testing.T, h http.Handler) (addr string, read *atomic.Int64) {
	t.Helper()
	read = new(atomic.Int64)
	ts := httptest.NewUnstartedServer(h)
	ts.Listener = countingListener{Listener: ts.Listener, read: read}
	ts.Start()
	t.Cleanup(ts.Close)
	return ts.Listener.Addr().String(), read
}

// sendBig sends a request of path with a body of size bytes (declared by Content-Length, or
// chunked) from a raw connection, writing the body as fast as the server takes it while it reads
// the answer; it returns the answer once it has arrived and the connection is closed.
func sendBig(t *testing.T, addr, method, path string, size int64, chunked bool, header map[string]string) *http.Response {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	head := fmt.Sprintf("%s %s HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\n", method, path, addr)
	if chunked {
		head += "Transfer-Encoding: chunked\r\n"
	} else {
		head += fmt.Sprintf("Content-Length: %d\r\n", size)
	}
	for k, v := range header {
		head += k + ": " + v + "\r\n"
	}
	_, err = io.WriteString(conn, head+"\r\n")
	require.NoError(t, err)

	var wg sync.WaitGroup
	wg.Add(1)
	go func() { // the body, until it is all sent or the server closes the connection
		defer wg.Done()
		chunk := make([]byte, 64<<10)
		for i := range chunk {
			chunk[i] = ' '
		}
		for sent := int64(0); sent < size; sent += int64(len(chunk)) {
			var err error
			if chunked {
				_, err = fmt.Fprintf(conn, "%x\r\n%s\r\n", len(chunk), chunk)
			} else {
				_, err = conn.Write(chunk)
			}
			if err != nil {
				return
			}
		}
		if chunked {
			_, _ = io.WriteString(conn, "0\r\n\r\n")
		}
	}()
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	require.NoError(t, err)
	_, _ = io.Copy(io.Discard, resp.Body)
	_ = resp.Body.Close()
	_ = conn.Close() // stops the writer if the server has not closed the connection already
	wg.Wait()
	return resp
}

// unreadBound is the most of a refused body the server may read: what one read of the
// connection's buffer brings in with the headers, with room to spare (net/http reads in 4 KiB,
// the body's first bytes can arrive with the headers). A server that buffered or drained the
// 100 MB would exceed it 100 times over.
const unreadBound = 1 << 20

// TestRefusedBodiesAreNotRead replays finding H1 of the 2026-12c probe: a large body to a route
// that takes none, or refused by a gate, is answered without reading it, and the connection is
// closed instead of drained.
func TestRefusedBodiesAreNotRead(t *testing.T) {
	const size = 100 << 20
	// A logger that writes its lines: httplog skips its body hooks for a disabled one.
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	open := newFakeServer(t, runs.Config{Logger: logger}, false)
	openAddr, openRead := serveCounting(t, open.Handler())
	// Identities from a proxy at 10.0.0.0/8: the test's 127.0.0.1 is a stranger.
	guarded := newAccessServer(t, runs.Config{Logger: logger}, Access{UserHeader: "X-Forwarded-User",
		TrustedProxies: []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")}}, 0)
	guardedAddr, guardedRead := serveCounting(t, guarded.Handler())

	cases := []struct {
		name, addr, method, path string
		read                     *atomic.Int64
		size                     int64
		chunked                  bool
		status                   int
	}{
		{"livez, declared length", openAddr, http.MethodPost, "/livez", openRead, size, false, http.StatusMethodNotAllowed},
		{"livez, chunked", openAddr, http.MethodPost, "/livez", openRead, size, true, http.StatusMethodNotAllowed},
		{"no such page", openAddr, http.MethodPut, "/nowhere", openRead, size, false, http.StatusNotFound},
		{"untrusted address, declared length", guardedAddr, http.MethodPost, "/api/v1/runs", guardedRead, size, false, http.StatusForbidden},
		{"untrusted address, chunked", guardedAddr, http.MethodPost, "/api/v1/runs", guardedRead, size, true, http.StatusForbidden},
		// A declared length over the route's limit is refused before its first byte.
		{"over the body limit, declared", openAddr, http.MethodPost, "/api/v1/runs", openRead, 1 << 40, false, http.StatusRequestEntityTooLarge},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			before := c.read.Load()
			resp := sendBig(t, c.addr, c.method, c.path, c.size, c.chunked, nil)
			require.Equal(t, c.status, resp.StatusCode)
			read := c.read.Load() - before
			require.Less(t, read, int64(unreadBound), "the server read %d bytes of a %d-byte body it refused", read, c.size)
			require.True(t, resp.Close, "the answer to an unread body closes the connection (Connection: close)")
		})
	}
}

// TestReadBodiesKeepTheConnection: a body the handler reads to its end leaves the connection
// open for the next request (closeUnread closes only what was left unread).
func TestReadBodiesKeepTheConnection(t *testing.T) {
	s := newFakeServer(t, runs.Config{}, false)
	addr, _ := serveCounting(t, s.Handler())
	resp, err := http.Post("http://"+addr+"/api/v1/runs", "application/json", strings.NewReader(testScenario("keep")))
	require.NoError(t, err)
	_, _ = io.Copy(io.Discard, resp.Body)
	_ = resp.Body.Close()
	require.Equal(t, http.StatusAccepted, resp.StatusCode)
	require.False(t, resp.Close, "a body read to its end keeps the connection")
}

// syncBuffer is a log destination the server writes from its goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestClientThatWentAwayIsNotAServerError replays finding L4 of the 2026-12c probe: uploads
// whose clients close the connection after a few bytes are logged as the client's doing (400,
// WARN), never as a 503 server error.
func TestClientThatWentAwayIsNotAServerError(t *testing.T) {
	var logs syncBuffer
	logger := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	s := newFakeServer(t, runs.Config{Logger: logger}, false)
	addr, _ := serveCounting(t, s.Handler())
	for _, path := range []string{"/api/v1/calibrations", "/api/v1/runs"} {
		conn, err := net.Dial("tcp", addr)
		require.NoError(t, err)
		_, err = fmt.Fprintf(conn, "POST %s HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: 1000000\r\n\r\n{\"a\":", path, addr)
		require.NoError(t, err)
		require.NoError(t, conn.Close())
	}
	require.Eventually(t, func() bool {
		return strings.Count(logs.String(), "ClientAborted") >= 2
	}, 10*time.Second, 20*time.Millisecond, "both requests logged as the client's:\n%s", logs.String())
	out := logs.String()
	assert.NotContains(t, out, "level=ERROR")
	assert.NotContains(t, out, "HTTP 503")
	assert.NotContains(t, out, "status=503")
	assert.Contains(t, out, "level=WARN")
	assert.Contains(t, out, "HTTP 400")
}
