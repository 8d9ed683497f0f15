package web

import (
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/scalein-planner/scalein/runs"
	"github.com/scalein-planner/scalein/store"
)

// Finding L1 of 2026-12b: every spelling of a page's query was a cache key of its own (raw
// values, 210 KB of digits in ?dpage= made a 210 KB key), so the entry bound did not bound
// bytes and odd spellings rebuilt the page and evicted real ones.
func TestPageCacheKeysAreNormal(t *testing.T) {
	s := newFakeServer(t, runs.Config{}, true)
	id := submitAPI(t, s, testScenario("keys-a"))
	other := submitAPI(t, s, testScenario("keys-b"))
	waitStatus(t, s, id, store.StatusDone)
	waitStatus(t, s, other, store.StatusDone)

	long := strings.Repeat("7", 20_000)
	plain := []string{"", "?dpage=abc", "?dpage=" + long, "?wpage=0", "?wpage=1", "?workers=some",
		"?decisions=" + long, "?unknown=" + long}
	invalid := []string{"?price=abc", "?price=-1", "?price=" + long, "?price=NaN&wpage=-1"}
	priced := []string{"?price=1", "?price=1.0", "?price=1.000", "?price=+1e0", "?price=%201%20", "?price=1&dpage=x"}
	for _, list := range [][]string{plain, priced, invalid} {
		for _, q := range list {
			require.Equal(t, http.StatusOK, get(t, s, "/runs/"+id+q).Code, q)
		}
	}
	assert.EqualValues(t, 3, s.pages.builds.Load(), "one build for the plain page, one for price 1, one for an invalid price")
	for _, k := range s.pages.pages.Keys() {
		assert.LessOrEqual(t, len(k), maxPageKeyBytes, "key %.80q", k)
	}
	assert.ElementsMatch(t, []string{"/runs/" + id, "/runs/" + id + "?price=1", "/runs/" + id + "?price=invalid"}, s.pages.pages.Keys())
	assert.Contains(t, get(t, s, "/runs/"+id+"?price=zz").Body.String(), "give a number above 0")

	// The page built from one spelling shows the price's meaning, not the first spelling seen.
	body := get(t, s, "/runs/"+id+"?price=1.000").Body.String()
	assert.NotContains(t, body, "1.000")

	// A page number past the last page is the last page, and huge page numbers share one key.
	get(t, s, "/runs/"+id+"?wpage=99999999999")
	get(t, s, "/runs/"+id+"?wpage=5000000")
	assert.Contains(t, s.pages.pages.Keys(), "/runs/"+id+"?wpage=1000000")

	// Compare pages: the price in normal form, an invalid one dropped.
	before := s.pages.builds.Load()
	for _, q := range []string{"", "&price=zz", "&price=" + long, "&price=2.50", "&price=2.5", "&price=25e-1"} {
		require.Equal(t, http.StatusOK, get(t, s, "/compare?a="+id+"&b="+other+q).Code, q)
	}
	assert.EqualValues(t, 3, s.pages.builds.Load()-before, "one build without a price, one for an invalid price, one for 2.5")
	assert.Contains(t, s.pages.pages.Keys(), compareURL(id, other)+"&price=2.5")
}

func TestNormalPageQuery(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"", ""},
		{"wpage=2&dpage=03&workers=all&decisions=changes&price=0.50", "decisions=changes&dpage=3&price=0.5&workers=all&wpage=2"},
		{"wpage=-4&dpage=1&workers=ALL&decisions=all&price=1e7", "price=invalid"},
		{"price=NaN", "price=invalid"}, {"price=Inf", "price=invalid"}, {"price=", ""}, {"price=1e6", "price=1e%2B06"}, {"price=5e-324", "price=5e-324"},
	} {
		u, err := http.NewRequest(http.MethodGet, "/runs/x?"+tc.in, nil)
		require.NoError(t, err)
		assert.Equal(t, tc.want, normalPageQuery(u.URL.Query(), runPageParams()...).Encode(), tc.in)
	}
}
