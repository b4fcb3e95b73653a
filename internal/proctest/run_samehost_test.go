package proctest

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// sameHostChild holds an exclusive flock while it runs, logs its start
// and end, and exits 0 after a short while; one that finds the lock held
// logs "overlap".
const sameHostChild = `exec 9>>"$RUN_LOCK"
if ! flock -n 9; then echo "overlap $$ $GO_CLUSTER_EPOCH $GO_CLUSTER_NODE" >> "$RUN_LOG"; exit 99; fi
echo "start $$ $GO_CLUSTER_EPOCH $GO_CLUSTER_NODE" >> "$RUN_LOG"
sleep 0.3 9>&-
echo "end $$" >> "$RUN_LOG"`

// TestRunsOnOneHostQueue: three `go-cluster run --once` on one host, with
// the default node ID, queue as runs on three hosts do: each command runs
// once, never two at a time, each under its own node ID that still shows
// the host name. On main the default node ID was the host name alone, so
// the second and third runs exited 1 at once, "NodeID used by another
// process" (issue 41, item 7).
func TestRunsOnOneHostQueue(t *testing.T) {
	t.Parallel()
	natsBin, _ := binaries(t)
	ns := startNATS(t, natsBin)
	host, err := os.Hostname()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	logPath := filepath.Join(dir, "runs.log")
	env := []string{"RUN_LOCK=" + filepath.Join(dir, "lock"), "RUN_LOG=" + logPath}
	var runs []*runProc
	for i := range 3 {
		p := &runProc{node: fmt.Sprintf("run-%d", i), stderr: filepath.Join(t.TempDir(), "run.stderr"), exited: make(chan struct{})}
		startProc(t, p, env, "run", "--server", ns.URL(), "--cluster", "samehost", "--ttl", "2s", "--once", "--verbose", "--", "sh", "-c", sameHostChild)
		runs = append(runs, p)
	}
	for _, p := range runs {
		if code := p.waitExit(t, 40*time.Second); code != 0 {
			t.Fatalf("%s exited %d, want 0:\n%s", p.node, code, readFile(p.stderr))
		}
	}
	starts, overlaps := readStarts(t, logPath)
	if len(overlaps) > 0 {
		t.Fatalf("commands overlapped: %q", overlaps)
	}
	if len(starts) != 3 {
		t.Fatalf("%d commands started, want 3:\n%s", len(starts), readFile(logPath))
	}
	seen := map[string]bool{}
	for i, s := range starts {
		if !strings.Contains(s.node, host) || seen[s.node] {
			t.Errorf("start %d under node %q: want a node ID of its own with the host name %q", i, s.node, host)
		}
		seen[s.node] = true
		if i > 0 && s.epoch <= starts[i-1].epoch {
			t.Errorf("epochs of the starts do not go up: %+v", starts)
		}
	}
}
