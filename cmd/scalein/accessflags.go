package main

import (
	"flag"
	"fmt"
	"net/netip"
	"strings"

	"github.com/scalein-planner/scalein/sim"
	"github.com/scalein-planner/scalein/web"
)

// accessFlags are serve's flags about who may reach the server and what they may do
// (docs/deploy.md, "Exposure").
type accessFlags struct {
	allowedHosts, userHeader, groupsHeader, proxyAddrs, adminUsers, adminGroups *string
	readOnly                                                                    *bool
	quotaRuns, quotaPoints                                                      *int
	quotaUploads                                                                *string
}

func addAccessFlags(fs *flag.FlagSet) accessFlags {
	return accessFlags{
		allowedHosts: fs.String("allowed-hosts", envOr("SCALEIN_ALLOWED_HOSTS", ""), "comma-separated Host names the server answers to, like planner.example.com or *.example.com ('*': any); "+
			"IP addresses are always accepted; others get 403, which stops DNS rebinding (default: localhost, *.localhost and the -addr host if it is a name; env SCALEIN_ALLOWED_HOSTS)"),
		userHeader:   fs.String("auth-proxy-header", "", "header in which an authenticating proxy names the signed-in user (like X-Forwarded-User); needs -auth-proxy-addrs. Without it the server has no users"),
		groupsHeader: fs.String("auth-proxy-groups-header", "", "header in which the proxy lists the user's groups, comma-separated (like X-Forwarded-Groups), for -admin-group"),
		proxyAddrs:   fs.String("auth-proxy-addrs", "", "comma-separated addresses or CIDRs the proxy connects from (like 10.0.0.0/8); the user header is believed only from them, and other clients are refused"),
		adminUsers:   fs.String("admin-users", "", "comma-separated users who may cancel anything, act on a read-only server and open /admin/queue"),
		adminGroups:  fs.String("admin-group", "", "comma-separated groups (from -auth-proxy-groups-header) whose members are admins"),
		readOnly:     fs.Bool("read-only", false, "refuse creating, cancelling and uploading to everyone but the admins: viewers open and compare every permalink"),
		quotaRuns:    fs.Int("quota-queued-runs", 0, "runs one user may have queued or running (0: no quota; needs -auth-proxy-header)"),
		quotaPoints:  fs.Int("quota-sweep-points", 0, "points one user's sweeps may have not yet finished (0: no quota; needs -auth-proxy-header)"),
		quotaUploads: fs.String("quota-upload-bytes", "", "bytes of traces and calibration inputs one user may store, like 500MB (default: no quota; needs -auth-proxy-header)"),
	}
}

// access reads the flags; listenAddr gives the default allow-list.
func (f accessFlags) access(listenAddr string) (web.Access, error) {
	a := web.Access{
		UserHeader: strings.TrimSpace(*f.userHeader), GroupsHeader: strings.TrimSpace(*f.groupsHeader),
		AdminUsers: commaList(*f.adminUsers), AdminGroups: commaList(*f.adminGroups), ReadOnly: *f.readOnly,
		Quotas: web.Quotas{QueuedRuns: *f.quotaRuns, SweepPoints: *f.quotaPoints},
	}
	a.AllowedHosts = commaList(*f.allowedHosts)
	if len(a.AllowedHosts) == 0 {
		a.AllowedHosts = web.DefaultAllowedHosts(listenAddr)
	}
	for _, v := range commaList(*f.proxyAddrs) {
		p, err := netip.ParsePrefix(v)
		if err != nil {
			addr, aerr := netip.ParseAddr(v)
			if aerr != nil {
				return web.Access{}, fmt.Errorf("-auth-proxy-addrs: %q is neither an address nor a CIDR (like 10.0.0.0/8 or 127.0.0.1)", v)
			}
			p = netip.PrefixFrom(addr, addr.BitLen())
		}
		a.TrustedProxies = append(a.TrustedProxies, p.Masked())
	}
	if *f.quotaUploads != "" {
		n, err := sim.ParseBytes(*f.quotaUploads)
		if err != nil {
			return web.Access{}, fmt.Errorf("-quota-upload-bytes: %w", err)
		}
		if n <= 0 {
			return web.Access{}, fmt.Errorf("-quota-upload-bytes must be above 0 (leave it out for no quota)")
		}
		a.Quotas.UploadBytes = n
	}
	return a, a.Check()
}

// commaList splits a comma-separated flag, dropping blanks.
func commaList(v string) []string {
	var out []string
	for item := range strings.SplitSeq(v, ",") {
		if item = strings.TrimSpace(item); item != "" {
			out = append(out, item)
		}
	}
	return out
}
