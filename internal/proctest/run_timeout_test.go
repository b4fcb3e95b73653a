package proctest

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ozanturksever/go-cluster/internal/natstest"
)

// exitLeadTimeout is run's documented exit status when --start-timeout
// passed before the command started.
const exitLeadTimeout = 124

// TestRunTimeout: with --start-timeout, a run that does not lead in time (another
// leads, or NATS cannot be reached) exits 124 without running its
// command; a command that started in time is not cut short by it.
func TestRunTimeout(t *testing.T) {
	// Runs alone: upper bounds on time (--start-timeout 1s, 1.5s and 3s against the start of a command).
	natsBin, _ := binaries(t)
	ns := startNATS(t, natsBin)
	dir := t.TempDir()
	env := []string{"DIR=" + dir}
	waitStop := `touch "$DIR/$GO_CLUSTER_NODE.up"; while [ ! -e "$DIR/$GO_CLUSTER_NODE.stop" ]; do sleep 0.02; done`
	up := func(node string) bool { return fileExists(filepath.Join(dir, node+".up")) }

	a := startRun(t, ns.URL(), "runtimeout", "node-a", env, []string{"--ttl", "2s"}, "sh", "-c", waitStop)
	natstest.WaitFor(t, 20*time.Second, func() bool { return up("node-a") }, "node-a's command did not start")

	t.Run("another leads", func(t *testing.T) {
		b := startRun(t, ns.URL(), "runtimeout", "node-b", env, []string{"--ttl", "2s", "--start-timeout", "1500ms"}, "sh", "-c", waitStop)
		if code := b.waitExit(t, 15*time.Second); code != exitLeadTimeout {
			t.Fatalf("run --start-timeout 1500ms while another leads exited %d, want %d", code, exitLeadTimeout)
		}
		if up("node-b") {
			t.Fatal("node-b's command ran, though it gave up")
		}
		if !b.logged("the command did not start within 1.5s") {
			t.Fatalf("node-b did not say why it exited:\n%s", readFile(b.stderr))
		}
	})

	t.Run("no NATS", func(t *testing.T) {
		url := "nats://127.0.0.1:" + strconv.Itoa(freePort(t))
		c := startRun(t, url, "runtimeout", "node-c", env, []string{"--ttl", "2s", "--start-timeout", "1s"}, "sh", "-c", waitStop)
		if code := c.waitExit(t, 15*time.Second); code != exitLeadTimeout {
			t.Fatalf("run --start-timeout 1s with no NATS exited %d, want %d", code, exitLeadTimeout)
		}
	})

	t.Run("started in time", func(t *testing.T) {
		d := startRun(t, ns.URL(), "runtimeout", "node-d", env, []string{"--ttl", "2s", "--start-timeout", "3s", "--once"}, "sh", "-c", waitStop)
		natstest.WaitFor(t, 10*time.Second, func() bool { return d.logged("node started") }, "node-d did not start")
		started := time.Now()
		if err := os.WriteFile(filepath.Join(dir, "node-a.stop"), nil, 0o600); err != nil {
			t.Fatal(err)
		}
		if code := a.waitExit(t, 10*time.Second); code != 0 {
			t.Fatalf("node-a exited %d", code)
		}
		natstest.WaitFor(t, 2*time.Second, func() bool { return up("node-d") }, "node-d's command did not start once node-a released the lease")
		// Past node-d's --start-timeout, its command still runs.
		natstest.WaitFor(t, 5*time.Second, func() bool { return time.Since(started) > 3200*time.Millisecond }, "")
		if !d.running() || strings.Contains(readFile(d.stderr), "did not start within") {
			t.Fatalf("node-d's run gave up after its command started:\n%s", readFile(d.stderr))
		}
		if err := os.WriteFile(filepath.Join(dir, "node-d.stop"), nil, 0o600); err != nil {
			t.Fatal(err)
		}
		if code := d.waitExit(t, 10*time.Second); code != 0 {
			t.Fatalf("node-d exited %d, want its command's 0", code)
		}
	})
}
