package main

import (
	"context"
	"flag"
	"io"
	"net/netip"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/scalein-planner/scalein/web"
)

func TestAccessFlags(t *testing.T) {
	parse := func(addr string, args ...string) (web.Access, error) {
		fs := flag.NewFlagSet("serve", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		f := addAccessFlags(fs)
		require.NoError(t, fs.Parse(args))
		return f.access(addr)
	}
	a, err := parse("127.0.0.1:8080")
	require.NoError(t, err)
	assert.Equal(t, web.Access{AllowedHosts: []string{"localhost", "*.localhost"}}, a, "without flags: single user, loopback names")

	a, err = parse("0.0.0.0:8080", "-allowed-hosts", " planner.example.com, *.corp ", "-auth-proxy-header", "X-Forwarded-User",
		"-auth-proxy-addrs", "10.0.0.0/8, 127.0.0.1,10.1.2.3/8", "-admin-users", "root", "-read-only",
		"-quota-queued-runs", "5", "-quota-upload-bytes", "1GB")
	require.NoError(t, err)
	assert.Equal(t, []string{"planner.example.com", "*.corp"}, a.AllowedHosts)
	assert.Equal(t, []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("127.0.0.1/32"), netip.MustParsePrefix("10.0.0.0/8")}, a.TrustedProxies)
	assert.Equal(t, []string{"root"}, a.AdminUsers)
	assert.True(t, a.ReadOnly)
	assert.Equal(t, web.Quotas{QueuedRuns: 5, UploadBytes: 1_000_000_000}, a.Quotas)

	for _, bad := range [][]string{
		{"-auth-proxy-header", "X-Forwarded-User"},
		{"-auth-proxy-header", "X-U", "-auth-proxy-addrs", "10.0.0.300"},
		{"-quota-sweep-points", "10"},
		{"-auth-proxy-header", "X-U", "-auth-proxy-addrs", "10.0.0.0/8", "-quota-upload-bytes", "lots"},
		{"-admin-group", "ops", "-auth-proxy-header", "X-U", "-auth-proxy-addrs", "10.0.0.0/8"},
	} {
		_, err := parse("127.0.0.1:8080", bad...)
		assert.Error(t, err, "%v", bad)
		var stdout, stderr syncBuffer
		assert.Equal(t, 2, runServe(context.Background(), append([]string{"-db", t.TempDir() + "/x.db"}, bad...), &stdout, &stderr), "%v: %s", bad, stderr.String())
	}
}
