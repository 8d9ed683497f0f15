package main

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fakeProxy stands for oauth2-proxy: it "signs in" whoever the X-Test-Login header names, drops
// any X-Forwarded-User the client sent and sets its own, passes the Host on, and connects to the
// server from
// localIP (all of 127.0.0.0/8 is the loopback on Linux).
func fakeProxy(t *testing.T, target, localIP string) *httptest.Server {
	t.Helper()
	u, err := url.Parse(target)
	require.NoError(t, err)
	dialer := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(localIP)}, Timeout: 5 * time.Second}
	rp := &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) {
			r.SetURL(u)
			r.Out.Host = r.In.Host // as oauth2-proxy's --pass-host-header (its default)
			r.Out.Header.Del("X-Forwarded-User")
			if login := r.In.Header.Get("X-Test-Login"); login != "" {
				r.Out.Header.Set("X-Forwarded-User", login)
			}
		},
		Transport: &http.Transport{DialContext: dialer.DialContext},
	}
	srv := httptest.NewServer(rp)
	t.Cleanup(srv.Close)
	return srv
}

func request(t *testing.T, method, target, login, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(context.Background(), method, target, strings.NewReader(body))
	require.NoError(t, err)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if login != "" {
		req.Header.Set("X-Test-Login", login)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

const proxyTestScenario = `{"name": "behind the proxy",
  "fleet": {"workers": 2, "gpu_blocks": 64, "host_blocks": 0, "block_size": 16, "max_num_seqs": 4,
    "max_batched_tokens": 64, "timing": {"prefill_ms": 2, "decode_ms": 1, "prefill_ms_per_1k_tokens": 0, "decode_ms_per_seq": 0, "decode_ms_per_1k_kv_tokens": 0}},
  "kvcr": {"enabled": false},
  "scale_in": [{"at_ms": 1, "workers": [1]}],
  "workload": {"type": "requests", "requests": [{"id": "a", "at_ms": 0, "blocks": ["A*4"], "output_tokens": 3, "route_to": 1}]}}`

// TestServeBehindAnAuthProxy runs the real command behind a fake authenticating proxy: the user
// header counts from the proxy's address (127.0.0.1) and from nowhere else (127.0.0.2).
func TestServeBehindAnAuthProxy(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: starts a server process")
	}
	probe, err := (&net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP("127.0.0.2")}}).Dial("tcp", "127.0.0.1:1")
	if err != nil && strings.Contains(err.Error(), "assign requested address") {
		t.Skip("127.0.0.2 is not a loopback address here")
	}
	if probe != nil {
		probe.Close()
	}
	db := filepath.Join(t.TempDir(), "proxy.db")
	_, base := startServe(t, "serve", db, "-workers", "1",
		"-auth-proxy-header", "X-Forwarded-User", "-auth-proxy-addrs", "127.0.0.1/32", "-admin-users", "root")
	base = strings.TrimSuffix(base, "/")
	trusted := fakeProxy(t, base, "127.0.0.1").URL
	stranger := fakeProxy(t, base, "127.0.0.2").URL

	code, body := request(t, http.MethodPost, trusted+"/api/v1/runs", "alice", proxyTestScenario)
	require.Contains(t, []int{http.StatusAccepted, http.StatusOK}, code, body)
	var created struct{ ID string }
	require.NoError(t, json.Unmarshal([]byte(body), &created))

	code, body = request(t, http.MethodGet, trusted+"/runs/"+created.ID, "bob", "")
	assert.Equal(t, http.StatusOK, code)
	assert.Contains(t, body, "Created by alice")

	code, body = request(t, http.MethodPost, trusted+"/runs/"+created.ID+"/cancel", "bob", "")
	assert.Equal(t, http.StatusForbidden, code)
	assert.Contains(t, body, "who created this run")

	// The same header from an address that is not the proxy is not believed.
	code, body = request(t, http.MethodGet, stranger+"/api/v1/runs", "root", "")
	assert.Equal(t, http.StatusForbidden, code)
	assert.Contains(t, body, "authenticating proxy")
	code, _ = request(t, http.MethodPost, stranger+"/runs/"+created.ID+"/cancel", "root", "")
	assert.Equal(t, http.StatusForbidden, code)

	// Through the proxy, the admin may.
	code, _ = request(t, http.MethodGet, trusted+"/admin/queue", "root", "")
	assert.Equal(t, http.StatusOK, code)
	code, _ = request(t, http.MethodGet, trusted+"/admin/queue", "alice", "")
	assert.Equal(t, http.StatusForbidden, code)

	// A rebound name is refused whoever asks.
	req, err := http.NewRequest(http.MethodGet, trusted+"/api/v1/runs", nil)
	require.NoError(t, err)
	req.Host = "rebind.evil.example"
	req.Header.Set("X-Test-Login", "alice")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusForbidden, resp.StatusCode)
}

// TestServeReadOnly: serve -read-only opens pages and refuses to create runs.
func TestServeReadOnly(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: starts a server process")
	}
	_, base := startServe(t, "serve", filepath.Join(t.TempDir(), "ro.db"), "-workers", "1", "-read-only")
	code, body := request(t, http.MethodPost, base+"api/v1/runs", "", proxyTestScenario)
	assert.Equal(t, http.StatusForbidden, code)
	assert.Contains(t, body, "read-only")
	code, body = request(t, http.MethodGet, base+"runs", "", "")
	assert.Equal(t, http.StatusOK, code)
	assert.Contains(t, body, `data-testid="read-only"`)
}
