package main

import (
	"errors"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The definitions parse, and every mutant still applies: its anchor
// occurs exactly once in its file, and the mutated file is still Go.
// This runs in go test ./...; the mutants themselves do not (go run
// ./internal/proof/mutants).
func TestEveryMutantApplies(t *testing.T) {
	ms, err := parseMutants(mutantsFile)
	if err != nil {
		t.Fatal(err)
	}
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	root, err := moduleRoot(wd)
	if err != nil {
		t.Fatal(err)
	}
	covered := map[string]bool{}
	fast := 0
	for _, m := range ms {
		covered[m.Layer] = true
		if m.Fast {
			fast++
		}
		src, err := mutate(root, m)
		if err != nil {
			t.Errorf("%s: %v", m.Name, err)
			continue
		}
		if _, err := parser.ParseFile(token.NewFileSet(), m.File, src, parser.SkipObjectResolution); err != nil {
			t.Errorf("%s: the mutated %s does not parse: %v", m.Name, m.File, err)
		}
		if _, err := os.Stat(filepath.Join(root, filepath.FromSlash(m.Pkg))); err != nil {
			t.Errorf("%s: pkg %s: %v", m.Name, m.Pkg, err)
		}
	}
	for _, l := range []string{"machine", "sim", "driver", "view", "lifecycle", "dialer"} {
		if !covered[l] {
			t.Errorf("no mutant of layer %s", l)
		}
	}
	if fast == 0 {
		t.Error("no fast mutant: -fast would check nothing")
	}
}

func TestParseRefusesBadDefinitions(t *testing.T) {
	good := "mutant a\nlayer machine\nfile f.go\npkg .\nrun ^TestX$\nwhy rule 1\nfrom\n\tx := 1\nto\n\tx := 2\nend\n"
	ms, err := parseMutants(good)
	if err != nil || len(ms) != 1 {
		t.Fatalf("parse = %v, %v", ms, err)
	}
	if m := ms[0]; m.From != "\tx := 1" || m.To != "\tx := 2" || m.Timeout != defaultTimeout || m.Line != 1 {
		t.Fatalf("parsed %+v", m)
	}
	for name, text := range map[string]string{
		"duplicate name": good + "\n" + good,
		"unknown key":    strings.Replace(good, "why", "note", 1),
		"unknown layer":  strings.Replace(good, "layer machine", "layer kernel", 1),
		"no run":         strings.Replace(good, "run ^TestX$\n", "", 1),
		"no why":         strings.Replace(good, "why rule 1\n", "", 1),
		"no end":         strings.TrimSuffix(good, "end\n"),
		"no to":          strings.Replace(good, "to\n", "", 1),
		"same from, to":  strings.Replace(good, "x := 2", "x := 1", 1),
		"bad name":       strings.Replace(good, "mutant a", "mutant A b", 1),
		"bad regexp":     strings.Replace(good, "^TestX$", "(", 1),
		"stray line":     "layer machine\n" + good,
	} {
		if _, err := parseMutants(text); err == nil {
			t.Errorf("%s: parsed", name)
		}
	}
}

func TestMutateRefusesAMovedAnchor(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "f.go"), []byte("package f\n\nvar a = 1\nvar b = 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	m := Mutant{Name: "m", File: "f.go", From: "var a = 1", To: "var a = 2"}
	got, err := mutate(dir, m)
	if err != nil || string(got) != "package f\n\nvar a = 2\nvar b = 1\n" {
		t.Fatalf("mutate = %q, %v", got, err)
	}
	for from, want := range map[string]string{"var c = 1": "not found", "= 1\n": "found 2 times"} {
		m.From = from
		if _, err := mutate(dir, m); !errors.Is(err, errAnchor) || !strings.Contains(err.Error(), want) {
			t.Errorf("anchor %q: %v, want %q", from, err, want)
		}
	}
}

func TestJudgeReadsGoTestOutput(t *testing.T) {
	for _, c := range []struct {
		name, out string
		passed    bool
		want      Verdict
		by        string
		how       string
	}{
		{"passed", "ok  \tx\t0.1s\n", true, Survived, "", ""},
		{"no tests", "ok  \tx\t0.1s [no tests to run]\ntesting: warning: no tests to run\n", true, NoTests, "", ""},
		{"compile error", "# x\n./a.go:3:2: undefined: y\nFAIL\tx [build failed]\n", false, Broken, "", ""},
		{"setup failed", "FAIL\tx [setup failed]\n", false, Broken, "", ""},
		{"failed", "--- FAIL: TestA (0.1s)\n    --- FAIL: TestA/row (0.0s)\n--- FAIL: TestB (0.1s)\nFAIL\nFAIL\tx\t0.2s\n", false, Caught, "TestA,TestB", ""},
		{"timeout", "panic: test timed out after 2m0s\n\trunning tests:\n\t\tTestA (2m0s)\nFAIL\tx\t120.1s\n", false, Caught, "", "timeout"},
		{"panic", "panic: boom\n\ngoroutine 7 [running]:\nFAIL\tx\t0.1s\n", false, Caught, "", "panic"},
	} {
		o := judge(c.out, c.passed)
		if o.Verdict != c.want || strings.Join(o.By, ",") != c.by || o.How != c.how {
			t.Errorf("%s: %s by %v (%s), want %s by %q (%s)", c.name, o.Verdict, o.By, o.How, c.want, c.by, c.how)
		}
	}
}
