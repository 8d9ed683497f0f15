package web

import (
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
)

// DNS rebinding (finding M5): a page on evil.example whose name is made to resolve to 127.0.0.1
// sends requests that the browser considers same-origin, so the cross-origin check lets them
// through. They still carry "Host: evil.example", which is what this check refuses. An IP
// address in Host is never a rebinding (the attacker's page cannot be served from that address),
// so literal IPs are always accepted; names must be listed (Config.Access.AllowedHosts, flag
// -allowed-hosts), as MLflow's --allowed-hosts does.

// DefaultAllowedHosts are the names serve accepts without -allowed-hosts: the loopback names,
// and the host of the listen address when it is a name.
func DefaultAllowedHosts(listenAddr string) []string {
	hosts := []string{"localhost", "*.localhost"}
	host, _, err := net.SplitHostPort(listenAddr)
	if err != nil {
		host = listenAddr
	}
	if _, err := netip.ParseAddr(host); host != "" && err != nil && !matchesHost(hosts, host) {
		hosts = append(hosts, strings.ToLower(host))
	}
	return hosts
}

// hostName is the Host header without its port and trailing dot, lower-cased.
func hostName(hostport string) string {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	host = strings.TrimSuffix(strings.TrimPrefix(strings.TrimSuffix(host, "]"), "["), ".")
	return strings.ToLower(host)
}

// matchesHost says whether host (no port) is one of patterns: a name, "*.suffix" for any name
// under suffix, or "*" for any host.
func matchesHost(patterns []string, host string) bool {
	for _, p := range patterns {
		p = strings.ToLower(strings.TrimSuffix(p, "."))
		switch {
		case p == "*", p == host:
			return true
		case strings.HasPrefix(p, "*.") && strings.HasSuffix(host, p[1:]) && len(host) > len(p)-1:
			return true
		}
	}
	return false
}

// guardHosts answers 403 to a request whose Host is a name not allowed. Without an allow-list
// (a nil Config.Access.AllowedHosts) every Host is accepted; serve always sets one. The probes
// are not behind it (routes.go): the kubelet names no allowed host.
func (s *Server) guardHosts(next http.Handler) http.Handler {
	allowed := s.cfg.Access.AllowedHosts
	if allowed == nil {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		host := hostName(r.Host)
		if _, err := netip.ParseAddr(host); err == nil || matchesHost(allowed, host) {
			next.ServeHTTP(w, r)
			return
		}
		s.writeError(w, r, &Error{Status: http.StatusForbidden, Title: "Host not allowed",
			Message: "this server does not answer to the name " + quoteClipped(host) + " (a page that renamed this server, DNS rebinding, would use it); " +
				"open it by an allowed name or its IP address, or ask its operator to add the name to -allowed-hosts"})
	})
}

// quoteClipped quotes a user-supplied value for a message, clipped to a readable length.
func quoteClipped(v string) string {
	const limit = 80
	if len(v) > limit {
		v = v[:limit] + "…"
	}
	return strconv.Quote(v)
}
