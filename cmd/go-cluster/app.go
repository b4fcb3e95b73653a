package main

import (
	"context"
	"fmt"
	"io"
	"time"
)

// env is what a command runs with: the common options and where to write.
type env struct {
	opts   options
	stdout io.Writer
	stderr io.Writer
	now    func() time.Time
}

// run parses args, runs the command and returns the exit status. It is
// main without the process: tests call it too.
func run(ctx context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string) int {
	inv, err := parse(args, getenv)
	if err != nil {
		fmt.Fprintf(stderr, "go-cluster: %v\nRun 'go-cluster help' for usage.\n", trimSentinel(err))
		return exitCode(err)
	}
	if inv.help {
		usage(stdout, getenv)
		return exitOK
	}
	e := &env{opts: inv.opts, stdout: stdout, stderr: stderr, now: time.Now}
	if err := inv.cmd.impl.run(ctx, e, inv.args); err != nil {
		fmt.Fprintf(stderr, "go-cluster %s: %v\n", inv.cmd.name, trimSentinel(err))
		return exitCode(err)
	}
	return exitOK
}

// trimSentinel drops the "usage: " prefix errUsage puts in front of a
// message: the help hint says it already.
func trimSentinel(err error) string {
	s := err.Error()
	if p := errUsage.Error() + ": "; len(s) > len(p) && s[:len(p)] == p {
		return s[len(p):]
	}
	return s
}
