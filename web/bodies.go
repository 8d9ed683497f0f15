package web

import (
	"context"
)

// bigBodyBytes is the request body size above which parsing takes a slot of the large-body
// limiter and memory is handed back afterwards.
const bigBodyBytes = 1 << 20

// bigBodies limits how many large request bodies are parsed at once.
type bigBodies struct{ slots chan struct{} }

func newBigBodies(n int) *bigBodies { return &bigBodies{slots: make(chan struct{}, n)} }

// parseBody calls parse for a request body of size bytes; a body above bigBodyBytes first
// waits for a slot of the large-body limiter, which parse then holds.
func (s *Server) parseBody(ctx context.Context, size int64, parse func() error) error {
	if size <= bigBodyBytes {
		return parse()
	}
	// The body is read already (the wait is for parsing it); a wait as long as an upload's,
	// then "uploads are busy" (finding M4: it used to wait as long as the client would).
	wait, cancel := context.WithTimeout(ctx, s.exports().uploadWait)
	defer cancel()
	select {
	case s.bodies.slots <- struct{}{}:
	case <-wait.Done():
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return uploadsBusy()
	}
	defer func() {
		<-s.bodies.slots
		s.runs.NoteBigRequest()
	}()
	return parse()
}
