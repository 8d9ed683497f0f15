package main

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/scalein-planner/scalein/sim"
)

// simFlags are the options of "scalein sim".
type simFlags struct {
	config    string
	out       string
	requests  bool
	pair      string
	verbose   bool
	maxMemory string
	passes    string // export one worker's passes as FPM lines (passesexport.go)
	worker    int
	// baseline is -baseline-workers: the fixed fleet of -pair autoscaler (0: max_workers).
	baseline int
}

// pairOutput is what -pair writes: both reports and their comparison.
type pairOutput struct {
	A          *sim.Report    `json:"a"`
	B          *sim.Report    `json:"b"`
	Comparison sim.Comparison `json:"comparison"`
}

// runSim runs one scenario (or a scenario and its counterpart) headless. Exit codes: 0 ok,
// 2 bad usage or an invalid scenario (every problem on stderr, one per line), 1 anything else.
func runSim(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	f, code := parseSimFlags(args, stderr)
	if code >= 0 {
		return code
	}
	s, displayName, code := readSimScenario(f, stdin, stderr)
	if code != 0 {
		return code
	}
	if code := checkMemory(s, f, displayName, stderr); code != 0 {
		return code
	}
	collectTighterIfLarge(s)
	export, err := openPassExport(f.passes, f.worker, s)
	if err != nil {
		fmt.Fprintf(stderr, "scalein sim: %v\n", err)
		return 2
	}
	defer export.abort()
	out, code := runScenarios(ctx, s, f.pair, f.baseline, export.record(), stderr)
	if code != 0 {
		return code
	}
	if err := export.commit(); err != nil {
		fmt.Fprintf(stderr, "scalein sim: %v\n", err)
		return 1
	}
	return writeReport(out, f.out, stdout, stderr)
}

// parseSimFlags reads the command line; it returns an exit code (0 for -help) when the command
// ends there, and -1 otherwise.
func parseSimFlags(args []string, stderr io.Writer) (simFlags, int) {
	var f simFlags
	fs := flag.NewFlagSet("scalein sim", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&f.config, "config", "", "scenario JSON file, or - for stdin (required)")
	fs.StringVar(&f.out, "out", "", "write the report here instead of stdout (atomically)")
	fs.BoolVar(&f.requests, "requests", false, "include one row per request in the report")
	fs.BoolVar(&f.verbose, "v", false, "print the scenario's memory estimate, by what drives it, to stderr")
	fs.StringVar(&f.maxMemory, "max-memory", "", "refuse a scenario whose memory estimate exceeds this size (like 6GB or 2GiB; default: no limit)")
	fs.StringVar(&f.passes, "passes", "", "also write the passes of worker -worker to this file as FPM JSON lines (docs/calibration.md)")
	fs.IntVar(&f.worker, "worker", -1, "the worker whose passes -passes writes")
	fs.StringVar(&f.pair, "pair", "", `also run the counterpart and compare: "hints" (hints on/off), "guard" (draining-source guard on/off), "autoscaler" (the autoscaler against a fixed fleet of its max_workers, or of -baseline-workers); with prefill and decode pools "load-failure" (fail against recompute), "lease" (heartbeat against a fixed 480 s hold, vLLM before 0.22) or "prefill-drain" (three runs: wait, fixed and skip, each compared with wait)`)
	fs.IntVar(&f.baseline, "baseline-workers", 0, "with -pair autoscaler, the fixed fleet's workers (default: the autoscaler's max_workers)")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: scalein sim -config FILE|- [-out FILE] [-requests] [-pair hints|guard|autoscaler [-baseline-workers N]|load-failure|lease|prefill-drain] [-v] [-max-memory SIZE] [-passes FILE -worker N]")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return f, 0
		}
		return f, 2
	}
	usageError := func(format string, a ...any) (simFlags, int) {
		fmt.Fprintf(stderr, "scalein sim: "+format+"\n", a...)
		fs.Usage()
		return f, 2
	}
	switch {
	case fs.NArg() > 0:
		return usageError("unexpected argument %q", fs.Arg(0))
	case f.config == "":
		return usageError("-config is required (a scenario file, or - to read stdin)")
	case (f.passes != "") != (f.worker >= 0):
		return usageError("-passes FILE and -worker N go together (N is a worker id, 0 or more)")
	case f.passes != "" && f.pair != "":
		return usageError("-passes exports one run's passes; it does not combine with -pair")
	case f.pair != "" && !slices.Contains(pairKinds(), f.pair):
		return usageError("-pair must be one of %s (got %q)", strings.Join(pairKinds(), ", "), f.pair)
	case f.baseline != 0 && f.pair != sim.CounterpartAutoscaler:
		return usageError("-baseline-workers is the fixed fleet of -pair autoscaler: use it with -pair autoscaler")
	case f.baseline < 0:
		return usageError("-baseline-workers must be a number of workers, 1 or more (got %d); leave it out for the autoscaler's max_workers", f.baseline)
	}
	return f, -1
}

// readSimScenario reads and parses the scenario of -config (with -requests applied) and returns
// how to name it in messages; a non-zero exit code when it cannot.
func readSimScenario(f simFlags, stdin io.Reader, stderr io.Writer) (*sim.Scenario, string, int) {
	data, displayName, baseDir, err := readConfig(f.config, stdin)
	if err != nil {
		fmt.Fprintf(stderr, "scalein sim: %v\n", err)
		return nil, "", 1
	}
	s, err := sim.Parse(data, sim.ParseEnv{ReadFile: localTraceReader(baseDir)})
	if err != nil {
		var ve *sim.ValidationError
		if errors.As(err, &ve) {
			for _, fe := range ve.Errors {
				fmt.Fprintf(stderr, "%s: %s\n", displayName, fe)
			}
			return nil, "", 2
		}
		fmt.Fprintf(stderr, "scalein sim: %s: %v\n", displayName, err)
		return nil, "", 1
	}
	if f.requests {
		s.Report.PerRequest = true
	}
	return s, displayName, 0
}

// runScenarios runs s, or with pair s and its counterpart side by side, showing progress on a
// terminal, and returns what to write: the report, or both and their comparison. pass (for
// -passes) sees the passes of the single run.
func runScenarios(ctx context.Context, s *sim.Scenario, pair string, baseline int, pass func(sim.PassRecord), stderr io.Writer) (any, int) {
	progress := newProgressLine(stderr, isTerminal(stderr))
	if pair == sim.CounterpartPrefillDrain {
		return runDrainModes(ctx, s, progress, stderr)
	}
	if pair == "" {
		// Nothing else in this process needs the processor promptly: the run does not yield it
		// (sim.RunOptions.OwnThread), and a second core is its to use (SpareCore).
		r, err := sim.Run(ctx, s, sim.RunOptions{Progress: progress.reporter(0, 1), Pass: pass, OwnThread: true,
			SpareCore: runtime.GOMAXPROCS(0) >= 2})
		if err != nil {
			return nil, runFailed(stderr, err)
		}
		progress.finish()
		return r, 0
	}
	c, err := counterpart(s, pair, baseline)
	if err != nil {
		fmt.Fprintf(stderr, "scalein sim: %v\n", err)
		return nil, 2 // the kind was checked with the flags: the scenario does not fit the pair (no autoscaler)
	}
	var reports [2]*sim.Report
	var errs [2]error
	var wg sync.WaitGroup
	for i, sc := range []*sim.Scenario{s, c} {
		wg.Go(func() {
			reports[i], errs[i] = sim.Run(ctx, sc, sim.RunOptions{Progress: progress.reporter(i, 2)})
		})
	}
	wg.Wait()
	if err := errors.Join(errs[0], errs[1]); err != nil {
		return nil, runFailed(stderr, err)
	}
	progress.finish()
	return pairOutput{A: reports[0], B: reports[1], Comparison: sim.Compare(s, c, reports[0], reports[1])}, 0
}

// writeReport writes out as indented JSON to stdout, or atomically to the file path.
func writeReport(out any, path string, stdout, stderr io.Writer) int {
	body, err := json.MarshalIndent(out, "", "  ")
	if err != nil {
		fmt.Fprintf(stderr, "scalein sim: encode the report: %v\n", err)
		return 1
	}
	body = append(body, '\n')
	if path == "" {
		if _, err := stdout.Write(body); err != nil {
			fmt.Fprintf(stderr, "scalein sim: write the report: %v\n", err)
			return 1
		}
		return 0
	}
	if err := writeFileAtomic(path, body); err != nil {
		fmt.Fprintf(stderr, "scalein sim: %v\n", err)
		return 1
	}
	return 0
}

// checkMemory prints the memory estimate with -v and refuses, with exit status 2, a scenario
// whose estimate exceeds -max-memory (a pair runs two scenarios at once: twice the estimate).
func checkMemory(s *sim.Scenario, f simFlags, displayName string, stderr io.Writer) int {
	if !f.verbose && f.maxMemory == "" {
		return 0
	}
	est := sim.EstimateMemory(s)
	if f.pair == sim.CounterpartPrefillDrain {
		est.Bytes *= 3 // three runs at once, of one size
	} else if f.pair != "" {
		if c, err := counterpart(s, f.pair, f.baseline); err == nil {
			other := sim.EstimateMemory(c)
			est.Bytes += other.Bytes
		}
	}
	if f.verbose {
		fmt.Fprintf(stderr, "%s: memory estimate: up to %s\n", displayName, sim.FormatBytes(est.Bytes))
		for _, d := range est.Drivers {
			field := d.Field
			if field == "" {
				field = "-"
			}
			fmt.Fprintf(stderr, "  %9s  %-24s %s\n", sim.FormatBytes(d.Bytes), field, d.What)
		}
	}
	if f.maxMemory == "" {
		return 0
	}
	limit, err := sim.ParseBytes(f.maxMemory)
	if err != nil || limit <= 0 {
		fmt.Fprintf(stderr, "scalein sim: -max-memory: %v\n", cmp.Or(err, fmt.Errorf("must be above 0")))
		return 2
	}
	var ve *sim.ValidationError
	if err := est.Check(limit, "-max-memory"); errors.As(err, &ve) {
		for _, fe := range ve.Errors {
			fmt.Fprintf(stderr, "%s: %s\n", displayName, fe)
		}
		return 2
	}
	return 0
}

func runFailed(stderr io.Writer, err error) int {
	if errors.Is(err, context.Canceled) {
		fmt.Fprintln(stderr, "scalein sim: interrupted; no report written")
		return 1
	}
	fmt.Fprintf(stderr, "scalein sim: the run failed: %v\n", err)
	return 1
}

// readConfig reads the scenario (at most sim.MaxScenarioBytes + 1 bytes, so Parse reports an
// oversized file) and says how to name it in messages and where its relative trace paths start.
func readConfig(path string, stdin io.Reader) (data []byte, displayName, baseDir string, err error) {
	if path == "-" {
		data, err = io.ReadAll(io.LimitReader(stdin, sim.MaxScenarioBytes+1))
		if err != nil {
			return nil, "", "", fmt.Errorf("read the scenario from stdin: %w", err)
		}
		return data, "stdin", ".", nil
	}
	file, err := os.Open(path)
	if err != nil {
		return nil, "", "", fmt.Errorf("read the scenario: %w", err)
	}
	defer file.Close()
	data, err = io.ReadAll(io.LimitReader(file, sim.MaxScenarioBytes+1))
	if err != nil {
		return nil, "", "", fmt.Errorf("read the scenario %s: %w", path, err)
	}
	return data, path, filepath.Dir(path), nil
}

// localTraceReader reads {"path": …} traces; a relative path is relative to the scenario file.
func localTraceReader(baseDir string) func(string) ([]byte, error) {
	return func(p string) ([]byte, error) {
		if !filepath.IsAbs(p) {
			p = filepath.Join(baseDir, p)
		}
		file, err := os.Open(p)
		if err != nil {
			return nil, err
		}
		defer file.Close()
		return io.ReadAll(io.LimitReader(file, sim.MaxTraceBytes+1))
	}
}

// writeFileAtomic writes through a temporary file in the same directory and renames it, so a
// reader never sees half a report and an interrupted run leaves any old report intact. A path
// that names something other than a regular file (/dev/null, /dev/stdout, a named pipe) is
// written in place: renaming over it would replace the device with a file.
func writeFileAtomic(path string, data []byte) error { return writeFileAs(path, data, "the report") }

// writeFileAs is writeFileAtomic for a file that is what ("the manifests"), as its messages say.
func writeFileAs(path string, data []byte, what string) error {
	if notRegular(path) {
		return writeInPlace(path, data, what)
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".scalein-*.tmp")
	if err != nil {
		return fmt.Errorf("write %s: %w", what, err)
	}
	defer os.Remove(tmp.Name()) // a no-op after the rename
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return fmt.Errorf("write %s %s: %w", what, path, err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return fmt.Errorf("write %s %s: %w", what, path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("write %s %s: %w", what, path, err)
	}
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		return fmt.Errorf("write %s %s: %w", what, path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("write %s %s: %w", what, path, err)
	}
	return nil
}

// notRegular reports whether path exists and is not a regular file (a device, a pipe, a socket).
func notRegular(path string) bool {
	info, err := os.Stat(path)
	return err == nil && !info.Mode().IsRegular()
}

// writeInPlace writes data to an existing file that is not a regular one.
func writeInPlace(path string, data []byte, what string) error {
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		return fmt.Errorf("write %s %s: %w", what, path, err)
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return fmt.Errorf("write %s %s: %w", what, path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("write %s %s: %w", what, path, err)
	}
	return nil
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	info, err := f.Stat()
	return err == nil && info.Mode()&os.ModeCharDevice != 0
}

// progressLine prints "progress 42%" on stderr at most once a second while runs go on. With
// several runs it shows their average.
type progressLine struct {
	mu        sync.Mutex
	w         io.Writer
	enabled   bool
	fractions []float64
	lastPrint time.Time
	printed   bool
}

func newProgressLine(w io.Writer, enabled bool) *progressLine {
	return &progressLine{w: w, enabled: enabled, lastPrint: time.Now()}
}

// reporter returns the Progress callback of run i of n, or nil when progress is off.
func (p *progressLine) reporter(i, n int) func(float64) {
	if !p.enabled {
		return nil
	}
	p.mu.Lock()
	if len(p.fractions) < n {
		p.fractions = make([]float64, n)
	}
	p.mu.Unlock()
	return func(fraction float64) {
		p.mu.Lock()
		defer p.mu.Unlock()
		p.fractions[i] = fraction
		if time.Since(p.lastPrint) < time.Second {
			return
		}
		total := 0.0
		for _, f := range p.fractions {
			total += f
		}
		fmt.Fprintf(p.w, "progress %d%%\n", int(100*total/float64(len(p.fractions))))
		p.lastPrint, p.printed = time.Now(), true
	}
}

func (p *progressLine) finish() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.enabled && p.printed {
		fmt.Fprintln(p.w, "progress 100%")
	}
}

// A run whose memory estimate reaches largeRunBytes collects at largeRunGCPercent heap growth
// instead of the command's default (unless GOGC is set). Its heap is then mostly pointer-free
// cache tables, which a collection marks without scanning, so collecting twice as often costs
// about a tenth more CPU and keeps the peak a sixth lower: the 1,000,000-request run on 2,048
// workers peaks at 1.49 GB instead of 1.77 GB (docs/performance.md). Smaller runs keep the
// default, where the saving is a few megabytes.
const (
	largeRunBytes     = 1 << 30
	largeRunGCPercent = 25
)

func collectTighterIfLarge(s *sim.Scenario) {
	// The bound first: the exact estimate generates and sorts every prompt key of a trace.
	if os.Getenv("GOGC") == "" && sim.EstimateMemoryBound(s).Bytes >= largeRunBytes &&
		sim.EstimateMemory(s).Bytes >= largeRunBytes {
		debug.SetGCPercent(largeRunGCPercent)
	}
}

// counterpart is the scenario -pair runs beside s: the autoscaler pair's fixed fleet has the
// baseline's workers (sim.FixedFleet; 0 is max_workers).
func counterpart(s *sim.Scenario, pair string, baseline int) (*sim.Scenario, error) {
	if pair == sim.CounterpartAutoscaler {
		return sim.FixedFleet(s, baseline)
	}
	return sim.Counterpart(s, pair)
}
