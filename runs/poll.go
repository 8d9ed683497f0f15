package runs

import (
	"context"
	"time"
)

// pollStore is the one loop that follows something through the store, for what another
// process may change: a run's row (is this attempt still its own? has the run ended?) and a
// sweep's or plan's cancel. It calls check at once and then every interval until check says
// it is done (true) or ctx ends (false).
func pollStore(ctx context.Context, every time.Duration, check func() bool) bool {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		if check() {
			return true
		}
		select {
		case <-ctx.Done():
			return false
		case <-t.C:
		}
	}
}
