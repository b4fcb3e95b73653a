package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"golang.org/x/term"
)

// env is what a command runs with: the common options, the connection
// settings they resolve to, and where to write.
type env struct {
	opts   options
	conn   connSettings
	stdout io.Writer
	stderr io.Writer
	// interactive: stderr is a terminal, so waiting is shown there.
	interactive bool
	now         func() time.Time
	getenv      func(string) string // the process's environment (tests give their own)
}

// run parses args, runs the command and returns the exit status. It is
// main without the process: tests call it too.
func run(ctx context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string) int {
	inv, err := parse(args)
	if err != nil {
		fmt.Fprintf(stderr, "go-cluster: %v\nRun 'go-cluster help%s' for usage.\n", trimSentinel(err), strings.TrimRight(" "+inv.cmd.name, " "))
		return exitCode(err)
	}
	if inv.help {
		switch {
		case inv.man:
			manPage(stdout)
		case inv.cmd.name != "":
			commandUsage(stdout, inv.cmd)
		case inv.group != "":
			groupUsage(stdout, inv.group)
		default:
			usage(stdout)
		}
		return exitOK
	}
	if inv.version {
		fmt.Fprintln(stdout, versionText())
		return exitOK
	}
	var conn connSettings
	if _, own := inv.cmd.impl.(connectsPerCluster); !own {
		if conn, err = resolveConn(inv.opts.conn, getenv); err != nil {
			fmt.Fprintf(stderr, "go-cluster: %v\n", trimSentinel(err))
			return exitCode(err)
		}
	}
	e := &env{opts: inv.opts, conn: conn, stdout: stdout, stderr: stderr, interactive: isTerminal(stderr), now: time.Now, getenv: getenv}
	if err := inv.cmd.impl.run(ctx, e, inv.args); err != nil {
		if code, ok := passThrough(err); ok {
			return code
		}
		fmt.Fprintf(stderr, "go-cluster %s: %v\n", inv.cmd.name, trimSentinel(err))
		return exitCode(err)
	}
	return exitOK
}

// isTerminal reports whether w is a terminal: progress is shown there,
// and never in a pipe or a file.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
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
