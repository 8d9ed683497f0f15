package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
)

// commandFlags is the flag set of a subcommand that reads its flags, prints its usage line on
// -h or a mistake, and answers exit status 2 for bad usage.
type commandFlags struct {
	*flag.FlagSet
	stderr io.Writer
}

// newCommandFlags makes the flag set of "scalein name"; usage is the one-line synopsis.
func newCommandFlags(name, usage string, stderr io.Writer) *commandFlags {
	fs := flag.NewFlagSet("scalein "+name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: "+usage)
		fs.PrintDefaults()
	}
	return &commandFlags{FlagSet: fs, stderr: stderr}
}

// parse reads args. When ok is false the command must exit with code: 0 after -h (the usage
// is printed), 2 after a bad flag (the flag package has said which).
func (c *commandFlags) parse(args []string) (code int, ok bool) {
	if err := c.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0, false
		}
		return 2, false
	}
	return 0, true
}

// usageError prints "scalein name: message" and the usage, and returns exit status 2.
func (c *commandFlags) usageError(format string, a ...any) int {
	fmt.Fprintf(c.stderr, c.Name()+": "+format+"\n", a...)
	c.Usage()
	return 2
}
