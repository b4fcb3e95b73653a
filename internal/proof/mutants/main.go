// Command mutants proves the tests catch the bugs they are meant to: it
// applies each named mutant of mutants.txt (a realistic bug: a rule of
// docs/design.md §9 undone, a boundary moved, a check dropped) to the
// source through go test -overlay, runs the tests meant to catch it, and
// fails if any mutant survives, does not compile, or names a snippet no
// longer in its file.
//
//	go run ./internal/proof/mutants              every mutant
//	go run ./internal/proof/mutants -fast        the fast ones (CI)
//	go run ./internal/proof/mutants -list        list them
//	go run ./internal/proof/mutants -run rule34  those whose name matches
//	go run ./internal/proof/mutants -baseline    first check the tests pass unmutated
//	go run ./internal/proof/mutants -fast -j 4   four at a time (CI)
//
// docs/testing.md (Mutants) says how to add one.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"regexp"
	"strings"
	"text/tabwriter"
	"time"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout))
}

// config is the command line.
type config struct {
	match    *regexp.Regexp
	list     bool
	fast     bool
	baseline bool
	verbose  bool
	jobs     int
	test     testOptions
}

func parseFlags(args []string, errOut io.Writer) (config, error) {
	fs := flag.NewFlagSet("mutants", flag.ContinueOnError)
	fs.SetOutput(errOut)
	runRE := fs.String("run", "", "only the mutants whose name matches this regexp")
	var c config
	fs.BoolVar(&c.list, "list", false, "list the mutants and exit")
	fs.BoolVar(&c.fast, "fast", false, "only the fast mutants (CI)")
	fs.BoolVar(&c.baseline, "baseline", false, "first run each mutant's tests on the unmutated source: they must pass")
	fs.BoolVar(&c.verbose, "v", false, "print go test's output of every run")
	fs.BoolVar(&c.test.race, "race", false, "run the tests with -race")
	fs.IntVar(&c.jobs, "j", 1, "run this many mutants at once; their lines print in order")
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	if fs.NArg() > 0 {
		return c, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	if c.jobs < 1 {
		return c, fmt.Errorf("-j %d: at least 1", c.jobs)
	}
	re, err := regexp.Compile(*runRE)
	if err != nil {
		return c, fmt.Errorf("-run: %w", err)
	}
	c.match = re
	return c, nil
}

func run(args []string, out io.Writer) int {
	c, err := parseFlags(args, out)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		fmt.Fprintln(out, "mutants:", err)
		return 2
	}
	all, err := parseMutants(mutantsFile)
	if err != nil {
		fmt.Fprintln(out, "mutants:", err)
		return 2
	}
	var ms []Mutant
	for _, m := range all {
		if c.match.MatchString(m.Name) && (m.Fast || !c.fast) {
			ms = append(ms, m)
		}
	}
	if c.list {
		list(out, ms)
		return 0
	}
	wd, err := os.Getwd()
	if err == nil {
		wd, err = moduleRoot(wd)
	}
	if err != nil {
		fmt.Fprintln(out, "mutants:", err)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if c.baseline && !baseline(ctx, out, wd, ms, c) {
		return 1
	}
	start := time.Now()
	results := runAll(ctx, wd, ms, c, out)
	return summary(out, ms, results, time.Since(start))
}

// runAll runs the mutants c.jobs at a time, in order, and reports each
// in order as soon as it and those before it are known. Beside another
// mutant's build and tests, a test that fails only under load counts as
// a catch: -j 1 is the strict run.
func runAll(ctx context.Context, root string, ms []Mutant, c config, out io.Writer) []Outcome {
	results := make([]Outcome, len(ms))
	done := make([]chan struct{}, len(ms))
	for i := range done {
		done[i] = make(chan struct{})
	}
	next := make(chan int)
	go func() {
		defer close(next)
		for i := range ms {
			next <- i
		}
	}()
	for range c.jobs {
		go func() {
			for i := range next {
				results[i] = runMutant(ctx, root, ms[i], c.test)
				close(done[i])
			}
		}()
	}
	for i, m := range ms {
		<-done[i]
		report(out, m, results[i], c.verbose)
	}
	return results
}

// runMutant applies m through an overlay in a temporary directory and runs
// its tests.
func runMutant(ctx context.Context, root string, m Mutant, opt testOptions) Outcome {
	mutated, err := mutate(root, m)
	if err != nil {
		return Outcome{Verdict: Broken, Output: err.Error()}
	}
	dir, err := os.MkdirTemp("", "mutant-"+m.Name+"-")
	if err != nil {
		return Outcome{Verdict: Broken, Output: err.Error()}
	}
	defer os.RemoveAll(dir)
	overlay, err := writeOverlay(root, dir, m, mutated)
	if err != nil {
		return Outcome{Verdict: Broken, Output: err.Error()}
	}
	return goTest(ctx, root, overlay, m, opt)
}

// baseline runs each distinct test selection once on the unmutated source.
func baseline(ctx context.Context, out io.Writer, root string, ms []Mutant, c config) bool {
	ok := true
	seen := map[string]bool{}
	for _, m := range ms {
		key := strings.TrimSpace(fmt.Sprintf("%s -run '%s' %s", m.Pkg, m.Run, strings.Join(m.Args, " ")))
		if m.Skip != "" {
			key += " -skip '" + m.Skip + "'"
		}
		if seen[key] {
			continue
		}
		seen[key] = true
		o := goTest(ctx, root, "", m, c.test)
		if o.Verdict == Survived { // passed, as it must
			fmt.Fprintf(out, "baseline  %s: ok (%.1fs)\n", key, o.Elapsed.Seconds())
			continue
		}
		ok = false
		fmt.Fprintf(out, "baseline  %s: FAILED unmutated (%s)\n%s\n", key, o.Verdict, indent(tail(o.Output, 40)))
	}
	return ok
}

// report prints one mutant's line as soon as it is known, and the output
// that explains a failure of the net.
func report(out io.Writer, m Mutant, o Outcome, verbose bool) {
	fmt.Fprintf(out, "%-44s %-9s %s\n", m.Name, m.Layer, describe(o))
	if o.Verdict != Caught || verbose {
		fmt.Fprintf(out, "    %s: go test -run '%s' %s\n    %s\n", m.File, m.Run, m.Pkg, m.Why)
		fmt.Fprintln(out, indent(tail(o.Output, 40)))
	}
}

func describe(o Outcome) string {
	s := string(o.Verdict)
	if o.Verdict == Caught {
		switch {
		case len(o.By) > 0:
			s += " by " + strings.Join(o.By, ", ")
		case o.How == "":
			s += " (the package failed, no test named)"
		}
		if o.How != "" {
			s += " (" + o.How + ")"
		}
	}
	if o.Elapsed > 0 {
		s += fmt.Sprintf(" (%.1fs)", o.Elapsed.Seconds())
	}
	return s
}

// summary prints the table and returns the exit status.
func summary(out io.Writer, ms []Mutant, results []Outcome, took time.Duration) int {
	fmt.Fprintln(out)
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "MUTANT\tLAYER\tVERDICT\tBY\tTIME")
	failed := 0
	for i, m := range ms {
		o := results[i]
		if o.Verdict != Caught {
			failed++
		}
		by := shortList(o.By, 2)
		if o.How != "" {
			by = strings.TrimPrefix(by+","+o.How, ",")
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%.1fs\n", m.Name, m.Layer, o.Verdict, by, o.Elapsed.Seconds())
	}
	tw.Flush()
	fmt.Fprintf(out, "%d mutants, %d caught, %d not, in %v\n", len(ms), len(ms)-failed, failed, took.Round(100*time.Millisecond))
	if failed > 0 {
		return 1
	}
	return 0
}

// shortList is the first n names of list, and how many more.
func shortList(list []string, n int) string {
	if len(list) <= n {
		return strings.Join(list, ",")
	}
	return fmt.Sprintf("%s +%d", strings.Join(list[:n], ","), len(list)-n)
}

func list(out io.Writer, ms []Mutant) {
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "MUTANT\tLAYER\tFAST\tFILE\tTESTS")
	for _, m := range ms {
		fmt.Fprintf(tw, "%s\t%s\t%v\t%s\t%s -run '%s'\n", m.Name, m.Layer, m.Fast, m.File, m.Pkg, m.Run)
	}
	tw.Flush()
}

// tail is the last n lines of s.
func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = append([]string{"..."}, lines[len(lines)-n:]...)
	}
	return strings.Join(lines, "\n")
}

func indent(s string) string {
	return "    | " + strings.ReplaceAll(s, "\n", "\n    | ")
}
