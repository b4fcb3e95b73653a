package election

import (
	"strings"
	"testing"

	"github.com/ozanturksever/go-cluster/internal/depcheck"
)

// TestImportsStandardLibraryOnly holds the election to the standard
// library: nothing it imports, directly or not, can reach NATS, the log
// handlers or the hooks of package cluster. Only the package itself and
// internal/wire (held to the standard library by its own test) may be
// outside the standard library.
func TestImportsStandardLibraryOnly(t *testing.T) {
	var bad []string
	for _, p := range depcheck.NonStandard(t, ".") {
		if p != "github.com/ozanturksever/go-cluster/internal/wire" {
			bad = append(bad, p)
		}
	}
	if len(bad) > 0 {
		t.Errorf("internal/election depends on packages outside the standard library: %v", bad)
	}
}

// TestImportCheckFails is the check's negative control: the root package,
// which imports nats.go and this package, fails it, naming both.
func TestImportCheckFails(t *testing.T) {
	bad := strings.Join(depcheck.NonStandard(t, "../.."), " ")
	for _, want := range []string{"github.com/nats-io/nats.go", "github.com/ozanturksever/go-cluster/internal/election"} {
		if !strings.Contains(bad, want) {
			t.Errorf("the check missed %s in the root package; it found: %s", want, bad)
		}
	}
}
