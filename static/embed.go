// Package static holds the app's CSS, its own JavaScript and the vendored front-end libraries,
// embedded so the binary serves them without touching the disk or a CDN.
package static

import "embed"

// FS is every file of this folder. The pattern is "*" rather than a list of folders so that the
// package builds whether or not vendor/ has been fetched yet; web serves only css/, js/ and
// vendor/ from it.
//
//go:embed *
var FS embed.FS
