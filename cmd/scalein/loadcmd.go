package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"

	"github.com/scalein-planner/scalein/sim/load"
)

// runLoad is "scalein load -prometheus FILE [-config SCENARIO]": last night's request rate as
// rate stages. With -config it prints the scenario with the stages (its count raised to cover
// them); without, the stages and how they were read (-turns turns per session).
func runLoad(_ context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := newCommandFlags("load", "scalein load -prometheus FILE [-config SCENARIO|-] [-replicas N] [-reading requests|sessions] [-turns N] [-tolerance F] [-max-stages N] [-sum]", stderr)
	lf := addLoadFlags(fs)
	lf.flag = "prometheus"
	fs.StringVar(&lf.file, "prometheus", "", "the JSON answer of GET /api/v1/query_range (required)")
	config := fs.String("config", "", "the scenario to put the stages in; without it the stages alone are printed")
	turns := fs.Int("turns", 0, "without -config: turns per session (default 3, the sessions workload's default)")
	if code, ok := fs.parse(args); !ok {
		return code
	}
	switch {
	case lf.file == "":
		return fs.usageError("-prometheus FILE is required: save the answer of GET /api/v1/query_range?query=sum(rate(vllm:request_success_total[1m]))&start=…&end=…&step=60")
	case *config != "" && *turns != 0:
		return fs.usageError("-turns is the scenario's workload.sessions.turns with -config: leave it out")
	case *config == "" && lf.replicas != 0:
		return fs.usageError("-replicas sets the scenario's fleet.workers: use it with -config")
	case *turns < 0:
		return fs.usageError("-turns %d: at least 1", *turns)
	case fs.NArg() > 0:
		return fs.usageError("unexpected argument %q", fs.Arg(0))
	}
	if *config == "" {
		if *turns == 0 {
			*turns = load.TurnsOf(nil)
		}
		c, code := readCurve("load", lf, *turns, stderr)
		if code != 0 {
			return code
		}
		out, err := json.MarshalIndent(c, "", "  ")
		if err != nil {
			fmt.Fprintf(stderr, "scalein load: %v\n", err)
			return 1
		}
		fmt.Fprintf(stdout, "%s\n", out)
		return 0
	}
	base, parsed, code := readBase("load", *config, stdin, stderr)
	if code != 0 {
		return code
	}
	out, code := applyLoad("load", lf, base, parsed, stderr)
	if code != 0 {
		return code
	}
	fmt.Fprintf(stdout, "%s\n", out)
	return 0
}
