package whatif

import (
	"fmt"
	"math"
	"strconv"

	"github.com/scalein-planner/scalein/sim"
)

func label(sel string, setSize, waves, remove int, gapMS float64, grace *float64) string {
	var who string
	switch sel {
	case SelectFewestPullsServed:
		who = fmt.Sprintf("the %s peers pulled least from", Workers(setSize))
	case SelectLeastWork:
		who = fmt.Sprintf("the %s with the least work", Workers(setSize))
	default:
		who = fmt.Sprintf("%s by %s", Workers(remove), sel)
	}
	var how string
	switch {
	case waves == 1:
		how = "all at once"
	case waves == remove:
		how = "one by one " + FormatMS(gapMS) + " apart"
	default:
		how = fmt.Sprintf("in %d waves %s apart", waves, FormatMS(gapMS))
	}
	g := "no grace"
	if grace != nil {
		g = "grace " + FormatMS(*grace)
	}
	return who + ", " + how + ", " + g
}

// Workers is "1 worker" or "n workers".
func Workers(n int) string { return count(n, "worker") }

// count is "1 thing" or "n things".
func count(n int, thing string) string {
	if n == 1 {
		return "1 " + thing
	}
	return strconv.Itoa(n) + " " + thing + "s"
}

// requestsKilled is "1 request killed" or "n requests killed" for a headline figure.
func requestsKilled(k float64) string {
	if k == 1 {
		return "1 request killed"
	}
	return sim.FormatNumber(k) + " requests killed"
}

// FormatMS writes a duration in ms as seconds ("30 s", "12.5 s") or ms below a second, through
// the one number formatter (sim.FormatNumber): "482.880296 s", not "482.88029551000005 s".
func FormatMS(ms float64) string {
	if ms != 0 && math.Abs(ms) < 1000 {
		return sim.FormatNumber(ms) + " ms"
	}
	return sim.FormatNumber(ms/1000) + " s"
}

func formatFloat(v float64) string {
	return strconv.FormatFloat(v, 'f', -1, 64)
}
