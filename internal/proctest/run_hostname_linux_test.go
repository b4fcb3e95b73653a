package proctest

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestRunAcceptsHostNamesAsNodeIDs: run takes a fully qualified host name
// as its node ID, given with --node or read from the host name (in a UTS
// namespace of its own named web1.example.com), as the library does.
func TestRunAcceptsHostNamesAsNodeIDs(t *testing.T) {
	t.Parallel()
	natsBin, _ := binaries(t)
	ns := startNATS(t, natsBin)
	record := []string{"sh", "-c", `echo "$GO_CLUSTER_NODE" > "$DIR/node"`}

	t.Run("--node", func(t *testing.T) {
		dir := t.TempDir()
		p := &runProc{node: "db1", stderr: filepath.Join(dir, "stderr"), exited: make(chan struct{})}
		startProc(t, p, []string{"DIR=" + dir}, append([]string{"run", "--server", ns.URL(), "--cluster", "runfqdn",
			"--node", "db1.example.com", "--ttl", "1s", "--once", "--"}, record...)...)
		if code := p.waitExit(t, 20*time.Second); code != 0 {
			t.Fatalf("run --node db1.example.com exited %d, want 0; stderr:\n%s", code, readFile(p.stderr))
		}
		if got := strings.TrimSpace(readFile(filepath.Join(dir, "node"))); got != "db1.example.com" {
			t.Fatalf("GO_CLUSTER_NODE = %q, want db1.example.com", got)
		}
	})

	t.Run("host name", func(t *testing.T) {
		requireRoot(t)
		dir := t.TempDir()
		// A UTS namespace of its own, named web1.example.com, then run.
		setName := `echo web1.example.com > /proc/sys/kernel/hostname && exec "$0" "$@"`
		cmd := exec.Command("sh", append([]string{"-c", setName, goClusterBinary(t), "run", "--server", ns.URL(),
			"--cluster", "runfqdn-host", "--ttl", "1s", "--once", "--"}, record...)...)
		cmd.Env = append(os.Environ(), "DIR="+dir)
		cmd.SysProcAttr = &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWUTS}
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("run as host web1.example.com: %v\n%s", err, out)
		}
		// The default node ID is the host name and the run's process ID.
		if got := strings.TrimSpace(readFile(filepath.Join(dir, "node"))); !strings.HasPrefix(got, "web1.example.com-") {
			t.Fatalf("GO_CLUSTER_NODE = %q, want web1.example.com-PID", got)
		}
	})
}
