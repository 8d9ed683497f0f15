// Command scalein is the Scale-in Planner: a web app (the default, "serve") and a headless
// simulator run ("sim") over the same scenario format (README.md#headless-runs).
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/debug"
	"strings"
	"syscall"
)

// defaultGCPercent is the garbage collector's target unless GOGC is set. A simulation's heap is
// mostly long-lived cache tables without pointers, which a collection does not scan, so
// collecting at 50 % growth instead of the runtime's 100 % costs little time and keeps the peak
// memory of a large run about a quarter lower (docs/performance.md).
const defaultGCPercent = 50

func main() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(defaultGCPercent)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

const usageText = `usage:
  scalein [serve] [-addr 127.0.0.1:8080] [-db ./data/scalein.db]
      start the web app (the default)
  scalein worker -db postgres://… [-concurrency N] [-rescue-after 5m]
      work runs from a PostgreSQL database shared with serve processes; serves no HTTP
  scalein sim -config FILE|- [-out FILE] [-requests] [-pair hints|guard] [-v] [-max-memory SIZE] [-passes FILE -worker N]
      run one scenario headless and write its report as JSON
  scalein sweep -config FILE|- -vary PATH=V1,V2,… [-vary …] [-out FILE] [-format json|csv] [-parallel N] [-timing]
      run the scenario at every combination of the values (up to 3 fields)
  scalein plan -config FILE|- -remove N -start-ms T [-ttft-p99-ms X] [-max-killed K] [-max-runs M] [-timing]
      search scale-in schedules and recommend one (docs/planning.md)
  scalein plan -config FILE|- -tune autoscaler [-ttft-p99-ms X] [-e2e-p99-ms X] [-min-attainment F] [-max-killed K] [-max-runs M] [-hpa FILE]
      search the scenario's autoscaler settings for the fewest GPU-hours; -hpa writes them as Kubernetes manifests
  scalein plan -config FILE|- -capacity [-min-attainment F] [-max-runs M]
      find one worker's capacity at the scenario's slo: the highest steady request rate per worker that meets it (docs/planning.md)
  scalein calibrate -fpm FILE|- [-worker ID] [-skip N]
      fit the pass timing to measured forward passes (FPM JSON lines; docs/calibration.md)
  scalein import -manifest FILE [-load FILE] [-config BASE|-]
      print the scenario with the autoscaler of your HPA or KEDA ScaledObject (problems on stderr; docs/manifests.md)
  scalein export -config FILE|- [-manifest ORIGINAL] [-kind hpa|keda] [-o FILE [-force]]
      write the scenario's autoscaler as Kubernetes manifests, into your own object with -manifest
  scalein load -prometheus FILE [-config SCENARIO|-] [-reading requests|sessions] [-tolerance F]
      read last night's request rate (a Prometheus query_range answer) into rate stages
`

// run dispatches a subcommand and returns the process exit code: 0 ok, 2 bad usage or bad
// input, 1 anything else.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 || strings.HasPrefix(args[0], "-") && !isHelp(args[0]) {
		return runServe(ctx, args, stdout, stderr)
	}
	switch args[0] {
	case "serve":
		return runServe(ctx, args[1:], stdout, stderr)
	case "worker":
		return runWorker(ctx, args[1:], stdout, stderr)
	case "sim":
		return runSim(ctx, args[1:], stdin, stdout, stderr)
	case "sweep":
		return runSweep(ctx, args[1:], stdin, stdout, stderr)
	case "plan":
		return runPlan(ctx, args[1:], stdin, stdout, stderr)
	case "calibrate":
		return runCalibrate(ctx, args[1:], stdin, stdout, stderr)
	case "import":
		return runImport(ctx, args[1:], stdin, stdout, stderr)
	case "export":
		return runExport(ctx, args[1:], stdin, stdout, stderr)
	case "load":
		return runLoad(ctx, args[1:], stdin, stdout, stderr)
	case "help", "-h", "-help", "--help":
		fmt.Fprint(stdout, usageText)
		return 0
	default:
		fmt.Fprintf(stderr, "scalein: unknown command %q\n%s", args[0], usageText)
		return 2
	}
}

func isHelp(arg string) bool {
	return arg == "-h" || arg == "-help" || arg == "--help"
}
