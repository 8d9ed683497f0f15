package web

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/a-h/templ"
	lru "github.com/hashicorp/golang-lru/v2"
	"github.com/klauspost/compress/gzhttp"
	"github.com/klauspost/compress/gzip"
	"golang.org/x/sync/singleflight"
)

// A finished run never changes, so its page (and the compare page of two finished runs) is
// rendered once and served from memory until something it shows changes: the runs it is related
// to (a new pair or comparison). Each cached page remembers the version it was rendered at
// (store.PageVersion). Checking costs a query, so a page checked less than pageRecheck ago is
// served as it is, unless this process recorded a comparison since (which bumps gen): another
// process's new pair or comparison shows within pageRecheck (and the check that follows). When
// only the second has run out, the page is served while it is checked in the background.
//
// Requests that find the same page missing (or due for its check) at the same time share one
// build (or one version query): without that, 64 clients opening a page nobody has opened yet
// each built it (the large-fleet page costs tens of ms of CPU), and on two cores the last of
// them waited a second (docs/performance.md, "Permalinks under a cold start").
//
// Pages are bounded three times: at most pageCacheEntries pages, and pages over
// maxCachedPageBytes or keys over maxPageKeyBytes are not cached at all, so the cache holds at
// most about pageCacheEntries × (2 × 512 KiB + 256 B) (the page, its gzip and its key), 128 MiB
// in the worst case and a few MiB in practice (the large-fleet page is about 150 KB, 20 KB
// gzipped). Keys are the meaning of the query, not its spelling (page_keys.go), so odd
// spellings of one page share its entry instead of evicting others.
const (
	pageCacheEntries   = 256
	maxCachedPageBytes = 512 << 10
	pageRecheck        = time.Second
)

// cachedPage is one rendered page, its gzip and its ETag.
type cachedPage struct {
	version string
	// counterparts are the ids of the hint and guard counterparts of a run page's scenario,
	// which the version check needs (they are derived from the scenario, which never changes).
	counterparts []string
	body, gz     []byte
	etag         string
	// checkedAt (unix ns) and gen are when the version was last confirmed, and the cache's
	// generation then.
	checkedAt, gen atomic.Int64
	// recheck is how long a confirmed version is trusted without asking again: pageRecheck for
	// run and compare pages, 0 (every request) for sweep pages, whose version is cheap to read
	// and changes while the sweep runs.
	recheck time.Duration
	// checking is set while a background check of the page runs.
	checking atomic.Bool
}

type pageCache struct {
	pages *lru.Cache[string, *cachedPage]
	// gen counts the changes this process made that cached pages may show (comparisons).
	gen atomic.Int64
	// flights joins the builds and the version checks of one key that overlap.
	flights singleflight.Group
	// builds and checks count the pages built and the versions read, for the tests.
	builds, checks atomic.Int64
	// Test hooks, nil otherwise: onShare runs when a request asks for a build ("build") or a
	// version check ("check"), before it joins or starts one; beforeFlight at the start of
	// every build or check that runs.
	onShare, beforeFlight func(kind string)
}

// flightTimeout bounds a shared build or check. It runs detached from the request that started
// it, so that request's client going away does not fail the others waiting for it.
const flightTimeout = 30 * time.Second

// builtPage is what a build gives the requests that waited for it: a page to serve from the
// cache, or (for a page that is not cached, like an unfinished run's) a view each request
// renders with its own nonce.
type builtPage struct {
	page *cachedPage
	view templ.Component
}

// build runs fn for key once for all the requests that ask while it runs, and caches the page
// it returns (when small enough).
func (c *pageCache) build(ctx context.Context, key string, now time.Time, fn func(context.Context) (builtPage, error)) (builtPage, error) {
	v, err := c.share(ctx, "build", key, func(ctx context.Context) (any, error) {
		// A build that ended just after this request's lookup.
		if p, ok := c.pages.Get(key); ok && c.fresh(p, now) {
			return builtPage{page: p}, nil
		}
		if c.beforeFlight != nil {
			c.beforeFlight("build")
		}
		c.builds.Add(1)
		b, err := fn(ctx)
		if err == nil && b.page != nil && len(b.page.body) <= maxCachedPageBytes && len(key) <= maxPageKeyBytes {
			c.pages.Add(key, b.page)
		}
		return b, err
	})
	if err != nil {
		return builtPage{}, err
	}
	return v.(builtPage), nil
}

// share runs fn once for all the callers of the same kind and key that overlap. fn gets a context
// detached from any one request (bounded by flightTimeout); a caller whose own request ends
// first stops waiting with its context's error, and fn goes on for the others.
func (c *pageCache) share(ctx context.Context, kind, key string, fn func(context.Context) (any, error)) (any, error) {
	if c.onShare != nil {
		c.onShare(kind)
	}
	ch := c.flights.DoChan(kind+" "+key, func() (any, error) {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), flightTimeout)
		defer cancel()
		return fn(ctx)
	})
	select {
	case res := <-ch:
		return res.Val, res.Err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// fresh says whether p was confirmed recently enough to serve without asking the store.
func (c *pageCache) fresh(p *cachedPage, now time.Time) bool {
	return p.gen.Load() == c.gen.Load() && now.UnixNano()-p.checkedAt.Load() < int64(p.recheck)
}

// changed tells the cache that pages may show something new.
func (c *pageCache) changed() { c.gen.Add(1) }

// lookup returns the cached page under key if it is still current; version reads the current
// version when the page needs checking (once for all the requests that need it at once, with a
// context detached from any one request).
func (c *pageCache) lookup(ctx context.Context, key string, now time.Time, version func(context.Context, *cachedPage) (string, error)) (*cachedPage, bool) {
	p, ok := c.pages.Get(key)
	if !ok {
		return nil, false
	}
	if c.fresh(p, now) {
		return p, true
	}
	gen := c.gen.Load()
	check := func(ctx context.Context) (any, error) {
		if c.beforeFlight != nil {
			c.beforeFlight("check")
		}
		c.checks.Add(1)
		return version(ctx, p)
	}
	if p.recheck > 0 && p.gen.Load() == gen {
		// Only the time ran out (this process changed nothing the page shows): serve it as it
		// is and check it in the background, once; a changed version drops the page, so the
		// next request builds it. Nobody waits for the check.
		if p.checking.CompareAndSwap(false, true) {
			go func() {
				defer p.checking.Store(false)
				v, err := c.share(context.WithoutCancel(ctx), "check", key, check)
				switch {
				case err != nil: // asked again by the next request
				case v.(string) == p.version:
					p.checkedAt.Store(now.UnixNano())
				default:
					if cur, ok := c.pages.Peek(key); ok && cur == p {
						c.pages.Remove(key)
					}
				}
			}()
		}
		return p, true
	}
	v, err := c.share(ctx, "check", key, check)
	if err != nil || v.(string) != p.version {
		return nil, false
	}
	p.gen.Store(gen)
	p.checkedAt.Store(now.UnixNano())
	return p, true
}

func newPageCache() *pageCache {
	c, err := lru.New[string, *cachedPage](pageCacheEntries)
	if err != nil {
		panic(err) // only for a size ≤ 0
	}
	return &pageCache{pages: c}
}

// cachedCSP is the policy of a cached page: the page is shared by every request, so it carries
// no per-request nonce, and its scripts (all external files of this origin) load under 'self'.
const cachedCSP = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; object-src 'none'; " +
	"base-uri 'none'; frame-ancestors 'none'; form-action 'self'"

// cachedPageOf renders c without a nonce into a page for the cache. gen and checked are the
// cache generation and the time when version was read.
func cachedPageOf(ctx context.Context, version string, gen int64, checked time.Time, counterparts []string, c templ.Component) (builtPage, error) {
	var buf bytes.Buffer
	if err := c.Render(templ.WithNonce(ctx, ""), &buf); err != nil {
		return builtPage{}, err
	}
	sum := sha256.Sum256(buf.Bytes())
	p := &cachedPage{version: version, counterparts: counterparts, body: buf.Bytes(), etag: `"` + hex.EncodeToString(sum[:12]) + `"`, recheck: pageRecheck}
	p.gen.Store(gen)
	p.checkedAt.Store(checked.UnixNano())
	var gz bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&gz, gzip.DefaultCompression)
	_, _ = zw.Write(p.body)
	if err := zw.Close(); err == nil {
		p.gz = gz.Bytes()
	}
	return builtPage{page: p}, nil
}

// servePage answers with the page under key: from the cache while version says it is current,
// else from build (once for all the requests that ask at the same time): the page it gives to
// cache, or its view rendered now with this request's nonce.
func (s *Server) servePage(w http.ResponseWriter, r *http.Request, key string,
	version func(context.Context, *cachedPage) (string, error), build func(context.Context) (builtPage, error)) error {
	if c, ok := s.pages.lookup(r.Context(), key, s.now(), version); ok {
		serveCached(w, r, c)
		return nil
	}
	b, err := s.pages.build(r.Context(), key, s.now(), build)
	if err != nil {
		return err
	}
	if b.page != nil {
		serveCached(w, r, b.page)
		return nil
	}
	return s.render(w, r, http.StatusOK, b.view)
}

// serveCached answers with a cached page: 304 when the client has it (If-None-Match), gzip
// when the client accepts it. The gzip has its own ETag (the plain one with "-gzip", as the
// compress middleware names its own), so a cache holding one encoding never takes it for the
// other; If-None-Match is compared with the ETag of the encoding this request would get.
func serveCached(w http.ResponseWriter, r *http.Request, p *cachedPage) {
	h := w.Header()
	h.Set("Content-Security-Policy", cachedCSP)
	// Revalidate every time: the page is the same until a related run or comparison appears.
	h.Set("Cache-Control", dynamicCacheControl(r))
	varyAcceptEncoding(h)
	body, etag, gz := p.body, p.etag, p.gz != nil && acceptsGzip(r)
	if gz {
		body, etag = p.gz, gzipETag(p.etag)
	}
	h.Set("ETag", etag)
	if etagMatches(r.Header.Get("If-None-Match"), etag) {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	h.Set("Content-Type", "text/html; charset=utf-8")
	if gz {
		h.Set("Content-Encoding", "gzip")
	}
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		_, _ = w.Write(body)
	}
}

// gzipETag is the ETag of the gzip of a page whose ETag is etag (a quoted string).
func gzipETag(etag string) string {
	return strings.TrimSuffix(etag, `"`) + `-gzip"`
}

// etagMatches implements If-None-Match's weak comparison over a list of tags (or "*").
func etagMatches(header, etag string) bool {
	for part := range strings.SplitSeq(header, ",") {
		part = strings.TrimSpace(part)
		if part == "*" || strings.TrimPrefix(part, "W/") == etag {
			return true
		}
	}
	return false
}

func acceptsGzip(r *http.Request) bool {
	for part := range strings.SplitSeq(r.Header.Get("Accept-Encoding"), ",") {
		coding, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		if !strings.EqualFold(strings.TrimSpace(coding), "gzip") {
			continue
		}
		params = strings.TrimSpace(params)
		if q, ok := strings.CutPrefix(params, "q="); ok {
			v, err := strconv.ParseFloat(strings.TrimSpace(q), 64)
			return err == nil && v > 0
		}
		return true
	}
	return false
}

// compress gzips every other response a client accepts compressed (pages rendered per request,
// JSON, CSV, static files), except the server-sent event streams, which must reach the browser
// event by event.
func compress(next http.Handler) http.Handler {
	// SuffixETag: an answer that sets an ETag and is compressed here gets one per encoding.
	wrap, err := gzhttp.NewWrapper(gzhttp.ExceptContentTypes([]string{"text/event-stream"}), gzhttp.SuffixETag("-gzip"))
	if err != nil {
		panic(err) // the options above are valid
	}
	zipped := wrap(next)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/events") {
			next.ServeHTTP(w, r)
			return
		}
		zipped.ServeHTTP(w, r)
	})
}

// pageVersion reads what a cached run page depends on; see store.PageVersion.
func (s *Server) pageVersion(ctx context.Context, id string, counterparts []string) (string, error) {
	return s.store.PageVersion(ctx, id, counterparts...)
}
