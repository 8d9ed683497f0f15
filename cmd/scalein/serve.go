package main

import (
	"context"
	"fmt"
	"io"
)

// runServe starts the web app. This is a placeholder until the web server lands (helper C
// replaces this file).
func runServe(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fmt.Fprintln(stderr, "scalein serve: the web app is not built into this binary yet")
	return 1
}
