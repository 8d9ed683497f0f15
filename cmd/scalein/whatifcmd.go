package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/scalein-planner/scalein/sim"
	"github.com/scalein-planner/scalein/sim/hpa"
	"github.com/scalein-planner/scalein/sim/whatif"
)

// localTraces remembers the local trace files a scenario read, by sha256, so scenarios derived
// from it (sweep points, plan candidates) can be parsed again without the path.
type localTraces struct {
	read func(string) ([]byte, error)
	mu   sync.Mutex
	data map[string][]byte
}

func (l *localTraces) ReadFile(p string) ([]byte, error) {
	b, err := l.read(p)
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256(b)
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.data == nil {
		l.data = map[string][]byte{}
	}
	l.data[hex.EncodeToString(sum[:])] = b
	return b, nil
}

func (l *localTraces) Trace(sha string) ([]byte, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if b, ok := l.data[sha]; ok {
		return b, nil
	}
	return nil, fmt.Errorf("not among the traces read on this command line")
}

// loadScenario reads and parses -config for the sweep and plan commands. It returns the exit
// code to use when the scenario cannot be loaded (0 when it can).
func loadScenario(cmd, config string, stdin io.Reader, stderr io.Writer) (*sim.Scenario, sim.ParseEnv, int) {
	data, displayName, baseDir, err := readConfig(config, stdin)
	if err != nil {
		fmt.Fprintf(stderr, "scalein %s: %v\n", cmd, err)
		return nil, sim.ParseEnv{}, 1
	}
	traces := &localTraces{read: localTraceReader(baseDir)}
	env := sim.ParseEnv{ReadFile: traces.ReadFile, Traces: traces}
	s, err := sim.Parse(data, env)
	if err != nil {
		return nil, env, printValidation(cmd, displayName, err, stderr)
	}
	return s, sim.ParseEnv{Traces: traces}, 0
}

// printValidation prints every problem of a validation error on its own line (exit 2), or the
// error itself (exit 1).
func printValidation(cmd, prefix string, err error, stderr io.Writer) int {
	var ve *sim.ValidationError
	if errors.As(err, &ve) {
		for _, fe := range ve.Errors {
			fmt.Fprintf(stderr, "%s: %s\n", prefix, fe)
		}
		return 2
	}
	fmt.Fprintf(stderr, "scalein %s: %s: %v\n", cmd, prefix, err)
	return 1
}

// varyFlags collects repeated -vary PATH=V1,V2,… flags.
type varyFlags []whatif.Axis

func (v *varyFlags) String() string { return "" }

func (v *varyFlags) Set(s string) error {
	path, list, ok := strings.Cut(s, "=")
	if !ok || strings.TrimSpace(path) == "" || list == "" {
		return fmt.Errorf("want PATH=V1,V2,… like kvcr.bandwidth_gbps=5,10,40 (got %q)", s)
	}
	ax := whatif.Axis{Path: strings.TrimSpace(path)}
	for _, tok := range strings.Split(list, ",") {
		ax.Values = append(ax.Values, whatif.ParseValue(strings.TrimSpace(tok)))
	}
	*v = append(*v, ax)
	return nil
}

// sweepOptions are the flags of "scalein sweep".
type sweepOptions struct {
	vary                varyFlags
	config, out, format string
	parallel, maxPoints int
	timing              bool
}

// parseSweepFlags reads the flags; ok false means exit with code.
func parseSweepFlags(args []string, stderr io.Writer) (o sweepOptions, code int, ok bool) {
	fs := newCommandFlags("sweep", "scalein sweep -config FILE|- -vary PATH=V1,V2,… [-vary …] [-out FILE] [-format json|csv] [-parallel N] [-timing]", stderr)
	fs.StringVar(&o.config, "config", "", "scenario JSON file, or - for stdin (required)")
	fs.Var(&o.vary, "vary", "PATH=V1,V2,… a field and its values (repeat for up to 3 fields)")
	fs.StringVar(&o.out, "out", "", "write the result here instead of stdout (atomically)")
	fs.StringVar(&o.format, "format", "json", "json or csv")
	fs.IntVar(&o.parallel, "parallel", 0, "runs at once (0: one per CPU)")
	fs.IntVar(&o.maxPoints, "max-points", whatif.DefaultMaxPoints, "refuse sweeps with more points than this")
	fs.BoolVar(&o.timing, "timing", false, "print to stderr how long the runs took and how busy the slots were")
	if code, ok := fs.parse(args); !ok {
		return o, code, false
	}
	switch {
	case fs.NArg() > 0:
		return o, fs.usageError("unexpected argument %q", fs.Arg(0)), false
	case o.config == "":
		return o, fs.usageError("-config is required (a scenario file, or - to read stdin)"), false
	case len(o.vary) == 0:
		return o, fs.usageError("give at least one -vary PATH=V1,V2,…"), false
	case o.format != "json" && o.format != "csv":
		return o, fs.usageError("-format must be json or csv (got %q)", o.format), false
	case o.parallel < 0:
		return o, fs.usageError("-parallel must be 0 (one per CPU) or more (got %d)", o.parallel), false
	case o.maxPoints < 1:
		return o, fs.usageError("-max-points must be at least 1 (got %d)", o.maxPoints), false
	}
	return o, 0, true
}

// runSweep is "scalein sweep": every combination of the -vary values, simulated in parallel.
func runSweep(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	o, code, ok := parseSweepFlags(args, stderr)
	if !ok {
		return code
	}
	base, env, code := loadScenario("sweep", o.config, stdin, stderr)
	if base == nil {
		return code
	}
	points, err := whatif.Expand(base, o.vary, env, o.maxPoints)
	if err != nil {
		return printValidation("sweep", "-vary", err, stderr)
	}
	runner, done := localRunner("sweep", o.parallel, o.timing, stderr)
	res, err := whatif.RunSweep(ctx, runner, o.vary, points)
	if err != nil {
		return runFailed(stderr, err)
	}
	done()
	failed := 0
	for i := range res.Points {
		res.Points[i].RunID = "" // no stored runs on the command line
		if res.Points[i].Status != whatif.StatusDone {
			failed++
		}
	}
	body, err := encodeSweep(res, o.format)
	if err != nil {
		fmt.Fprintf(stderr, "scalein sweep: encode the result: %v\n", err)
		return 1
	}
	if code := writeOutput("sweep", o.out, body, stdout, stderr); code != 0 {
		return code
	}
	if failed > 0 {
		fmt.Fprintf(stderr, "scalein sweep: %d of %d points failed; see their error\n", failed, len(res.Points))
		return 1
	}
	return 0
}

func encodeSweep(res *whatif.SweepResult, format string) ([]byte, error) {
	if format != "csv" {
		return encodeJSON(res)
	}
	var buf bytes.Buffer
	if err := whatif.WriteCSV(&buf, res.Axes, res.Points); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// localRunner is the in-process runner of a sweep or plan with a progress line on a terminal.
// done ends the progress line and, with timing, prints how long the runs took and how busy the
// slots were (docs/performance.md reads these).
func localRunner(cmd string, parallel int, timing bool, stderr io.Writer) (*whatif.LocalRunner, func()) {
	progress := newProgressLine(stderr, isTerminal(stderr))
	report := progress.reporter(0, 1)
	runner := &whatif.LocalRunner{Parallel: parallel, Progress: func(done, total int) {
		if report != nil {
			report(float64(done) / float64(total))
		}
	}}
	start := time.Now()
	return runner, func() {
		progress.finish()
		if !timing {
			return
		}
		wall := time.Since(start)
		n, runTime := runner.Usage()
		slots := runner.Slots()
		if n == 0 {
			fmt.Fprintf(stderr, "scalein %s: nothing simulated; %.1f s\n", cmd, wall.Seconds())
			return
		}
		mean := runTime / time.Duration(n)
		bound := time.Duration(float64(mean) * float64(n) / float64(slots))
		// Runs a plan started ahead of need and did not use are left out of the runs, the mean
		// and the busy share: the slot time they took is said apart.
		wasted := ""
		if wn, wt := runner.Wasted(); wn > 0 {
			wasted = fmt.Sprintf("; %d run(s) started ahead of need and not used took %.2f s of slot time besides", wn, wt.Seconds())
		}
		fmt.Fprintf(stderr, "scalein %s: %d runs on %d slots in %.1f s; a run took %.2f s on average; mean run × runs ÷ slots = %.1f s; wall ÷ that = %.3f (slots busy %.0f %%)%s\n",
			cmd, n, slots, wall.Seconds(), mean.Seconds(), bound.Seconds(), wall.Seconds()/bound.Seconds(), 100*runTime.Seconds()/(float64(slots)*wall.Seconds()), wasted)
	}
}

func encodeJSON(v any) ([]byte, error) {
	body, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(body, '\n'), nil
}

func writeOutput(cmd, out string, body []byte, stdout, stderr io.Writer) int {
	if out == "" {
		if _, err := stdout.Write(body); err != nil {
			fmt.Fprintf(stderr, "scalein %s: write the result: %v\n", cmd, err)
			return 1
		}
		return 0
	}
	if err := writeFileAtomic(out, body); err != nil {
		fmt.Fprintf(stderr, "scalein %s: %v\n", cmd, err)
		return 1
	}
	return 0
}

// optionalFloat is a float flag that records whether it was given.
type optionalFloat struct{ v *float64 }

func (o *optionalFloat) String() string {
	if o.v == nil {
		return ""
	}
	return strconv.FormatFloat(*o.v, 'g', -1, 64)
}

func (o *optionalFloat) Set(s string) error {
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return fmt.Errorf("want a number of ms (got %q)", s)
	}
	o.v = &f
	return nil
}

// planOptions are the flags of "scalein plan".
type planOptions struct {
	config, out string
	hpa         string
	manifest    string // with -tune: the user's file the recommendation is written into
	selectName  string
	force       bool
	parallel    int
	timing      bool
	req         whatif.Request
}

// parsePlanFlags reads the flags into a request; ok false means exit with code.
func parsePlanFlags(args []string, stderr io.Writer) (o planOptions, code int, ok bool) {
	var search, tune, role string
	var remove, maxRuns int
	var startMS float64
	var maxKilled int64
	var ttft, e2e optionalFloat
	var minAttainment optionalShare
	var capacity, diagnose bool
	var ratePerWorker float64
	var baseline int
	fs := newCommandFlags("plan", "scalein plan -config FILE|- (-remove N -start-ms T [-role prefill|decode] | -tune autoscaler | -capacity | -diagnose [-rate-per-worker R]) [-baseline-workers N] [-ttft-p99-ms X] [-e2e-p99-ms X] [-min-attainment F] [-max-killed K] [-max-runs M] [-search JSON] [-out FILE] [-manifest YOURS [-select NAME]] [-hpa FILE [-force]] [-parallel N] [-timing]", stderr)
	fs.StringVar(&o.config, "config", "", "scenario JSON file, or - for stdin (required; its scale_in is replaced, or with -tune its autoscaler's settings searched)")
	fs.IntVar(&remove, "remove", 0, "how many workers to drain (required unless -tune)")
	fs.Float64Var(&startMS, "start-ms", 0, "drain no worker before this instant (ms)")
	fs.StringVar(&role, "role", "", "with prefill and decode pools (disaggregation): the pool whose workers -remove drains, prefill or decode (docs/planning.md#pools)")
	fs.StringVar(&tune, "tune", "", `"autoscaler": search the scenario's autoscaler settings for the fewest GPU-hours within the limits instead of a drain (docs/planning.md)`)
	fs.BoolVar(&capacity, "capacity", false, "find one worker's capacity: the highest steady request rate per worker whose runs meet the scenario's slo for -min-attainment of requests (default 0.99), by bisection to 2 % (docs/planning.md)")
	fs.BoolVar(&diagnose, "diagnose", false, "how far the scenario's autoscaler is from an ideal fleet, and what its signal lag, decision lag and warm-up each cost in attainment and GPU-hours (Shapley values over 8 runs; docs/planning.md)")
	fs.Float64Var(&ratePerWorker, "rate-per-worker", 0, "with -diagnose, one worker's capacity at the slo in requests/s (default: found by a capacity search)")
	fs.IntVar(&baseline, "baseline-workers", 0, "with -tune or -diagnose, the fixed fleet the autoscaler is compared with (default: its max_workers)")
	fs.StringVar(&o.hpa, "hpa", "", "with -tune, also write the recommended settings as Kubernetes manifests (HPA and Deployment patches) to this file")
	fs.BoolVar(&o.force, "force", false, "with -hpa, replace the file if it exists (without it an existing file is refused: it may be your own manifest)")
	fs.StringVar(&o.manifest, "manifest", "", "with -tune, your HPA or ScaledObject file (the one the scenario was imported from): the recommended settings are written into it in place, only the changed fields changed (to write the edited copy elsewhere, add -hpa FILE)")
	fs.StringVar(&o.selectName, "select", "", "with -manifest, the autoscaler of the file to write into (its metadata.name) when it holds several")
	fs.Var(&ttft, "ttft-p99-ms", "feasible only with TTFT p99 at or below this (ms); no limit by default")
	fs.Var(&e2e, "e2e-p99-ms", "feasible only with end-to-end p99 at or below this (ms); no limit by default")
	fs.Var(&minAttainment, "min-attainment", "feasible only when at least this share of requests meets the scenario's slo (0.99 for 99 %); needs an slo; no limit by default")
	fs.Int64Var(&maxKilled, "max-killed", 0, "feasible only with at most this many killed requests")
	fs.IntVar(&maxRuns, "max-runs", whatif.DefaultMaxPlanRuns, "simulate at most this many schedules")
	fs.IntVar(&o.parallel, "parallel", 0, "runs at once (0: one per CPU)")
	fs.StringVar(&search, "search", "", `JSON overriding the search space, like {"waves": [1, 2], "gaps_ms": [10000]} (docs/planning.md)`)
	fs.StringVar(&o.out, "out", "", "write the plan here instead of stdout (atomically)")
	fs.BoolVar(&o.timing, "timing", false, "print to stderr how long the runs took and how busy the slots were")
	if code, ok := fs.parse(args); !ok {
		return o, code, false
	}
	switch {
	case fs.NArg() > 0:
		return o, fs.usageError("unexpected argument %q", fs.Arg(0)), false
	case o.config == "":
		return o, fs.usageError("-config is required (a scenario file, or - to read stdin)"), false
	case diagnose && (capacity || tune != "" || remove != 0 || startMS != 0):
		return o, fs.usageError("-diagnose is a plan of its own; leave out -capacity, -remove, -start-ms and -tune"), false
	case baseline != 0 && !diagnose && tune == "":
		return o, fs.usageError("-baseline-workers is the fixed fleet a -tune or -diagnose plan compares with: use it with one of them"), false
	case diagnose:
		o, code, ok := diagnosePlanFlags(o, fs, minAttainment, ratePerWorker, maxRuns, search)
		o.req.Goal.BaselineWorkers = baseline
		return o, code, ok
	case ratePerWorker != 0:
		return o, fs.usageError("-rate-per-worker is μ for -diagnose: use it with -diagnose"), false
	case capacity && (tune != "" || remove != 0 || startMS != 0):
		return o, fs.usageError("-capacity is a plan of its own; leave out -remove, -start-ms and -tune"), false
	case capacity:
		return capacityPlanFlags(o, fs, minAttainment, maxRuns, search)
	case tune == "" && remove == 0:
		return o, fs.usageError("-remove is required: how many workers to drain (or -tune autoscaler to tune the scenario's autoscaler)"), false
	case tune != "" && (remove != 0 || startMS != 0):
		return o, fs.usageError("-remove and -start-ms are for a drain plan; leave them out with -tune"), false
	case tune == "" && o.hpa != "":
		return o, fs.usageError("-hpa writes a tune plan's recommended settings: use it with -tune autoscaler"), false
	case tune == "" && o.manifest != "":
		return o, fs.usageError("-manifest writes a tune plan's recommended settings into your file: use it with -tune autoscaler"), false
	case o.selectName != "" && o.manifest == "":
		return o, fs.usageError("-select names the autoscaler of the -manifest file: use it with -manifest"), false
	case o.force && o.hpa == "":
		return o, fs.usageError("-force replaces the -hpa file: use it with -hpa"), false
	case o.hpa != "" && !o.force && fileExists(o.hpa):
		return o, fs.usageError("-hpa %s: the file exists and is not replaced (it may be your own manifest, to import with scalein import); name a new file, or add -force to replace it", o.hpa), false
	case o.parallel < 0:
		return o, fs.usageError("-parallel must be 0 (one per CPU) or more (got %d)", o.parallel), false
	}
	o.req = whatif.Request{Goal: whatif.Goal{Remove: remove, StartMS: startMS, Tune: tune, BaselineWorkers: baseline, Role: role},
		Constraints: whatif.Constraints{TTFTP99MS: ttft.v, E2EP99MS: e2e.v, MaxKilled: &maxKilled, MinAttainment: minAttainment.v}}
	if search != "" {
		dec := json.NewDecoder(strings.NewReader(search))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&o.req.Search); err != nil {
			return o, fs.usageError("-search is not a valid search object: %v", err), false
		}
	}
	o.req.Search.MaxRuns = maxRuns
	return o, 0, true
}

// runPlan is "scalein plan": search scale-in schedules and recommend one.
func runPlan(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	o, code, ok := parsePlanFlags(args, stderr)
	if !ok {
		return code
	}
	base, _, code := loadScenario("plan", o.config, stdin, stderr)
	if base == nil {
		return code
	}
	var origin *hpa.Origin
	if o.manifest != "" && base.Autoscaler != nil {
		// Read the file first: a file that cannot take the settings fails before the plan runs.
		data, err := readLimited(o.manifest, hpa.MaxManifestBytes)
		if err != nil {
			fmt.Fprintf(stderr, "scalein plan: -manifest: %v\n", err)
			return 1
		}
		im, err := hpa.ImportWith(data, *base.Autoscaler, hpa.ImportOptions{Select: o.selectName, WholeFile: true})
		if err != nil {
			fmt.Fprintf(stderr, "scalein plan: -manifest %s: %v\n", o.manifest, err)
			return 2
		}
		origin = im.Origin
	}
	if pa, role := base.PoolAutoscalers, o.req.Goal.Role; o.manifest != "" && pa != nil && o.req.Goal.Kind() == whatif.KindTune {
		// A tune plan of one pool writes that pool's autoscaler into its own object of the file.
		a := pa.Prefill
		if role == sim.RoleDecode {
			a = pa.Decode
		}
		if a != nil && (role == sim.RolePrefill || role == sim.RoleDecode) {
			data, err := readLimited(o.manifest, hpa.MaxManifestBytes)
			if err != nil {
				fmt.Fprintf(stderr, "scalein plan: -manifest: %v\n", err)
				return 1
			}
			im, err := hpa.ImportWith(data, *a, hpa.ImportOptions{Select: o.selectName, WholeFile: true})
			if err != nil {
				fmt.Fprintf(stderr, "scalein plan: -manifest %s: %v\n", o.manifest, err)
				return 2
			}
			switch {
			case im.Pools != nil && im.Pools.Of(role).Origin != nil:
				origin = im.Pools.Of(role).Origin
			case im.Pools == nil && o.selectName != "":
				origin = im.Origin // the object named by -select
			default:
				fmt.Fprintf(stderr, "scalein plan: -manifest %s: no autoscaler object of the file for the %s pool can take the settings (label its autoscaler %s: %s, or name it with -select)\n", o.manifest, role, hpa.RoleLabel, role)
				return 2
			}
		}
	}
	runner, done := localRunner("plan", o.parallel, o.timing, stderr)
	res, err := whatif.Plan(ctx, runner, base, o.req)
	if err != nil {
		var ve *sim.ValidationError
		if errors.As(err, &ve) {
			return printValidation("plan", "plan", err, stderr)
		}
		return runFailed(stderr, err)
	}
	done()
	clearRunIDs(res)
	body, err := encodeJSON(res)
	if err != nil {
		fmt.Fprintf(stderr, "scalein plan: encode the plan: %v\n", err)
		return 1
	}
	if o.hpa != "" || origin != nil {
		path := o.hpa
		if path == "" {
			path = o.manifest // in place: the user asked for their own file
		}
		if code := writeHPA(path, base, res, origin, stderr); code != 0 {
			return code
		}
	}
	return writeOutput("plan", o.out, body, stdout, stderr)
}

// clearRunIDs drops the run ids: the command line stores no runs.
func clearRunIDs(res *whatif.Result) {
	for i := range res.Candidates {
		res.Candidates[i].RunID = ""
	}
	if res.Baseline != nil {
		res.Baseline.RunID = ""
	}
	if res.Recommended != nil {
		res.Recommended.RunID = ""
	}
	for i := range res.Baselines {
		res.Baselines[i].RunID = ""
	}
}

// fileExists reports whether path names anything (a file, a directory, a device).
func fileExists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}
