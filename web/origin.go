package web

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/scalein-planner/scalein/sim/hpa"
	"github.com/scalein-planner/scalein/store"
	"github.com/scalein-planner/scalein/templates"
)

// The import's origin (hpa.Origin: the user's object and file) travels with a scenario on the
// web: the scenario form keeps a key to it in a hidden field (origin_key), a run made from that
// form is opened with ?origin=KEY, the run page's "Plan a scale-in" passes the key on, and the
// plan form puts the origin in its own hidden field, so a tune plan's download writes into the
// user's file. The origins are stored content-addressed (store.PutOrigin).

// putOrigin stores an import's origin and returns its key.
func (s *Server) putOrigin(ctx context.Context, o *hpa.Origin) (string, error) {
	b, err := json.Marshal(o)
	if err != nil {
		return "", err
	}
	return s.store.PutOrigin(ctx, b, s.now())
}

// originInto puts the stored origin of key (if any) into the plan form; a key that is not
// there is ignored (the plan page then says the download's names are placeholders).
func (s *Server) originInto(ctx context.Context, p *templates.PlanNewPage, key string) {
	if !store.IsOriginKey(key) {
		return
	}
	if b, err := s.store.GetOrigin(ctx, key); err == nil {
		p.Origin = string(b)
	}
}

// isJSONText reports whether a file is JSON (its first character is { or [).
func isJSONText(s string) bool {
	t := strings.TrimLeft(s, " \t\r\n\ufeff")
	return t != "" && (t[0] == '{' || t[0] == '[')
}
