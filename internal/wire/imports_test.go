package wire

import (
	"os/exec"
	"strings"
	"testing"
)

// TestImportsStandardLibraryOnly holds the wire vocabulary to the
// standard library: nothing it imports, directly or not, can reach NATS,
// the election or package cluster, which all import it. Only the package
// itself may be outside the standard library.
func TestImportsStandardLibraryOnly(t *testing.T) {
	if bad := nonStandardDeps(t, "."); len(bad) > 0 {
		t.Errorf("internal/wire depends on packages outside the standard library: %v", bad)
	}
}

// TestImportCheckFails is the check's negative control: the root package,
// which imports nats.go and this package, fails it, naming both.
func TestImportCheckFails(t *testing.T) {
	bad := strings.Join(nonStandardDeps(t, "../.."), " ")
	for _, want := range []string{"github.com/nats-io/nats.go", "github.com/ozanturksever/go-cluster/internal/wire"} {
		if !strings.Contains(bad, want) {
			t.Errorf("the check missed %s in the root package; it found: %s", want, bad)
		}
	}
}

// nonStandardDeps lists the packages dir depends on, itself aside, that
// are not in the standard library.
func nonStandardDeps(t *testing.T, dir string) []string {
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
