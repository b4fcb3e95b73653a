package proctest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"

	"github.com/ozanturksever/go-cluster/internal/natstest"
)

// binaries are built once per test process into binDir.
var (
	binOnce sync.Once
	binDir  string
	binErr  error
)

func TestMain(m *testing.M) {
	// Most tests wait on processes (leases, cooldowns, VIPs): they run
	// side by side, 4 per CPU unless -parallel says otherwise.
	natstest.WaitingParallelism(4)
	code := m.Run()
	if binDir != "" {
		_ = os.RemoveAll(binDir)
	}
	os.Exit(code)
}

// binaries returns the paths of the nats-server and clusternode programs,
// building them on first use (the module's own nats-server version),
// with the go-cluster CLI (goClusterBinary).
func binaries(t *testing.T) (natsServer, clusterNode string) {
	t.Helper()
	binOnce.Do(func() {
		binDir, binErr = os.MkdirTemp("", "proctest-bin-")
		if binErr != nil {
			return
		}
		// One go build for the three: it builds them side by side. Each
		// is named after its package's last element (nats-server/v2:
		// nats-server). go test puts its own GOROOT/bin first on the
		// tests' PATH.
		cmd := exec.Command("go", "build", "-o", binDir+string(filepath.Separator),
			"github.com/nats-io/nats-server/v2",
			"github.com/ozanturksever/go-cluster/internal/cmd/clusternode",
			"github.com/ozanturksever/go-cluster/cmd/go-cluster")
		if out, err := cmd.CombinedOutput(); err != nil {
			binErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if binErr != nil {
		t.Fatal(binErr)
	}
	return filepath.Join(binDir, "nats-server"), filepath.Join(binDir, "clusternode")
}

// goClusterBinary returns the path of the go-cluster CLI, building it on
// first use.
func goClusterBinary(t *testing.T) string {
	t.Helper()
	binaries(t)
	return filepath.Join(binDir, "go-cluster")
}
