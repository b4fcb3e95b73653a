package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/spf13/pflag"
)

// maxHelpLines is the most a command's help may take (issue 41, item 6).
const maxHelpLines = 40

// TestCommandHelp (built binary): each command's help is its own, as `nats`
// and `consul lock -h` show one: `COMMAND --help`, `COMMAND -h` and `help
// COMMAND` print the same text, at most 40 lines, with the command's usage,
// every flag of its own, and an example of it; none prints the whole
// list. No flag means two things: run's help does not list the common
// --timeout (how long to wait for NATS and replies), its own wait is
// --start-timeout, and run refuses --timeout; the whole help lists
// --timeout once. help of an unknown command is a usage error.
func TestCommandHelp(t *testing.T) {
	bin := buildCLI(t)
	whole := runCLI(t, bin, nil, "help")
	if whole.code != 0 || strings.Count(whole.stdout, "--timeout D ") != 1 {
		t.Fatalf("help: exit %d, --timeout listed %d times, want once:\n%s", whole.code, strings.Count(whole.stdout, "--timeout D "), whole.stdout)
	}
	for _, c := range commands() {
		name := strings.Fields(c.name)
		help := runCLI(t, bin, nil, append([]string{"help"}, name...)...)
		lines := strings.Count(help.stdout, "\n")
		if help.code != 0 || lines > maxHelpLines || lines < 5 {
			t.Errorf("help %s: exit %d, %d lines (at most %d):\n%s%s", c.name, help.code, lines, maxHelpLines, help.stdout, help.stderr)
			continue
		}
		for _, flag := range []string{"--help", "-h"} {
			r := runCLI(t, bin, nil, append(append([]string(nil), name...), flag)...)
			if r.code != 0 || r.stdout != help.stdout {
				t.Errorf("%s %s: exit %d, not the text of help %s:\n%s", c.name, flag, r.code, c.name, r.stdout)
			}
		}
		if !strings.HasPrefix(help.stdout, "Usage: go-cluster "+c.name) || !strings.Contains(help.stdout, "\n  go-cluster ") ||
			strings.Contains(help.stdout, "Commands:") {
			t.Errorf("help %s: want its usage first and an example of it, not the whole list:\n%s", c.name, help.stdout)
		}
		fs := newFlagSet(c.name)
		c.impl.define(fs)
		for _, f := range flagNames(fs) {
			if !regexp.MustCompile(`(?m)^  (-\w, |    )--` + f + `\b`).MatchString(help.stdout) {
				t.Errorf("help %s does not list its flag --%s:\n%s", c.name, f, help.stdout)
			}
		}
	}

	run := runCLI(t, bin, nil, "run", "--help")
	if strings.Contains(run.stdout, "--timeout ") || strings.Contains(run.stdout, "how long to wait for NATS") || !strings.Contains(run.stdout, "--start-timeout D") {
		t.Errorf("run --help lists the common --timeout, or not --start-timeout:\n%s", run.stdout)
	}
	r := runCLI(t, bin, nil, "--cluster", "x", "run", "--timeout", "1s", "--", "true")
	if r.code != exitUsage || !strings.Contains(r.stderr, "--start-timeout") || !strings.Contains(r.stderr, "go-cluster help run") {
		t.Errorf("run --timeout 1s: exit %d, %q; want %d, naming --start-timeout and 'go-cluster help run'", r.code, r.stderr, exitUsage)
	}
	for _, args := range [][]string{{"help", "nope"}, {"help", "state", "put"}} {
		if r := runCLI(t, bin, nil, args...); r.code != exitUsage || !strings.Contains(r.stderr, "unknown command") {
			t.Errorf("%q: exit %d, %q; want %d, unknown command", args, r.code, r.stderr, exitUsage)
		}
	}
	for _, args := range [][]string{{"help", "state"}, {"state", "--help"}} {
		if r := runCLI(t, bin, nil, args...); r.code != 0 || !strings.Contains(r.stdout, "state get KEY") || !strings.Contains(r.stdout, "state watch") {
			t.Errorf("%q: exit %d, %q; want the state commands", args, r.code, r.stdout)
		}
	}
}

// flagNames are fs's flags' names.
func flagNames(fs *pflag.FlagSet) []string {
	var out []string
	fs.VisitAll(func(f *pflag.Flag) { out = append(out, f.Name) })
	return out
}

// TestManPage (built binary): `go-cluster help --man` is go-cluster(1),
// from the same text as the help: man -l renders it without a warning,
// with every command and every command's flag. CI installs man-db
// (.ci/run); elsewhere a machine without man skips.
func TestManPage(t *testing.T) {
	manBin, err := exec.LookPath("man")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("man is needed (apt-get install man-db); CI is set: it must not be skipped")
		}
		t.Skip("man is needed (apt-get install man-db)")
	}
	bin := buildCLI(t)
	r := runCLI(t, bin, nil, "help", "--man")
	if r.code != 0 || !strings.HasPrefix(r.stdout, ".TH GO-CLUSTER 1 ") {
		t.Fatalf("help --man: exit %d, %q", r.code, r.stderr)
	}
	page := filepath.Join(t.TempDir(), "go-cluster.1")
	if err := os.WriteFile(page, []byte(r.stdout), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(manBin, "--warnings", "-P", "cat", "-l", page)
	cmd.Env = append(os.Environ(), "MANWIDTH=100", "LC_ALL=C") // ASCII: \\- prints as -
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil || stderr.Len() > 0 {
		t.Fatalf("man -l go-cluster.1: %v\n%s", err, stderr.String())
	}
	text := string(out)
	for _, want := range []string{"GO-CLUSTER(1)", "NAME", "SYNOPSIS", "EXIT STATUS", "CONNECTION"} {
		if !strings.Contains(text, want) {
			t.Errorf("the rendered page lacks %q:\n%s", want, text)
		}
	}
	for _, c := range commands() {
		if !strings.Contains(text, "go-cluster "+c.name) {
			t.Errorf("the rendered page lacks the command %q", c.name)
		}
		fs := newFlagSet(c.name)
		c.impl.define(fs)
		for _, f := range flagNames(fs) {
			if !strings.Contains(text, "--"+f) {
				t.Errorf("the rendered page lacks %s's flag --%s", c.name, f)
			}
		}
	}
}
