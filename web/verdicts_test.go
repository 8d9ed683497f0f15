package web

import (
	"time"

	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/scalein-planner/scalein/runs"
	"github.com/scalein-planner/scalein/sim"
	"github.com/scalein-planner/scalein/web/format"
)

// runPreset parses and runs a preset, after edit (if any) changes its scenario.
func runPreset(t *testing.T, key string, edit func(*sim.Scenario)) (*sim.Scenario, *sim.Report) {
	t.Helper()
	p, ok := sim.PresetByKey(key)
	require.True(t, ok, key)
	sc, err := sim.Parse(p.JSON, sim.ParseEnv{})
	require.NoError(t, err)
	if edit != nil {
		edit(sc)
	}
	rep, err := sim.Run(context.Background(), sc, sim.RunOptions{})
	require.NoError(t, err)
	return sc, rep
}

// The incident preset, guard on against guard off: the example of issue 8 word for word.
func TestVerdictsIncidentGuard(t *testing.T) {
	on, repOn := runPreset(t, "incident", nil)
	require.True(t, on.KVCR.RejectDrainingSources)
	off, err := sim.Counterpart(on, sim.CounterpartGuard)
	require.NoError(t, err)
	repOff, err := sim.Run(context.Background(), off, sim.RunOptions{})
	require.NoError(t, err)

	labelA, labelB, differs := sideLabels(on, off, on.Name, off.Name)
	assert.Equal(t, "guard on", labelA)
	assert.Equal(t, "guard off", labelB)
	assert.Equal(t, "guard on / guard off", differs)
	got := compareVerdicts(sim.Compare(on, off, repOn, repOff), repOn, repOff, labelB)
	assert.Contains(t, got, "With the guard off, worker 1 is removed 9.55 ms later (77 → 86.6 ms): it waited 9.55 ms for one pull staged from it while it was draining.")
	assert.Contains(t, got, "With the guard off, the latest removal deadline moves 9.55 ms later (77 → 86.6 ms).")

	single := strings.Join(runVerdicts(repOn, true), "\n")
	assert.Contains(t, single, "worker 1, is removed at 77 ms, 57 ms after it was marked draining: its own requests decide it")
	assert.Contains(t, single, "The guard turned down 1 hint whose source was draining")
	single = strings.Join(runVerdicts(repOff, false), "\n")
	assert.Contains(t, single, "1 pull was staged from a draining source")
	assert.Contains(t, single, "then it waited 9.55 ms for peers pulling from it (pin wait)")
}

// 4× the bandwidth on the incident preset (guard on) does not move the removal: no pin wait.
func TestVerdictsBandwidthDoesNotMoveRemoval(t *testing.T) {
	a, repA := runPreset(t, "incident", func(s *sim.Scenario) { s.KVCR.BandwidthGBps = 25 })
	b, repB := runPreset(t, "incident", func(s *sim.Scenario) { s.KVCR.BandwidthGBps = 100 })
	labelA, labelB, differs := sideLabels(a, b, a.Name, b.Name)
	assert.Equal(t, "kvcr.bandwidth_gbps 25", labelA)
	assert.Equal(t, "kvcr.bandwidth_gbps 100", labelB)
	assert.Equal(t, "kvcr.bandwidth_gbps 25 / 100", differs)
	got := compareVerdicts(sim.Compare(a, b, repA, repB), repA, repB, labelB)
	assert.Equal(t, "4× the bandwidth did not move the latest removal deadline (77 ms): the drained workers' own work dominates it.", got[0])
}

// E2 has one partial pull and no scale-in.
func TestVerdictsE2(t *testing.T) {
	_, rep := runPreset(t, "e2", nil)
	got := runVerdicts(rep, true)
	require.Len(t, got, 2)
	assert.Contains(t, got[0], "No worker was drained")
	assert.Equal(t, "The one staged pull was partial: a follow-up turn that extends a cached prefix is partial by definition, since its newest blocks exist on no worker yet.", got[1])
	cards := runCards(rep, format.Clock{})
	assert.Equal(t, "1 pull", cards[2].Value)
	assert.Contains(t, cards[2].Note, "0 pulls succeeded, 1 pull partial")
	assert.Equal(t, "What is a partial pull?", cards[2].HelpTitle, "the definition is folded away so the card stays short")
	assert.Contains(t, cards[2].Help, "partial by definition")
	// A figure reads to about three significant digits; the exact one is its title.
	assert.Equal(t, "4.86 ms", cards[3].Value)
	assert.Equal(t, "4.859833 ms", cards[3].Exact)
}

// The Mooncake preset drains 4 of 16 workers with a grace deadline.
func TestVerdictsMooncake(t *testing.T) {
	_, rep := runPreset(t, "mooncake-16to12", nil)
	got := strings.Join(runVerdicts(rep, true), "\n")
	assert.Contains(t, got, "The last drained worker to go, worker ")
	// Every sentence is a sentence.
	for _, v := range runVerdicts(rep, true) {
		assert.True(t, strings.HasSuffix(v, "."), v)
		assert.NotContains(t, v, " 1 pulls")
		assert.NotContains(t, v, " 1 workers")
	}
}

func TestChangePhrase(t *testing.T) {
	d := func(path, a, b string) []sim.FieldDiff { return []sim.FieldDiff{{Path: path, A: a, B: b}} }
	assert.Equal(t, "4× the bandwidth", changePhrase(d("kvcr.bandwidth_gbps", "25", "100"), ""))
	assert.Equal(t, "1/2 of the workers", changePhrase(d("fleet.workers", "16", "8"), ""))
	assert.Equal(t, "With kvcr.bandwidth_gbps at 30 instead of 25", changePhrase(d("kvcr.bandwidth_gbps", "25", "30"), ""))
	assert.Equal(t, "With router.policy at \"round_robin\" instead of \"kv_aware\"", changePhrase(d("router.policy", `"kv_aware"`, `"round_robin"`), ""))
	assert.Equal(t, "Without hints", changePhrase(d("router.hints", "true", "false"), "no hints"))
	assert.Equal(t, "With these 2 changes", changePhrase(append(d("a", "1", "2"), d("b", "1", "2")...), ""))
}

func TestEditAsNewName(t *testing.T) {
	assert.Equal(t, "incident (edit)", editAsNewName("incident"))
	assert.Equal(t, "incident (edit 2)", editAsNewName("incident (edit)"))
	assert.Equal(t, "incident (edit 10)", editAsNewName("incident (edit 9)"))
}

func TestUnits(t *testing.T) {
	assert.Equal(t, "1 pull", format.Count(1, "pulls"))
	assert.Equal(t, "0 pulls", format.Count(0, "pulls"))
	assert.Equal(t, "2 requests", format.Count(2, "requests"))
	assert.Equal(t, "1 ms", format.WithUnit(ptr(1), "ms"))
	assert.Equal(t, "1 request", format.WithUnit(ptr(1), "requests"))
}

// A drain that takes no time (nothing left to finish, nobody pulling) is said so.
func TestVerdictsInstantDrain(t *testing.T) {
	rep := &sim.Report{Workers: []sim.WorkerRow{{ID: 7, MarkedAtMS: ptr(60000), LastWorkMS: ptr(60000), RemovedAtMS: ptr(60000), DrainMS: ptr(0), PinWaitMS: ptr(0)}}}
	got := runVerdicts(rep, true)
	assert.Equal(t, "The last drained worker to go, worker 7, is removed at 60 s: it had no request left to finish and no peer pulling from it, so it went the moment it was marked.", got[0])
}

// "Edit as new" prefills the form with a marked name, so the new run is told apart.
func TestEditAsNewMarksName(t *testing.T) {
	s := newFakeServer(t, runs.Config{}, false)
	id := submitAPI(t, s, testScenario("original"))
	rec := get(t, s, "/?from="+id)
	require.Equal(t, http.StatusOK, rec.Code)
	doc := parseHTML(t, rec.Body)
	val, ok := doc.Find(`input[name="name"]`).Attr("value")
	require.True(t, ok, "the form has a name field")
	assert.Equal(t, "original (edit)", val)
}

// The latest removal deadline is an instant: on a night with a start it reads in clock time, not
// as a duration from the start ("21:47:31 h"); without one, as the time from the start.
func TestLatestRemovalCardReadsClockTime(t *testing.T) {
	_, rep := runPreset(t, "incident", nil)
	cards := runCards(rep, format.Clock{})
	assert.Equal(t, "77 ms", cards[0].Value)
	start := time.Date(2026, 12, 3, 3, 0, 0, 0, time.UTC)
	cards = runCards(rep, format.ClockAt(start, true))
	assert.Equal(t, "03:00:00 UTC", cards[0].Value)
	assert.Equal(t, "77 ms", cards[0].Exact)
}

// The pulls sentence groups every count's thousands alike, not only the staged ones.
func TestVerdictsPullCountsGrouped(t *testing.T) {
	a, b := &sim.Report{}, &sim.Report{}
	a.KVCR.Staged, a.KVCR.Partial, a.KVCR.Success = 67188, 67000, 188
	got := compareVerdicts(sim.Comparison{}, a, b, "no hints")
	want := "Pulls staged: " + format.Number(67188) + " in A (" + format.Number(188) + " succeeded, " + format.Number(67000) + " partial), 0 in B (0 succeeded, 0 partial)."
	assert.Contains(t, got, want)
	assert.NotContains(t, strings.Join(got, " "), "67000", "no count without its thousands grouped")
}
