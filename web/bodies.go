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

// parseMemoryFactor × the body size is the memory granted while a large body is parsed: a
// scripted scenario's parse peaked at about 27× its JSON (19 MB: +524 MB, finding M2 of the
// 2026-12c probe); a grant larger than the server's total memory budget waits for all of it.
const parseMemoryFactor = 28

// parseBody calls parse for a request body of size bytes (-1: not known, taken as the largest
// form); a body above bigBodyBytes first waits for a slot of the large-body limiter and a grant
// of the memory budget, which parse then holds. Every route that parses a scenario or a large
// answer goes through it: creations and transforms (transforms.go).
func (s *Server) parseBody(ctx context.Context, size int64, parse func() error) error {
	if err := ctx.Err(); err != nil {
		return err // the client went away while its body was read: nothing to parse for
	}
	if size >= 0 && size <= bigBodyBytes {
		return parse()
	}
	if size < 0 || size > maxFormBytes {
		size = maxFormBytes
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
	grant, err := s.runs.Reserve(wait, parseMemoryFactor*size)
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return uploadsBusy()
	}
	defer grant()
	if err := ctx.Err(); err != nil {
		return err // it went away while waiting for the slot
	}
	return parse()
}
