// Package depcheck lists what a package depends on outside the standard
// library, for the tests that hold internal/election and internal/wire to
// it.
package depcheck

import (
	"os/exec"
	"strings"
	"testing"
)

// NonStandard lists the packages that the package in dir depends on,
// directly or not, that are not in the standard library, the package
// itself aside.
func NonStandard(t testing.TB, dir string) []string {
	t.Helper()
	cmd := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}} {{.Standard}}", ".")
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list -deps in %s: %v", dir, err)
	}
	self := exec.Command("go", "list", "-f", "{{.ImportPath}}", ".")
	self.Dir = dir
	me, err := self.Output()
	if err != nil {
		t.Fatalf("go list in %s: %v", dir, err)
	}
	var bad []string
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		path, std, ok := strings.Cut(line, " ")
		if !ok {
			t.Fatalf("go list printed %q", line)
		}
		if std != "true" && path != strings.TrimSpace(string(me)) {
			bad = append(bad, path)
		}
	}
	return bad
}
