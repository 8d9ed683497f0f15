package web

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/scalein-planner/scalein/runs"
	"github.com/scalein-planner/scalein/store"
)

// BenchmarkCachedRunPage serves a finished run's permalink from the page cache (the whole
// handler chain: logging, CSP, compression wrapper, version query).
func BenchmarkCachedRunPage(b *testing.B) {
	s := newFakeServer(&testing.T{}, runs.Config{}, true)
	id := submitAPI(&testing.T{}, s, testScenario("bench"))
	waitStatus(&testing.T{}, s, id, store.StatusDone)
	h := s.Handler()
	req := httptest.NewRequest(http.MethodGet, "/runs/"+id, nil)
	if rec := httptest.NewRecorder(); true {
		h.ServeHTTP(rec, req)
		if rec.Code != http.StatusOK {
			b.Fatal(rec.Code)
		}
	}
	for b.Loop() {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != http.StatusOK {
			b.Fatal(rec.Code)
		}
	}
}
