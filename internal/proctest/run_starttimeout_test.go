package proctest

import (
	"path/filepath"
	"testing"
	"time"
)

// TestRunStartTimeout: run's own flag, --start-timeout, gives up (exit
// 124) when the command has not started in time, counting the wait of a
// new bucket's first election (docs/design.md P6); --timeout after run,
// the old spelling, still does the same. On main run had no flag of its
// own: --timeout was the global one, "how long to wait for NATS and for
// replies", with a second meaning under run (issue 41, items 6 and 8).
func TestRunStartTimeout(t *testing.T) {
	natsBin, _ := binaries(t)
	ns := startNATS(t, natsBin)
	dir := t.TempDir()
	env := []string{"DIR=" + dir}
	touch := `touch "$DIR/$GO_CLUSTER_NODE.up"`
	for _, tc := range []struct{ node, flag string }{{"node-new", "--start-timeout"}, {"node-old", "--timeout"}} {
		// A new bucket with a 10s lease: the first election waits about 10s.
		p := startRun(t, ns.URL(), "starttimeout-"+tc.node, tc.node, env, []string{"--ttl", "10s", tc.flag, "1s"}, "sh", "-c", touch)
		if code := p.waitExit(t, 15*time.Second); code != exitLeadTimeout {
			t.Fatalf("run %s 1s on a new bucket exited %d, want %d:\n%s", tc.flag, code, exitLeadTimeout, readFile(p.stderr))
		}
		if fileExists(filepath.Join(dir, tc.node+".up")) {
			t.Fatalf("%s: the command ran, though run gave up", tc.node)
		}
		if !p.logged("the command did not start within 1s") {
			t.Fatalf("%s did not say why it exited:\n%s", tc.node, readFile(p.stderr))
		}
	}
}
