package web

import (
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
	"net/http"
	"path"
	"strings"

	"github.com/scalein-planner/scalein/static"
	"github.com/scalein-planner/scalein/templates"
)

// assetTable knows the content hash of every static file, for cache-busting URLs: a page links
// /static/css/app.css?v=<hash>, and a request carrying the current hash may be cached for a year.
type assetTable struct {
	hashes map[string]string // path inside static.FS → first 12 hex digits of its SHA-256
	files  http.Handler
}

// servedDirs are the folders of static.FS that are public; the Go file and scripts are not.
var servedDirs = []string{"css/", "js/", "vendor/"}

func newAssetTable() (*assetTable, error) {
	t := &assetTable{hashes: map[string]string{}, files: http.FileServerFS(static.FS)}
	err := fs.WalkDir(static.FS, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !isServed(p) {
			return err
		}
		b, err := fs.ReadFile(static.FS, p)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(b)
		t.hashes[p] = hex.EncodeToString(sum[:])[:12]
		return nil
	})
	return t, err
}

func isServed(p string) bool {
	if strings.HasPrefix(p, "vendor/axe-core/") {
		return false // the accessibility checker is for the browser tests only
	}
	for _, d := range servedDirs {
		if strings.HasPrefix(p, d) {
			return true
		}
	}
	return false
}

// url is the cache-busting URL of a static file (p relative to static/).
func (t *assetTable) url(p string) string {
	if h, ok := t.hashes[p]; ok {
		return "/static/" + p + "?v=" + h
	}
	return "/static/" + p
}

func (t *assetTable) templ() templates.Assets {
	return templates.Assets{
		CSS:       t.url("css/app.css"),
		AppJS:     t.url("js/app.js"),
		ChartsJS:  t.url("js/charts.js"),
		EChartsJS: t.url("vendor/echarts/echarts.min.js"),
		WhatIfJS:  t.url("js/whatif.js"),
	}
}

// ServeHTTP serves /static/*: unknown or private files are 404, a request with the current
// content hash is cacheable for a year, any other must revalidate.
func (t *assetTable) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p := strings.TrimPrefix(path.Clean(r.URL.Path), "/static/")
	h, ok := t.hashes[p]
	if !ok {
		http.NotFound(w, r)
		return
	}
	if r.URL.Query().Get("v") == h {
		w.Header().Set("Cache-Control", "public, max-age=31536000, immutable")
	} else {
		w.Header().Set("Cache-Control", "no-cache")
	}
	r2 := r.Clone(r.Context())
	r2.URL.Path = "/" + p
	t.files.ServeHTTP(w, r2)
}
