package main

// The mutants' definitions: the file mutants.txt, embedded, and its
// parser. The format is described at the top of mutants.txt.

import (
	_ "embed"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"
)

//go:embed mutants.txt
var mutantsFile string

// Mutant is one realistic bug: the snippet From of File replaced by To,
// which the tests Run (a -run regexp) of package Pkg must catch.
type Mutant struct {
	Name    string
	Layer   string   // machine, driver, lifecycle, dialer, view, sim, state, store, agent
	File    string   // relative to the module root, slash-separated
	Pkg     string   // a package pattern for go test, e.g. ./internal/election
	Run     string   // go test -run
	Skip    string   // go test -skip, optional
	Args    []string // the test binary's own flags, optional (e.g. -sim.seeds=2000)
	Fast    bool     // part of -fast: a few seconds each
	Timeout time.Duration
	Why     string // the rule it undoes and why the bug is realistic
	From    string // must occur exactly once in File
	To      string
	Line    int // where its definition starts in mutants.txt
}

// layers are the parts of the project a mutant may name.
var layers = map[string]bool{
	"machine": true, "driver": true, "lifecycle": true, "dialer": true,
	"view": true, "sim": true, "state": true, "store": true, "agent": true, "runner": true,
}

// defaultTimeout is go test's -timeout for a mutant that names none.
const defaultTimeout = 2 * time.Minute

// parseMutants reads the definitions; every error names its line.
func parseMutants(text string) ([]Mutant, error) {
	var out []Mutant
	lines := strings.Split(text, "\n")
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		if strings.TrimSpace(l) == "" || strings.HasPrefix(l, "#") {
			continue
		}
		key, val := splitKey(l)
		if key != "mutant" {
			return nil, fmt.Errorf("mutants.txt:%d: want \"mutant NAME\", got %q", i+1, l)
		}
		m, next, err := parseOne(lines, i)
		if err != nil {
			return nil, err
		}
		m.Name = val
		out = append(out, m)
		i = next
	}
	return out, checkAll(out)
}

// parseOne parses the mutant whose "mutant" line is lines[start]; it
// returns the index of its "end" line.
func parseOne(lines []string, start int) (Mutant, int, error) {
	m := Mutant{Line: start + 1, Timeout: defaultTimeout}
	at := func(i int, format string, args ...any) error {
		return fmt.Errorf("mutants.txt:%d: %s", i+1, fmt.Sprintf(format, args...))
	}
	i := start + 1
	for ; i < len(lines) && lines[i] != "from"; i++ {
		key, val := splitKey(lines[i])
		var err error
		switch key {
		case "layer":
			m.Layer = val
		case "file":
			m.File = val
		case "pkg":
			m.Pkg = val
		case "run":
			m.Run = val
		case "skip":
			m.Skip = val
		case "args":
			m.Args = strings.Fields(val)
		case "why":
			m.Why = strings.TrimSpace(m.Why + " " + val)
		case "fast":
			m.Fast, err = strconv.ParseBool(val)
		case "timeout":
			m.Timeout, err = time.ParseDuration(val)
		default:
			return m, 0, at(i, "unknown key %q (want layer, file, pkg, run, skip, args, fast, timeout, why, or from)", key)
		}
		if err != nil {
			return m, 0, at(i, "%s: %v", key, err)
		}
	}
	from, i, ok := snippet(lines, i+1, "to")
	if !ok {
		return m, 0, at(start, "no \"from\" ... \"to\" ... \"end\" after the keys")
	}
	to, i, ok := snippet(lines, i+1, "end")
	if !ok {
		return m, 0, at(start, "no \"end\" after \"to\"")
	}
	m.From, m.To = from, to
	return m, i, nil
}

// snippet returns the lines from lines[i] up to the line that is exactly
// stop, joined without a final newline, and the index of the stop line.
func snippet(lines []string, i int, stop string) (string, int, bool) {
	for j := i; j < len(lines); j++ {
		if lines[j] == stop {
			return strings.Join(lines[i:j], "\n"), j, true
		}
	}
	return "", 0, false
}

func splitKey(l string) (key, val string) {
	key, val, _ = strings.Cut(strings.TrimSpace(l), " ")
	return key, strings.TrimSpace(val)
}

var namePattern = regexp.MustCompile(`^[a-z0-9][a-z0-9-]*$`)

// checkAll checks what can be checked without the source: names unique
// and well formed, every field there, regexps that compile.
func checkAll(ms []Mutant) error {
	seen := map[string]int{}
	for _, m := range ms {
		at := func(format string, args ...any) error {
			return fmt.Errorf("mutants.txt:%d: mutant %q: %s", m.Line, m.Name, fmt.Sprintf(format, args...))
		}
		if !namePattern.MatchString(m.Name) {
			return at("a name is lower case letters, digits and dashes")
		}
		if l, dup := seen[m.Name]; dup {
			return at("the name is used at line %d too", l)
		}
		seen[m.Name] = m.Line
		switch {
		case !layers[m.Layer]:
			return at("layer %q is none of %v", m.Layer, sortedKeys(layers))
		case m.File == "" || m.Pkg == "" || m.Run == "":
			return at("file, pkg and run are required")
		case m.Why == "":
			return at("why is required: the rule it undoes")
		case m.From == "":
			return at("from is empty")
		case m.From == m.To:
			return at("from and to are the same")
		}
		for _, re := range []string{m.Run, m.Skip} {
			if _, err := regexp.Compile(re); err != nil {
				return at("%v", err)
			}
		}
	}
	return nil
}
