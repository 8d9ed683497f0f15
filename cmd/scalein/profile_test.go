package main

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"strings"
	"time"
)

// envProfile names a directory into which every scalein process a test starts (serve, worker)
// writes its CPU profile, in chunks of profileChunk so that a process killed with SIGKILL
// leaves all but its last chunk, and its mutex and block profiles at the end of each chunk:
// SCALEIN_SOAK_PROFILE=/tmp/prof docs/measure/soak.sh, then go tool pprof on the files named
// after the command and pid (docs/performance.md, "Soak").
const envProfile = "SCALEIN_SOAK_PROFILE"

const profileChunk = 10 * time.Second

// profileInBackground starts the chunked profiles when envProfile is set.
func profileInBackground(args []string) {
	dir := os.Getenv(envProfile)
	if dir == "" {
		return
	}
	cmd := "serve"
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		cmd = args[0]
	}
	runtime.SetMutexProfileFraction(10)
	runtime.SetBlockProfileRate(int(time.Millisecond))
	go func() {
		for i := 0; ; i++ {
			name := func(kind string) string {
				return filepath.Join(dir, fmt.Sprintf("%s-%d-%03d.%s", cmd, os.Getpid(), i, kind))
			}
			f, err := os.Create(name("cpu"))
			if err != nil {
				return
			}
			if err := pprof.StartCPUProfile(f); err != nil {
				f.Close()
				return
			}
			time.Sleep(profileChunk)
			pprof.StopCPUProfile()
			f.Close()
			for _, kind := range []string{"mutex", "block"} {
				if f, err := os.Create(name(kind)); err == nil {
					_ = pprof.Lookup(kind).WriteTo(f, 0)
					f.Close()
				}
			}
		}
	}()
}
