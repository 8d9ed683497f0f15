package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/scalein-planner/scalein/sim/calibrate"
)

// runCalibrate fits the pass timing model to FPM JSON lines and prints the calibration as JSON.
// Exit codes: 0 ok, 2 bad usage or bad lines (each with its line number on stderr), 1 others.
func runCalibrate(_ context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := newCommandFlags("calibrate", "scalein calibrate -fpm FILE|- [-worker ID] [-skip N]", stderr)
	path := fs.String("fpm", "", "FPM JSON lines file, or - for stdin (required)")
	worker := fs.String("worker", "", "fit only the lines whose worker_id is this")
	skip := fs.Int("skip", 0, "drop the first N passes (warm-up)")
	if code, ok := fs.parse(args); !ok {
		return code
	}
	usageError := fs.usageError
	switch {
	case fs.NArg() > 0:
		return usageError("unexpected argument %q", fs.Arg(0))
	case *path == "":
		return usageError("-fpm is required (a file of FPM JSON lines, or - to read stdin)")
	case *skip < 0:
		return usageError("-skip must be 0 or more (got %d)", *skip)
	}
	in, name := stdin, "stdin"
	if *path != "-" {
		f, err := os.Open(*path)
		if err != nil {
			fmt.Fprintf(stderr, "scalein calibrate: %v\n", err)
			return 1
		}
		defer f.Close()
		in, name = f, *path
	}
	read, err := calibrate.Parse(in, calibrate.Options{Worker: *worker, Skip: *skip})
	if err != nil {
		var ie *calibrate.InputError
		if errors.As(err, &ie) {
			for _, l := range ie.Lines {
				fmt.Fprintf(stderr, "%s:%d: %s\n", name, l.Line, l.Msg)
			}
			if ie.More > 0 {
				fmt.Fprintf(stderr, "%s: … and %d more bad lines\n", name, ie.More)
			}
			if ie.Msg != "" {
				fmt.Fprintf(stderr, "%s: %s\n", name, ie.Msg)
			}
			return 2
		}
		fmt.Fprintf(stderr, "scalein calibrate: %v\n", err)
		return 1
	}
	body, err := json.MarshalIndent(calibrate.Fit(read), "", "  ")
	if err != nil {
		fmt.Fprintf(stderr, "scalein calibrate: %v\n", err)
		return 1
	}
	if _, err := stdout.Write(append(body, '\n')); err != nil {
		fmt.Fprintf(stderr, "scalein calibrate: %v\n", err)
		return 1
	}
	return 0
}
