package web

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/go-chi/chi/v5"
	"github.com/go-chi/chi/v5/middleware"
	"github.com/go-chi/httprate"

	"github.com/scalein-planner/scalein/store"
	"github.com/scalein-planner/scalein/templates"
)

// Access is who may reach the server and what they may do (docs/deploy.md, "Exposure"). The
// zero value is the single-user server: any Host, no identities, everyone may do everything.
//
// Identities follow Grafana's auth.proxy model: the server does not sign anybody in; a proxy in
// front of it (oauth2-proxy, an ingress with OIDC) does, and names the user in a header. The
// header is believed only on connections from TrustedProxies; every other connection is refused
// (but for the probes and the static files, which are not behind identify: routes.go), so
// nobody can name himself by talking to the port directly.
type Access struct {
	// AllowedHosts are the Host names the server answers to (hosts.go); nil accepts any.
	AllowedHosts []string
	// UserHeader names the header the proxy puts the signed-in user in (X-Forwarded-User);
	// "" means no identities.
	UserHeader string
	// GroupsHeader optionally names a header with the user's groups, comma-separated
	// (X-Forwarded-Groups), for AdminGroups.
	GroupsHeader string
	// TrustedProxies are the addresses the proxy connects from.
	TrustedProxies []netip.Prefix
	// AdminUsers and AdminGroups may cancel anything, act on a read-only server and see
	// /admin/queue.
	AdminUsers, AdminGroups []string
	// ReadOnly refuses creating, cancelling and uploading to everyone but the admins: viewers
	// open every permalink and compare runs.
	ReadOnly bool
	// Quotas bound what each user holds at once (quota.go); zero fields do not limit.
	Quotas Quotas
}

// maxUserChars bounds a user name from the proxy.
const maxUserChars = 256

// Check refuses combinations that cannot work, naming the flag to fix (New calls it too).
func (a Access) Check() error {
	switch {
	case a.UserHeader == "" && len(a.TrustedProxies) > 0:
		return errors.New("web: -auth-proxy-addrs is set without -auth-proxy-header; name the header the proxy sets (like X-Forwarded-User)")
	case a.UserHeader != "" && len(a.TrustedProxies) == 0:
		return errors.New("web: -auth-proxy-header needs -auth-proxy-addrs: the addresses (CIDRs) the proxy connects from; the header is believed from nowhere else")
	case a.UserHeader == "" && (len(a.AdminUsers) > 0 || len(a.AdminGroups) > 0 || a.GroupsHeader != ""):
		return errors.New("web: -admin-users, -admin-group and -auth-proxy-groups-header need identities: set -auth-proxy-header and -auth-proxy-addrs")
	case len(a.AdminGroups) > 0 && a.GroupsHeader == "":
		return errors.New("web: -admin-group needs -auth-proxy-groups-header: the header the proxy puts the user's groups in (like X-Forwarded-Groups)")
	case a.UserHeader == "" && a.Quotas != (Quotas{}):
		return errors.New("web: the per-user quotas (-quota-*) need identities: set -auth-proxy-header and -auth-proxy-addrs")
	case a.Quotas.QueuedRuns < 0 || a.Quotas.SweepPoints < 0 || a.Quotas.UploadBytes < 0:
		return errors.New("web: a quota (-quota-*) is negative; use 0 for no limit")
	}
	for _, h := range a.AllowedHosts {
		if strings.ContainsAny(h, "/:@ ") || h == "" || (strings.Contains(h, "*") && h != "*" && !strings.HasPrefix(h, "*.")) {
			return fmt.Errorf("web: -allowed-hosts: %q is not a host name; list names without scheme or port, like planner.example.com or *.example.com (IP addresses need no listing)", h)
		}
	}
	return nil
}

// identity is who sent a request and what they may do.
type identity struct {
	user  string // "" without identities
	admin bool
}

type identityKey struct{}

// identityOf is the request's identity; without identities everyone is the one admin.
func identityOf(ctx context.Context) identity {
	id, ok := ctx.Value(identityKey{}).(identity)
	if !ok {
		return identity{admin: true}
	}
	return id
}

// identities says whether users are told apart (a trusted proxy names them).
func (s *Server) identities() bool { return s.cfg.Access.UserHeader != "" }

// identify reads the user the trusted proxy names and puts it in the context, for the store
// (the owner of what the request creates), for the checks below and for cacheHeaders, which
// makes a signed-in user's answers private (dynamicCacheControl). The probes (sent by the node,
// not through the proxy) and the static files (public) are not behind it (routes.go).
func (s *Server) identify(next http.Handler) http.Handler {
	a := s.cfg.Access
	if a.UserHeader == "" {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "private") // the refusals below; cacheHeaders sets the rest
		from, err := netip.ParseAddrPort(r.RemoteAddr)
		if err != nil || !slices.ContainsFunc(a.TrustedProxies, func(p netip.Prefix) bool { return p.Contains(from.Addr().Unmap()) }) {
			s.writeError(w, r, &Error{Status: http.StatusForbidden, Title: "Sign in through the proxy",
				Message: "this server takes requests only through its authenticating proxy; open it by the proxy's address (the server's operator can list more proxy addresses with -auth-proxy-addrs)"})
			return
		}
		// A proxy that appends rather than replaces would let a client's own header through
		// beside the proxy's; with two values nobody can tell which is true (finding L2).
		for _, h := range []string{a.UserHeader, a.GroupsHeader} {
			if h != "" && len(r.Header.Values(h)) > 1 {
				s.writeError(w, r, &Error{Status: http.StatusBadRequest, Title: "Two identities",
					Message: "the request has " + strconv.Itoa(len(r.Header.Values(h))) + " " + h + " headers; the proxy in front of this server must replace that header, not add to it (check its configuration)"})
				return
			}
		}
		user := strings.TrimSpace(r.Header.Get(a.UserHeader))
		if user == "" {
			s.writeError(w, r, &Error{Status: http.StatusUnauthorized, Title: "Not signed in",
				Message: "the proxy in front of this server sent no " + a.UserHeader + " header; sign in again, or check that the proxy passes the signed-in user in that header"})
			return
		}
		if problem := checkUserName(user); problem != "" {
			s.writeError(w, r, &Error{Status: http.StatusBadRequest, Title: "Bad user name",
				Message: "the " + a.UserHeader + " header " + problem})
			return
		}
		id := identity{user: user, admin: slices.Contains(a.AdminUsers, user)}
		if a.GroupsHeader != "" && !id.admin {
			for g := range strings.SplitSeq(r.Header.Get(a.GroupsHeader), ",") {
				if g = strings.TrimSpace(g); g != "" && slices.Contains(a.AdminGroups, g) {
					id.admin = true
				}
			}
		}
		ctx := store.WithOwner(r.Context(), user)
		if a.Quotas != (Quotas{}) {
			ctx = store.WithQuota(ctx, s.storeQuota())
		}
		next.ServeHTTP(w, r.WithContext(context.WithValue(ctx, identityKey{}, id)))
	})
}

// checkUserName says what is wrong with a user name from the proxy ("" if nothing).
func checkUserName(user string) string {
	if !utf8.ValidString(user) {
		return "is not valid UTF-8"
	}
	if n := utf8.RuneCountInString(user); n > maxUserChars {
		return fmt.Sprintf("is %d characters long; at most %d are accepted", n, maxUserChars)
	}
	if strings.ContainsFunc(user, unicode.IsControl) {
		return "contains control characters"
	}
	// Format characters (bidi overrides, zero-width spaces and joiners) make a name that looks
	// like another's ("root" + U+200B) or reorders the page's text (U+202E): finding L3.
	if i := strings.IndexFunc(user, func(r rune) bool { return unicode.Is(unicode.Cf, r) }); i >= 0 {
		r, _ := utf8.DecodeRuneInString(user[i:])
		return fmt.Sprintf("contains the invisible format character U+%04X (bidi overrides and zero-width characters are refused); check the identity provider's user names", r)
	}
	return ""
}

// readOnly is the read-only gate of a route that takes a body. On a read-only server a route
// that stores (creates, cancels, uploads, deletes) refuses everyone but the admins; a route
// that only re-renders a form or transforms its input (a preset picked, a row added, an HPA
// manifest imported) stores nothing, and states so with stores false: viewers may use it.
func (s *Server) readOnly(stores bool) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		if !s.cfg.Access.ReadOnly || !stores {
			return next
		}
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if s.mayStore(r) {
				next.ServeHTTP(w, r)
				return
			}
			s.writeError(w, r, &Error{Status: http.StatusForbidden, Title: "Read-only",
				Message: "this server is read-only (-read-only): you can open every run, sweep and plan and compare runs, but not create, cancel or upload; ask an admin, or use a server that is not read-only"})
		})
	}
}

// mayStore reports whether r may change something: any request on a server that is not
// read-only; on a read-only one, safe methods and admins.
func (s *Server) mayStore(r *http.Request) bool {
	safe := r.Method == http.MethodGet || r.Method == http.MethodHead || r.Method == http.MethodOptions
	return !s.cfg.Access.ReadOnly || safe || (s.identities() && identityOf(r.Context()).admin)
}

// requireAdmin keeps a route (the job queue page) to admins once there are identities.
func (s *Server) requireAdmin(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if s.identities() && !identityOf(r.Context()).admin {
			s.writeError(w, r, &Error{Status: http.StatusForbidden, Title: "Admins only",
				Message: "this page is for the server's admins (-admin-users, -admin-group); you are signed in as " + quoteClipped(identityOf(r.Context()).user)})
			return
		}
		next.ServeHTTP(w, r)
	})
}

// clientKey is what every per-client cap counts by (the rate limits, progress streams,
// exports): the user when there are identities (behind the proxy every request comes from the
// proxy's address, so an address key would share one cap among all users: finding M3), else
// the client's address.
func clientKey(r *http.Request) string {
	if u := identityOf(r.Context()).user; u != "" {
		return "user:" + u
	}
	return httprate.CanonicalizeIP(middleware.GetClientIP(r.Context()))
}

// kindWords names a kind of row in messages.
var kindWords = map[store.OwnerKind]string{store.OwnedRun: "run", store.OwnedSweep: "sweep", store.OwnedPlan: "plan"}

// mayCancel lets a cancel of the run, sweep or plan named by the route's {id} through only for
// its owner or an admin; and a run's owner only when no active sweep or plan of another user
// lists the run (cancelling it would fail theirs). Without identities everyone may.
func (s *Server) mayCancel(kind store.OwnerKind) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if err := s.checkCancel(r.Context(), kind, chi.URLParam(r, "id")); err != nil {
				s.writeError(w, r, problemOf(err))
				return
			}
			next.ServeHTTP(w, r)
		})
	}
}

func (s *Server) checkCancel(ctx context.Context, kind store.OwnerKind, id string) error {
	who := identityOf(ctx)
	if !s.identities() || who.admin {
		return nil
	}
	what := kindWords[kind]
	owner, err := s.store.OwnerOf(ctx, kind, id)
	if errors.Is(err, store.ErrNotFound) {
		return nil // the handler answers 404
	}
	if err != nil {
		return err
	}
	if !owner.Known {
		return &Error{Status: http.StatusForbidden, Title: "Not yours to cancel",
			Message: "this " + what + " was stored before the server recorded who created what, so only an admin may cancel it"}
	}
	if owner.User != who.user {
		return &Error{Status: http.StatusForbidden, Title: "Not yours to cancel",
			Message: fmt.Sprintf("only %s, who created this %s, or an admin may cancel it; you are signed in as %s", quoteClipped(owner.User), what, quoteClipped(who.user))}
	}
	if kind != store.OwnedRun {
		return nil // a sweep's or plan's cancel spares the runs others wait on (cancelPoints)
	}
	waiters, err := s.store.WaitersOtherThan(ctx, id, who.user)
	if err != nil {
		return err
	}
	if len(waiters) > 0 {
		w := waiters[0]
		by := "a user"
		if w.Owner.Known && w.Owner.User != "" {
			by = quoteClipped(w.Owner.User)
		}
		return &Error{Status: http.StatusConflict, Title: "Wanted by someone else",
			Message: fmt.Sprintf("this run is also part of %s's %s /%ss/%s (and %d more), which would fail if it were cancelled; cancel your own sweep or plan instead, which leaves shared runs alone",
				by, kindWords[w.Kind], kindWords[w.Kind], w.ID, len(waiters)-1)}
	}
	return nil
}

// createdBy is the "Created by" line of a page: the owner when there are identities.
func (s *Server) createdBy(ctx context.Context, kind store.OwnerKind, id string) string {
	if !s.identities() {
		return ""
	}
	owner, err := s.store.OwnerOf(ctx, kind, id)
	switch {
	case err != nil:
		return ""
	case !owner.Known:
		return "unknown (stored before users were recorded)"
	}
	return owner.User
}

// pageOwnedBy is pageInfo for the page of a run, sweep or plan: with its "Created by" line.
func (s *Server) pageOwnedBy(ctx context.Context, title, nav string, kind store.OwnerKind, id string) templates.Page {
	p := s.pageInfo(title, nav)
	p.CreatedBy = s.createdBy(ctx, kind, id)
	return p
}

// calibrationPageInfo is pageInfo for a calibration's page, with its "Created by" line.
func (s *Server) calibrationPageInfo(ctx context.Context, title string, k store.CalibrationKey) templates.Page {
	p := s.pageInfo(title, "calibrate")
	if !s.identities() {
		return p
	}
	if owner, err := s.store.CalibrationOwner(ctx, k); err == nil {
		p.CreatedBy = owner.User
		if !owner.Known {
			p.CreatedBy = "unknown (stored before users were recorded)"
		}
	}
	return p
}

// runOwners are the "by …" of the runs list: who created each run, on a server with users.
func (s *Server) runOwners(ctx context.Context, runs []store.RunSummary) (map[string]string, error) {
	ids := make([]string, len(runs))
	for i, r := range runs {
		ids[i] = r.ID
	}
	return s.ownersOf(ctx, store.OwnedRun, ids)
}

// ownersOf is who created each of ids, on a server with users (nil otherwise).
func (s *Server) ownersOf(ctx context.Context, kind store.OwnerKind, ids []string) (map[string]string, error) {
	if !s.identities() || len(ids) == 0 {
		return nil, nil
	}
	owners, err := s.store.OwnersOf(ctx, kind, ids)
	if err != nil {
		return nil, err
	}
	out := make(map[string]string, len(owners))
	for id, o := range owners {
		if o.Known {
			out[id] = o.User
		}
	}
	return out, nil
}
