package proctest

import (
	"path/filepath"
	"testing"
	"time"
)

// TestRunStartTimeout: run's own flag, --start-timeout, gives up (exit
// 124) when the command has not started in time, counting the wait of a
// new bucket's first election (docs/design.md P6). --timeout, the common
// flag ("how long to wait for NATS and for replies"), means nothing else
// under run: run refuses it (exit 2) and names --start-timeout, instead
// of reading it as a second meaning (issue 41, item 6; it was the old
// spelling of --start-timeout).
func TestRunStartTimeout(t *testing.T) {
	t.Parallel()
	natsBin, _ := binaries(t)
	ns := startNATS(t, natsBin)
	dir := t.TempDir()
	env := []string{"DIR=" + dir}
	touch := `touch "$DIR/$GO_CLUSTER_NODE.up"`
	// A new bucket with a 10s lease: the first election waits about 10s.
	p := startRun(t, ns.URL(), "starttimeout", "node-new", env, []string{"--ttl", "10s", "--start-timeout", "1s"}, "sh", "-c", touch)
	if code := p.waitExit(t, 15*time.Second); code != exitLeadTimeout {
		t.Fatalf("run --start-timeout 1s on a new bucket exited %d, want %d:\n%s", code, exitLeadTimeout, readFile(p.stderr))
	}
	if fileExists(filepath.Join(dir, "node-new.up")) {
		t.Fatal("the command ran, though run gave up")
	}
	if !p.logged("the command did not start within 1s") {
		t.Fatalf("run did not say why it exited:\n%s", readFile(p.stderr))
	}

	old := startRun(t, ns.URL(), "starttimeout", "node-old", env, []string{"--ttl", "10s", "--timeout", "1s"}, "sh", "-c", touch)
	if code := old.waitExit(t, 15*time.Second); code != 2 || !old.logged("--start-timeout") || fileExists(filepath.Join(dir, "node-old.up")) {
		t.Fatalf("run --timeout 1s exited %d (want 2, refused, naming --start-timeout), its command ran: %v:\n%s",
			code, fileExists(filepath.Join(dir, "node-old.up")), readFile(old.stderr))
	}
}
