package main

// Running a mutant's tests and judging the outcome from go test's output.

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"time"
)

// Verdict is what became of a mutant.
type Verdict string

// The verdicts. Only Caught passes; the others fail the run.
const (
	Caught   Verdict = "CAUGHT"
	Survived Verdict = "SURVIVED" // every test passed: the net has a hole
	Broken   Verdict = "BROKEN"   // the mutant does not compile, or its anchor is gone
	NoTests  Verdict = "NOTESTS"  // run matched no test: the mutant tests nothing
	Passed   Verdict = "PASS"     // a baseline run passed
)

// Outcome is a run of go test under one mutant (or none: the baseline).
type Outcome struct {
	Verdict Verdict
	By      []string // the top-level tests that failed
	How     string   // "timeout", "panic" or "" (a test failed)
	Elapsed time.Duration
	Output  string
}

// testOptions are the go test flags every run shares.
type testOptions struct {
	race bool
}

// goTest runs m's tests in root, with the overlay when it is not "".
func goTest(ctx context.Context, root, overlay string, m Mutant, opt testOptions) Outcome {
	args := []string{"test", "-count=1", "-vet=off", "-timeout", m.Timeout.String(), "-run", m.Run}
	if m.Skip != "" {
		args = append(args, "-skip", m.Skip)
	}
	if opt.race {
		args = append(args, "-race")
	}
	if overlay != "" {
		args = append(args, "-overlay", overlay)
	}
	args = append(args, m.Pkg)
	args = append(args, m.Args...)
	// go test ends a test binary at -timeout; this bounds the build too.
	ctx, cancel := context.WithTimeout(ctx, m.Timeout+5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "GOFLAGS=") // the flags are ours alone
	cmd.WaitDelay = 10 * time.Second
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	start := time.Now()
	err := cmd.Run()
	o := judge(out.String(), err == nil)
	o.Elapsed = time.Since(start)
	return o
}

var (
	failLine    = regexp.MustCompile(`(?m)^--- FAIL: (\S+)`)
	buildFailed = regexp.MustCompile(`(?m)^FAIL\s+\S+\s+\[(build|setup) failed\]|^# \S+\n.*\.go:\d+:\d+: `)
)

// judge reads go test's output: passed says it exited 0.
func judge(out string, passed bool) Outcome {
	o := Outcome{Output: out}
	switch {
	case passed && strings.Contains(out, "no tests to run"):
		o.Verdict = NoTests
	case passed:
		o.Verdict = Survived
	case buildFailed.MatchString(out):
		o.Verdict = Broken
	default:
		o.Verdict = Caught
		for _, f := range failLine.FindAllStringSubmatch(out, -1) {
			o.By = appendNew(o.By, f[1])
		}
		switch {
		case strings.Contains(out, "panic: test timed out"):
			o.How = "timeout"
		case len(o.By) == 0 && strings.Contains(out, "panic: "):
			o.How = "panic"
		}
	}
	return o
}

func appendNew(list []string, s string) []string {
	for _, x := range list {
		if x == s {
			return list
		}
	}
	return append(list, s)
}
