package cluster

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestLayoutMatchesFiles keeps the layout in docs/design.md §11.1 true:
// every non-test Go file of the root package and of internal/election is
// named there (directly, or by a pattern such as state_*.go), and every
// file named there exists in one of them.
func TestLayoutMatchesFiles(t *testing.T) {
	t.Parallel()
	doc, err := os.ReadFile("docs/design.md")
	if err != nil {
		t.Fatal(err)
	}
	text := string(doc)
	start := strings.Index(text, "**11.1**")
	end := strings.Index(text, "Other packages:")
	if start < 0 || end < start {
		t.Fatal("docs/design.md has no §11.1 layout followed by \"Other packages:\"")
	}
	named := regexp.MustCompile(`[a-z_*]+\.go`).FindAllString(text[start:end], -1)
	dirs := []string{".", filepath.Join("internal", "election"), filepath.Join("internal", "engine")}
	for _, dir := range dirs {
		files, err := filepath.Glob(filepath.Join(dir, "*.go"))
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			f = filepath.Base(f)
			if strings.HasSuffix(f, "_test.go") {
				continue
			}
			found := false
			for _, n := range named {
				if ok, _ := filepath.Match(n, f); ok {
					found = true
					break
				}
			}
			if !found {
				t.Errorf("%s is not in the layout of docs/design.md §11.1", filepath.Join(dir, f))
			}
		}
	}
	for _, n := range named {
		exists := false
		for _, dir := range dirs {
			if m, _ := filepath.Glob(filepath.Join(dir, n)); len(m) > 0 {
				exists = true
			}
		}
		if !exists {
			t.Errorf("the layout of docs/design.md §11.1 names %s, which does not exist", n)
		}
	}
}

// TestDocsCiteTestsThatExist keeps the docs' citations true: every test,
// fuzz target, benchmark or example that docs/design.md or docs/testing.md
// names is a function of some _test.go file of the module, so a rule's
// test cannot be renamed or deleted while the docs still point to it.
func TestDocsCiteTestsThatExist(t *testing.T) {
	t.Parallel()
	defined := map[string]bool{}
	decl := regexp.MustCompile(`(?m)^func ((?:Test|Fuzz|Benchmark|Example)[A-Za-z0-9_]*)\(`)
	err := filepath.WalkDir(".", func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, "_test.go") {
			return err
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, m := range decl.FindAllStringSubmatch(string(src), -1) {
			defined[m[1]] = true
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	cited := regexp.MustCompile(`\b(?:Test|Fuzz|Benchmark|Example)[A-Z_][A-Za-z0-9_]*`)
	for _, doc := range []string{"docs/design.md", "docs/testing.md"} {
		text, err := os.ReadFile(doc)
		if err != nil {
			t.Fatal(err)
		}
		names := cited.FindAllString(string(text), -1)
		if len(names) == 0 {
			t.Errorf("%s cites no test: the check reads nothing", doc)
		}
		for _, name := range names {
			if !defined[name] {
				t.Errorf("%s cites %s, which no _test.go file of the module defines", doc, name)
			}
		}
	}
}

// TestEveryRuleHasATest is the rule-to-test check: every invariant (I1–I3),
// protocol rule (P1–P15) and shell rule (E1–E14) that docs/design.md
// defines has a row of at least one test in docs/testing.md's "Rules and
// their tests" (TestDocsCiteTestsThatExist checks that those tests exist).
func TestEveryRuleHasATest(t *testing.T) {
	t.Parallel()
	design, err := os.ReadFile("docs/design.md")
	if err != nil {
		t.Fatal(err)
	}
	tests, err := os.ReadFile("docs/testing.md")
	if err != nil {
		t.Fatal(err)
	}
	defined := regexp.MustCompile(`\*\*([IPE][0-9]+)[. ]`).FindAllStringSubmatch(string(design), -1)
	if len(defined) < 3+15+14 {
		t.Fatalf("design.md defines %d rules; the pattern reads too little", len(defined))
	}
	rows := map[string]int{}
	row := regexp.MustCompile(`(?m)^\| ([IPE][0-9]+) \| (.*) \|$`)
	for _, m := range row.FindAllStringSubmatch(string(tests), -1) {
		rows[m[1]] = len(regexp.MustCompile("`Test[A-Za-z0-9_]+`").FindAllString(m[2], -1))
	}
	for _, m := range defined {
		if rows[m[1]] == 0 {
			t.Errorf("rule %s of docs/design.md has no test in docs/testing.md's \"Rules and their tests\"", m[1])
		}
	}
}
