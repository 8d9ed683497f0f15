package main

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/scalein-planner/scalein/sim"
	"github.com/scalein-planner/scalein/sim/hpa"
	"github.com/scalein-planner/scalein/sim/load"
)

// defaultBase is the scenario an import fills without -config: the sessions workload at its
// defaults, everything else at the model's defaults.
const defaultBase = `{"workload": {"type": "sessions", "sessions": {}}}`

// runImport is "scalein import -manifest FILE [-load FILE] [-config BASE]": the scenario with
// the manifest's autoscaler (and the Prometheus answer's rate stages) on stdout, what the model
// cannot represent on stderr; exit 2 when there is no usable autoscaler.
func runImport(_ context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := newCommandFlags("import", "scalein import -manifest FILE [-select NAME] [-load FILE [-reading requests|sessions] [-tolerance F] [-sum]] [-config BASE|-]", stderr)
	manifest := fs.String("manifest", "", "the HPA or KEDA ScaledObject (and workloads) as YAML or JSON, e.g. kubectl get hpa,scaledobject,deploy -o yaml")
	selectName := fs.String("select", "", "the autoscaler to read (its metadata.name) when the file holds several (default: the first the model can use)")
	config := fs.String("config", "", "the scenario to fill (default: the sessions workload at its defaults)")
	lf := addLoadFlags(fs)
	if code, ok := fs.parse(args); !ok {
		return code
	}
	if *manifest == "" && lf.file == "" {
		return fs.usageError("-manifest FILE (an HPA or ScaledObject) or -load FILE (a Prometheus query_range answer) is required")
	}
	if fs.NArg() > 0 {
		return fs.usageError("unexpected argument %q", fs.Arg(0))
	}
	base, parsed, code := readBase("import", *config, stdin, stderr)
	if code != 0 {
		return code
	}
	out := base
	if *manifest != "" {
		data, err := readLimited(*manifest, hpa.MaxManifestBytes)
		if err != nil {
			fmt.Fprintf(stderr, "scalein import: -manifest: %v\n", err)
			return 1
		}
		o, im, dropped, err := hpa.IntoScenarioWith(base, data, sim.ParseEnv{}, hpa.ImportOptions{Select: *selectName, WholeFile: true})
		if err != nil {
			if se, ok := errors.AsType[*hpa.ScenarioError](err); ok {
				return printValidation("import", *config, se.Err, stderr)
			}
			fmt.Fprintf(stderr, "scalein import: %s: %v\n", *manifest, err)
			return 2
		}
		for _, p := range im.Problems {
			fmt.Fprintf(stderr, "scalein import: %s: %s\n", *manifest, p)
		}
		if dropped {
			fmt.Fprintln(stderr, "scalein import: the scenario's scale_in was removed: an autoscaler replaces a hand-written schedule")
		}
		out = o
	}
	if lf.file != "" {
		o, code := applyLoad("import", lf, out, parsed, stderr)
		if code != 0 {
			return code
		}
		out = o
	}
	fmt.Fprintf(stdout, "%s\n", out)
	return 0
}

// runExport is "scalein export -config FILE [-manifest ORIGINAL] [-kind hpa|keda] [-o FILE]":
// the scenario's autoscaler as Kubernetes manifests, written back into the user's own object
// when -manifest names it.
func runExport(_ context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := newCommandFlags("export", "scalein export -config FILE|- [-manifest ORIGINAL [-select NAME]] [-kind hpa|keda] [-name N -namespace NS] [-o FILE [-force]]", stderr)
	config := fs.String("config", "", "the scenario whose autoscaler is written (required)")
	manifest := fs.String("manifest", "", "your file (HPA or ScaledObject, and workloads) as deployed: it is written back as it is, with only the fields whose values differ from the scenario's changed")
	selectName := fs.String("select", "", "with -manifest: the autoscaler of the file to write into (its metadata.name) when it holds several")
	kind := fs.String("kind", "hpa", "without -manifest: hpa (an autoscaling/v2 HPA) or keda (a ScaledObject)")
	name := fs.String("name", "", "without -manifest: the workers' Deployment (default "+hpa.DefaultWorkers+", a placeholder)")
	namespace := fs.String("namespace", "", "without -manifest: the namespace")
	var outPath string
	fs.StringVar(&outPath, "o", "", "write the manifests to this file (default: stdout)")
	fs.StringVar(&outPath, "out", "", "the same as -o")
	force := fs.Bool("force", false, "replace the -o file if it exists")
	if code, ok := fs.parse(args); !ok {
		return code
	}
	switch {
	case *config == "":
		return fs.usageError("-config FILE is required: the scenario whose autoscaler is written")
	case *kind != "hpa" && *kind != "keda":
		return fs.usageError("-kind %q: hpa or keda", *kind)
	case *force && outPath == "":
		return fs.usageError("-force replaces the -o file: use it with -o")
	case outPath != "" && !*force && fileExists(outPath):
		return fs.usageError("-o %s: the file exists and is not replaced (it may be your own manifest); name a new file, or add -force to replace it", outPath)
	case fs.NArg() > 0:
		return fs.usageError("unexpected argument %q", fs.Arg(0))
	}
	s, _, code := loadScenario("export", *config, stdin, stderr)
	if code != 0 {
		return code
	}
	if s.PoolAutoscalers != nil {
		out, code := exportPools(s, *config, *manifest, *selectName, *kind, *name, *namespace, stderr)
		if code != 0 {
			return code
		}
		return writeExport(out, outPath, stdout, stderr)
	}
	if s.Autoscaler == nil {
		fmt.Fprintf(stderr, "scalein export: %s has no autoscaler: add one (scalein import -manifest FILE -config %s fills it from your HPA)\n", *config, *config)
		return 2
	}
	settings := hpa.Settings{Autoscaler: *s.Autoscaler, MigrationLimit: s.Router.MigrationLimit, Kind: *kind,
		Workers: *name, Namespace: *namespace, Source: fmt.Sprintf("scalein export of scenario %q", s.Name)}
	if *manifest != "" {
		data, err := readLimited(*manifest, hpa.MaxManifestBytes)
		if err != nil {
			fmt.Fprintf(stderr, "scalein export: -manifest: %v\n", err)
			return 1
		}
		im, err := hpa.ImportWith(data, *s.Autoscaler, hpa.ImportOptions{Select: *selectName, WholeFile: true})
		if err != nil {
			fmt.Fprintf(stderr, "scalein export: -manifest %s: %v\n", *manifest, err)
			return 2
		}
		settings.Origin = im.Origin
	}
	out, code := exportSettings("export", settings, stderr)
	if code != 0 {
		return code
	}
	return writeExport(out, outPath, stdout, stderr)
}

// writeExport writes an export to stdout or to the -o file.
func writeExport(out []byte, outPath string, stdout, stderr io.Writer) int {
	var err error
	if outPath == "" {
		_, err = stdout.Write(out)
	} else {
		err = writeFileAs(outPath, out, "the manifests")
	}
	if err != nil {
		fmt.Fprintf(stderr, "scalein export: %v\n", err)
		return 1
	}
	return 0
}

// exportPools writes the autoscalers of a scenario with prefill and decode pools: into each
// pool's own object of the user's file (-manifest), else as new objects, one per pool, named
// NAME-prefill and NAME-decode.
func exportPools(s *sim.Scenario, config, manifest, selectName, kind, name, namespace string, stderr io.Writer) ([]byte, int) {
	source := fmt.Sprintf("scalein export of scenario %q", s.Name)
	pa := s.PoolAutoscalers
	pools := map[string]*sim.Autoscaler{sim.RolePrefill: pa.Prefill, sim.RoleDecode: pa.Decode}
	if manifest == "" {
		var out []byte
		for _, role := range []string{sim.RolePrefill, sim.RoleDecode} {
			a := pools[role]
			if a == nil {
				fmt.Fprintf(stderr, "scalein export: note: the %s pool has no autoscaler in %s: nothing is written for it\n", role, config)
				continue
			}
			b, code := exportSettings("export", hpa.Settings{Autoscaler: *a, MigrationLimit: s.Router.MigrationLimit, Kind: kind,
				Workers: cmp.Or(name, hpa.DefaultWorkers) + "-" + role, Namespace: namespace, Source: source + ", " + role + " pool"}, stderr)
			if code != 0 {
				return nil, code
			}
			if len(out) > 0 {
				// The pools share the frontend: its patch (the last document) is written once.
				if i := bytes.LastIndex(b, []byte("\n---\n")); i >= 0 && bytes.HasSuffix(out, b[i:]) {
					b = b[:i+1]
				}
				out = append(out, "---\n"...)
			}
			out = append(out, b...)
		}
		return out, 0
	}
	if selectName != "" {
		fmt.Fprintf(stderr, "scalein export: -select: %s has prefill and decode pools: each pool's autoscaler is written into its own object of the file (found by its role), so -select is not used\n", config)
		return nil, 2
	}
	data, err := readLimited(manifest, hpa.MaxManifestBytes)
	if err != nil {
		fmt.Fprintf(stderr, "scalein export: -manifest: %v\n", err)
		return nil, 1
	}
	base := pa.Decode
	if base == nil {
		base = pa.Prefill
	}
	im, err := hpa.ImportWith(data, *base, hpa.ImportOptions{Prefill: pa.Prefill, Decode: pa.Decode, WholeFile: true})
	if err != nil {
		fmt.Fprintf(stderr, "scalein export: -manifest %s: %v\n", manifest, err)
		return nil, 2
	}
	if im.Pools == nil {
		fmt.Fprintf(stderr, "scalein export: -manifest %s: its autoscaler scales one fleet, but %s has prefill and decode pools: name a file with an autoscaler per role (labelled %s: prefill / decode, or named …-prefill / …-decode)\n", manifest, config, hpa.RoleLabel)
		return nil, 2
	}
	var ps hpa.PoolSettings
	for _, role := range []string{sim.RolePrefill, sim.RoleDecode} {
		a, p := pools[role], im.Pools.Of(role)
		switch {
		case a == nil:
			fmt.Fprintf(stderr, "scalein export: note: the %s pool has no autoscaler in %s: its object in the file is left as it is\n", role, config)
			continue
		case p.Scaler == "":
			fmt.Fprintf(stderr, "scalein export: -manifest %s: no autoscaler in the file scales the %s pool, so its settings have nowhere to go: add an HPA or ScaledObject for it (or export without -manifest)\n", manifest, role)
			return nil, 2
		case p.Origin == nil || p.Origin.Manifest == "":
			fmt.Fprintf(stderr, "scalein export: -manifest %s: the %s pool's %s is too large to be written into in place; export without -manifest\n", manifest, role, p.Scaler)
			return nil, 2
		}
		st := &hpa.Settings{Autoscaler: *a, MigrationLimit: s.Router.MigrationLimit, Origin: p.Origin, Source: source}
		if role == sim.RolePrefill {
			ps.Prefill = st
		} else {
			ps.Decode = st
		}
	}
	ex, err := hpa.ExportPoolsOnto(ps)
	if err != nil {
		fmt.Fprintf(stderr, "scalein export: %v\n", err)
		return nil, 1
	}
	if len(ex.Changed) == 0 {
		fmt.Fprintln(stderr, "scalein export: nothing changed: the file's settings are the scenario's")
	}
	for _, c := range ex.Changed {
		fmt.Fprintf(stderr, "scalein export: changed %s\n", c)
	}
	for _, n := range ex.Notes {
		fmt.Fprintf(stderr, "scalein export: note: %s\n", n)
	}
	return ex.Data, 0
}

// readBase reads -config as written (or the default base) and parses it.
func readBase(cmd, config string, stdin io.Reader, stderr io.Writer) ([]byte, *sim.Scenario, int) {
	data := []byte(defaultBase)
	if config != "" {
		var err error
		if data, _, _, err = readConfig(config, stdin); err != nil {
			fmt.Fprintf(stderr, "scalein %s: %v\n", cmd, err)
			return nil, nil, 1
		}
	}
	s, _, code := loadScenarioBytes(cmd, config, data, stderr)
	return data, s, code
}

// loadScenarioBytes parses a scenario already read.
func loadScenarioBytes(cmd, name string, data []byte, stderr io.Writer) (*sim.Scenario, sim.ParseEnv, int) {
	traces := &localTraces{read: localTraceReader(".")}
	env := sim.ParseEnv{ReadFile: traces.ReadFile, Traces: traces}
	s, err := sim.Parse(data, env)
	if err != nil {
		return nil, env, printValidation(cmd, name, err, stderr)
	}
	return s, env, 0
}

// readLimited reads a file of at most limit bytes.
func readLimited(path string, limit int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("%s is larger than %d bytes", path, limit)
	}
	return data, nil
}

// loadFlags are the flags that read a Prometheus answer.
type loadFlags struct {
	file      string
	flag      string // the flag that names file: -load, or scalein load's -prometheus
	reading   string
	tolerance float64
	maxStages int
	sum       bool
	replicas  int
}

func addLoadFlags(fs *commandFlags) *loadFlags {
	lf := &loadFlags{flag: "load"}
	fs.StringVar(&lf.file, "load", "", "a Prometheus answer of GET /api/v1/query_range (one series of request rates, e.g. sum(rate(vllm:request_success_total[1m]))) to read into workload.sessions.rate_stages")
	fs.StringVar(&lf.reading, "reading", load.ReadRequests, "what the series counts: requests (per second, divided by the scenario's turns per session) or sessions (per second)")
	fs.Float64Var(&lf.tolerance, "tolerance", 0, "merge adjacent steps whose rates are within this fraction of their mean (0.05 = 5 %)")
	fs.IntVar(&lf.maxStages, "max-stages", sim.MaxRateStages, "at most this many stages (more steps are resampled by whole steps, keeping the expected sessions)")
	fs.BoolVar(&lf.sum, "sum", false, "add several series sample by sample instead of refusing them")
	fs.IntVar(&lf.replicas, "replicas", 0, "the replicas running when the night started: sets fleet.workers (default: the scenario's, or an import's)")
	return lf
}

// readCurve reads the Prometheus answer of lf for a scenario with the given turns.
func readCurve(cmd string, lf *loadFlags, turns int, stderr io.Writer) (*load.Curve, int) {
	data, err := readLimited(lf.file, load.MaxPrometheusBytes)
	if err != nil {
		fmt.Fprintf(stderr, "scalein %s: -%s: %v\n", cmd, lf.flag, err)
		return nil, 1
	}
	c, err := load.FromPrometheus(data, load.Options{Reading: lf.reading, Turns: turns, Tolerance: lf.tolerance, MaxStages: lf.maxStages, SumSeries: lf.sum})
	if err != nil {
		fmt.Fprintf(stderr, "scalein %s: %s: %v\n", cmd, lf.file, err)
		return nil, 2
	}
	for _, n := range c.Notes {
		fmt.Fprintf(stderr, "scalein %s: %s\n", cmd, n)
	}
	return c, 0
}

// applyLoad writes lf's stages into the scenario (parsed is the scenario as given, for its
// turns and count).
func applyLoad(cmd string, lf *loadFlags, scenario []byte, parsed *sim.Scenario, stderr io.Writer) ([]byte, int) {
	c, code := readCurve(cmd, lf, load.TurnsOf(parsed), stderr)
	if code != 0 {
		return nil, code
	}
	out, notes, err := load.ApplyJSON(scenario, parsed, c)
	if err != nil {
		fmt.Fprintf(stderr, "scalein %s: %v\n", cmd, err)
		return nil, 1
	}
	for _, n := range notes {
		fmt.Fprintf(stderr, "scalein %s: %s\n", cmd, n)
	}
	if lf.replicas != 0 {
		if out, err = load.WithReplicas(out, lf.replicas); err != nil {
			fmt.Fprintf(stderr, "scalein %s: -replicas: %v\n", cmd, err)
			return nil, 2
		}
		if s, _, code := loadScenarioBytes(cmd, "the scenario with the stages", out, stderr); code == 0 && s.Autoscaler != nil {
			if a := s.Autoscaler; lf.replicas < a.MinWorkers || lf.replicas > a.MaxWorkers {
				fmt.Fprintf(stderr, "scalein %s: -replicas %d lies outside the autoscaler's bounds [%d, %d]: its first decision brings the fleet into them\n", cmd, lf.replicas, a.MinWorkers, a.MaxWorkers)
			}
		}
	}
	if _, _, code := loadScenarioBytes(cmd, "the scenario with the stages", out, stderr); code != 0 {
		return nil, code
	}
	return out, 0
}

// exportSettings writes settings: into the user's file when they carry one (saying on stderr
// which fields changed and what the file cannot hold), else as new manifests.
func exportSettings(cmd string, settings hpa.Settings, stderr io.Writer) ([]byte, int) {
	if settings.Origin != nil && settings.Origin.Manifest != "" {
		ex, err := hpa.ExportOnto(settings)
		if err != nil {
			fmt.Fprintf(stderr, "scalein %s: %v\n", cmd, err)
			return nil, 1
		}
		if len(ex.Changed) == 0 {
			fmt.Fprintf(stderr, "scalein %s: nothing changed: the file's settings are the scenario's\n", cmd)
		}
		for _, c := range ex.Changed {
			fmt.Fprintf(stderr, "scalein %s: changed %s\n", cmd, c)
		}
		for _, n := range ex.Notes {
			fmt.Fprintf(stderr, "scalein %s: note: %s\n", cmd, n)
		}
		return ex.Data, 0
	}
	out, err := hpa.Export(settings)
	if err != nil {
		fmt.Fprintf(stderr, "scalein %s: %v\n", cmd, err)
		return nil, 1
	}
	return out, 0
}
