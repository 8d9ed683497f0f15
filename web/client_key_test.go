package web

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/go-chi/chi/v5/middleware"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// requestAs is a request from addr that identify let through as user ("" without identities).
func requestAs(user, addr string) *http.Request {
	req := httptest.NewRequest(http.MethodGet, "/runs/aaaaaaaaaaaaaaaa/events", nil)
	req.RemoteAddr = addr
	ctx := req.Context()
	if user != "" {
		ctx = context.WithValue(ctx, identityKey{}, identity{user: user})
	}
	var out *http.Request
	middleware.ClientIPFromRemoteAddr(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) { out = r })).
		ServeHTTP(httptest.NewRecorder(), req.WithContext(ctx))
	return out
}

// Finding M3: behind the auth proxy every user comes from one address; the progress-stream cap
// counts per user there, and per address without identities.
func TestStreamCapIsPerUserBehindTheProxy(t *testing.T) {
	p := newStreamCounts()
	proxy := "192.0.2.1:5000"
	var closers []func()
	for range maxStreamsPerClient {
		c, ok := p.open(requestAs("alice", proxy))
		require.True(t, ok)
		closers = append(closers, c)
	}
	_, ok := p.open(requestAs("alice", proxy))
	assert.False(t, ok, "alice has her maximum")
	c, ok := p.open(requestAs("bob", proxy))
	assert.True(t, ok, "bob, through the same proxy, has his own streams")
	c()

	// Without identities, the cap is the address's.
	for range maxStreamsPerClient {
		c, ok := p.open(requestAs("", "198.51.100.7:1"))
		require.True(t, ok)
		closers = append(closers, c)
	}
	_, ok = p.open(requestAs("", "198.51.100.7:2"))
	assert.False(t, ok)
	_, ok = p.open(requestAs("", "198.51.100.8:1"))
	assert.True(t, ok)

	for _, c := range closers {
		c()
	}
	_, ok = p.open(requestAs("alice", proxy))
	assert.True(t, ok, "closed streams free the cap")
}

func TestClientKey(t *testing.T) {
	assert.Equal(t, "user:alice", clientKey(requestAs("alice", "192.0.2.1:5000")))
	assert.Equal(t, "198.51.100.7", clientKey(requestAs("", "198.51.100.7:1")))
}
