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
)

// A finished run never changes, so its page (and the compare page of two finished runs) is
// rendered once and served from memory until something it shows changes: the runs it is related
// to (a new pair or comparison). Each cached page remembers the version it was rendered at
// (store.PageVersion). Checking costs a query, so a page checked less than pageRecheck ago is
// served as it is, unless this process recorded a comparison since (which bumps gen): another
// process's new pair or comparison shows within pageRecheck.
//
// Pages are bounded twice: at most pageCacheEntries pages, and pages over maxCachedPageBytes are
// not cached at all, so the cache holds at most about pageCacheEntries × 2 × 512 KiB (the page
// and its gzip), 128 MiB in the worst case and a few MiB in practice (the large-fleet page is
// about 150 KB, 20 KB gzipped).
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
}

type pageCache struct {
	pages *lru.Cache[string, *cachedPage]
	// gen counts the changes this process made that cached pages may show (comparisons).
	gen atomic.Int64
}

// fresh says whether p was confirmed recently enough to serve without asking the store.
func (c *pageCache) fresh(p *cachedPage, now time.Time) bool {
	return p.gen.Load() == c.gen.Load() && now.UnixNano()-p.checkedAt.Load() < int64(pageRecheck)
}

// changed tells the cache that pages may show something new.
func (c *pageCache) changed() { c.gen.Add(1) }

// lookup returns the cached page under key if it is still current; version reads the current
// version when the page needs checking.
func (c *pageCache) lookup(key string, now time.Time, version func(*cachedPage) (string, error)) (*cachedPage, bool) {
	p, ok := c.pages.Get(key)
	if !ok {
		return nil, false
	}
	if c.fresh(p, now) {
		return p, true
	}
	gen := c.gen.Load()
	v, err := version(p)
	if err != nil || v != p.version {
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

// renderCached renders c without a nonce, stores it under key (when small enough) and serves it.
// gen and checked are the cache generation and the time when version was read.
func (s *Server) renderCached(w http.ResponseWriter, r *http.Request, key, version string, gen int64, checked time.Time, counterparts []string, c templ.Component) error {
	var buf bytes.Buffer
	if err := c.Render(templ.WithNonce(r.Context(), ""), &buf); err != nil {
		return err
	}
	sum := sha256.Sum256(buf.Bytes())
	p := &cachedPage{version: version, counterparts: counterparts, body: buf.Bytes(), etag: `"` + hex.EncodeToString(sum[:12]) + `"`}
	p.gen.Store(gen)
	p.checkedAt.Store(checked.UnixNano())
	var gz bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&gz, gzip.DefaultCompression)
	_, _ = zw.Write(p.body)
	if err := zw.Close(); err == nil {
		p.gz = gz.Bytes()
	}
	if len(p.body) <= maxCachedPageBytes {
		s.pages.pages.Add(key, p)
	}
	serveCached(w, r, p)
	return nil
}

// serveCached answers with a cached page: 304 when the client has it (If-None-Match), gzip
// when the client accepts it.
func serveCached(w http.ResponseWriter, r *http.Request, p *cachedPage) {
	h := w.Header()
	h.Set("Content-Security-Policy", cachedCSP)
	h.Set("ETag", p.etag)
	// Revalidate every time: the page is the same until a related run or comparison appears.
	h.Set("Cache-Control", "no-cache")
	h.Add("Vary", "Accept-Encoding")
	if etagMatches(r.Header.Get("If-None-Match"), p.etag) {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	h.Set("Content-Type", "text/html; charset=utf-8")
	body := p.body
	if p.gz != nil && acceptsGzip(r) {
		h.Set("Content-Encoding", "gzip")
		body = p.gz
	}
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		_, _ = w.Write(body)
	}
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
	wrap, err := gzhttp.NewWrapper(gzhttp.ExceptContentTypes([]string{"text/event-stream"}))
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
