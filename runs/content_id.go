package runs

import (
	"crypto/sha256"
	"encoding/base32"
	"fmt"

	"github.com/scalein-planner/scalein/sim"
)

// lowerBase32 matches the alphabet of run ids, so every id in a URL has the same shape.
var lowerBase32 = base32.NewEncoding("abcdefghijklmnopqrstuvwxyz234567").WithPadding(base32.NoPadding)

// contentID is 16 characters of base32 of SHA-256 over the parts and the model version: the
// same request gives the same id, and a new model version gives new ids.
func contentID(kind string, parts ...[]byte) string {
	h := sha256.New()
	h.Write([]byte(kind))
	for _, p := range parts {
		fmt.Fprintf(h, "\x00%d\x00", len(p))
		h.Write(p)
	}
	h.Write([]byte(sim.ModelVersion))
	return lowerBase32.EncodeToString(h.Sum(nil))[:16]
}
