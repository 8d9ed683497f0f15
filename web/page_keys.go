package web

import (
	"math"
	"net/url"
	"strconv"
	"strings"
)

// Cached pages are keyed by what their query means, not by how it is spelled: a run page reads
// ?workers=all, ?wpage=N, ?decisions=changes, ?dpage=N and ?price=P, and every other spelling
// (a page of 210 KB of digits, price=1.0 against price=1) would otherwise be a key of its own
// that rebuilds the page and evicts a real one (finding L1 of 2026-12b). The page is built from
// the same normal query, so what is cached under a key is what the key says.

// maxPageKeyBytes bounds a cache key; a longer key (which normal queries never make) is served
// without caching, so the keys of the cache hold at most pageCacheEntries × maxPageKeyBytes.
const maxPageKeyBytes = 256

// maxPageNumber bounds a ?wpage= or ?dpage= the key keeps: no table has this many pages (the
// pager clamps to the last page anyway).
const maxPageNumber = 1_000_000

// normalPageQuery is the meaning of a page's query: the page numbers as decimal integers ≥ 2
// (1, 0, negatives and non-numbers are the first page and dropped), the two switches only when
// they are on, and the price as the shortest decimal of its float when it is valid; every
// invalid price is one marker (invalidPagePrice), whose page says how to give a price without
// quoting the spelling.
func normalPageQuery(q url.Values, params ...string) url.Values {
	out := url.Values{}
	for _, k := range params {
		raw := strings.TrimSpace(q.Get(k))
		switch k {
		case "wpage", "dpage":
			if n, err := strconv.Atoi(raw); err == nil && n > 1 {
				out.Set(k, strconv.Itoa(min(n, maxPageNumber)))
			}
		case "workers":
			if raw == "all" {
				out.Set(k, raw)
			}
		case "decisions":
			if raw == "changes" {
				out.Set(k, raw)
			}
		case "price":
			if v, ok := validPrice(raw); ok {
				out.Set(k, strconv.FormatFloat(v, 'g', -1, 64))
			} else if raw != "" {
				out.Set(k, invalidPagePrice)
			}
		default:
			// ids (a, b) are checked by the handler; keep them as they are.
			if raw != "" {
				out.Set(k, raw)
			}
		}
	}
	return out
}

// invalidPagePrice stands for every invalid ?price= in a cached page's normal query.
const invalidPagePrice = "invalid"

// validPrice parses a ?price= the pages accept.
func validPrice(raw string) (float64, bool) {
	v, err := strconv.ParseFloat(raw, 64)
	if err != nil || !(v > 0) || v > MaxGPUHourPrice || math.IsInf(v, 0) {
		return 0, false
	}
	return v, true
}

// normalPageURL is u with its query replaced by the normal form of params.
func normalPageURL(u *url.URL, params ...string) *url.URL {
	n := *u
	n.RawQuery = normalPageQuery(u.Query(), params...).Encode()
	return &n
}

// pageKeyOf is the cache key of the page at u (already normal): its path and its query.
func pageKeyOf(u *url.URL) string {
	if u.RawQuery == "" {
		return u.Path
	}
	return u.Path + "?" + u.RawQuery
}

// runPageParams are the query parameters a run page reads.
func runPageParams() []string {
	return []string{"workers", "wpage", "decisions", "dpage", "price", "origin"}
}
