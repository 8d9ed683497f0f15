package sim

import "os"

// slowTests reports whether the slow, exhaustive tests run: SCALEIN_SLOW=1 (CI sets it). The
// everyday `go test ./...` runs a sample of them instead.
func slowTests() bool { return os.Getenv("SCALEIN_SLOW") == "1" }
