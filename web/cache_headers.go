package web

import (
	"net/http"
	"strings"
)

// What caches may do with this server's answers, in one place:
//
//   - static files under /static/ with their content hash (?v=) are "public, max-age=31536000,
//     immutable", without it "no-cache" (assets.go);
//   - everything else (pages, JSON, CSV, exports, event streams) is dynamic and says what
//     dynamicCacheControl returns: a browser or proxy may keep a copy but must ask again before
//     reusing it. The cached run and compare pages answer that revalidation with a 304 (their
//     ETag); the others are rebuilt.
//
// Without identities every client sees the same pages. With them (a trusted proxy names the
// user, auth.go), a shared cache must not hand one user's answer to another, so every dynamic
// answer of an identified request is "private, no-cache" (identify's own refusals, written
// before there is an identity, say "private").

// dynamicCacheControl is the Cache-Control of every answer that is not a static file.
func dynamicCacheControl(r *http.Request) string {
	if identityOf(r.Context()).user != "" { // a signed-in user's answer is theirs alone (auth.go)
		return "private, no-cache"
	}
	return "no-cache"
}

// cacheHeaders gives every answer the dynamic Cache-Control; handlers that know better (static
// files) set their own. It runs after identify, so that the identity is known.
func cacheHeaders(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", dynamicCacheControl(r))
		next.ServeHTTP(w, r)
	})
}

// varyAcceptEncoding lists Accept-Encoding in Vary once: the compress middleware has already
// added it to every answer it wraps, and a second copy only confuses caches.
func varyAcceptEncoding(h http.Header) {
	for _, v := range h.Values("Vary") {
		for part := range strings.SplitSeq(v, ",") {
			if p := strings.TrimSpace(part); p == "*" || strings.EqualFold(p, "Accept-Encoding") {
				return
			}
		}
	}
	h.Add("Vary", "Accept-Encoding")
}
