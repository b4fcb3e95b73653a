package cluster

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestLayoutMatchesFiles keeps the layout in docs/design.md §1.2 true:
// every non-test Go file of the root package and of internal/election is
// named there (directly, or by a pattern such as state_*.go), and every
// file named there exists in one of them.
func TestLayoutMatchesFiles(t *testing.T) {
	doc, err := os.ReadFile("docs/design.md")
	if err != nil {
		t.Fatal(err)
	}
	text := string(doc)
	start := strings.Index(text, "**1.2**")
	end := strings.Index(text, "Other packages:")
	if start < 0 || end < start {
		t.Fatal("docs/design.md has no §1.2 layout followed by \"Other packages:\"")
	}
	named := regexp.MustCompile(`[a-z_*]+\.go`).FindAllString(text[start:end], -1)
	dirs := []string{".", filepath.Join("internal", "election")}
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
				t.Errorf("%s is not in the layout of docs/design.md §1.2", filepath.Join(dir, f))
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
			t.Errorf("the layout of docs/design.md §1.2 names %s, which does not exist", n)
		}
	}
}
