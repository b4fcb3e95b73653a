package proctest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
)

// binaries are built once per test process into binDir.
var (
	binOnce sync.Once
	binDir  string
	binErr  error
)

func TestMain(m *testing.M) {
	code := m.Run()
	if binDir != "" {
		_ = os.RemoveAll(binDir)
	}
	os.Exit(code)
}

// binaries returns the paths of the nats-server and clusternode programs,
// building them on first use (the module's own nats-server version).
func binaries(t *testing.T) (natsServer, clusterNode string) {
	t.Helper()
	binOnce.Do(func() {
		binDir, binErr = os.MkdirTemp("", "proctest-bin-")
		if binErr != nil {
			return
		}
		for _, b := range []struct{ out, pkg string }{
			{"nats-server", "github.com/nats-io/nats-server/v2"},
			{"clusternode", "github.com/ozanturksever/go-cluster/internal/cmd/clusternode"},
		} {
			// go test puts its own GOROOT/bin first on the tests' PATH.
			cmd := exec.Command("go", "build", "-o", filepath.Join(binDir, b.out), b.pkg)
			if out, err := cmd.CombinedOutput(); err != nil {
				binErr = fmt.Errorf("go build %s: %v\n%s", b.pkg, err, out)
				return
			}
		}
	})
	if binErr != nil {
		t.Fatal(binErr)
	}
	return filepath.Join(binDir, "nats-server"), filepath.Join(binDir, "clusternode")
}
