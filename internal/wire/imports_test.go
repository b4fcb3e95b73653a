package wire

import (
	"strings"
	"testing"

	"github.com/ozanturksever/go-cluster/internal/depcheck"
)

// TestImportsStandardLibraryOnly holds the wire vocabulary to the
// standard library: nothing it imports, directly or not, can reach NATS,
// the election or package cluster, which all import it. Only the package
// itself may be outside the standard library.
func TestImportsStandardLibraryOnly(t *testing.T) {
	if bad := depcheck.NonStandard(t, "."); len(bad) > 0 {
		t.Errorf("internal/wire depends on packages outside the standard library: %v", bad)
	}
}

// TestImportCheckFails is the check's negative control: the root package,
// which imports nats.go and this package, fails it, naming both.
func TestImportCheckFails(t *testing.T) {
	bad := strings.Join(depcheck.NonStandard(t, "../.."), " ")
	for _, want := range []string{"github.com/nats-io/nats.go", "github.com/ozanturksever/go-cluster/internal/wire"} {
		if !strings.Contains(bad, want) {
			t.Errorf("the check missed %s in the root package; it found: %s", want, bad)
		}
	}
}
