package proctest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ozanturksever/go-cluster/internal/natstest"
)

// agentProc is one `go-cluster agent` process.
type agentProc struct {
	node   string
	config string
	*runProc
}

// agentConfig is the file of node id: a file check on DIR/ready-<id>,
// notify commands that log every event to DIR/notify.log, and the
// overlap-checking service of TestRunNoOverlap.
func agentConfig(natsURL, dir, id string, ttl time.Duration, notifyTimeout string) string {
	note := fmt.Sprintf(`[sh, -c, 'echo "$GO_CLUSTER_EVENT $GO_CLUSTER_NODE $GO_CLUSTER_ROLE $GO_CLUSTER_LEADER $GO_CLUSTER_EPOCH" >> %s/notify.log']`, dir)
	return fmt.Sprintf(`clusters:
  - name: agenttest
    connection: {servers: [%q]}
    election: {node_id: %s, lease_ttl: %s}
    checks:
      - name: ready
        file: {path: %s/ready-%s}
        interval: 100ms
        timeout: 100ms
        rise: 1
        fall: 1
    notify:
      become_leader: %s
      lose_leadership: %s
      fault: %s
      timeout: %s
    service:
      argv: [sh, -c, %q]
`, natsURL, id, ttl, dir, id, note, note, note, notifyTimeout, overlapChild)
}

// startAgent writes node id's file and starts its agent.
func startAgent(t *testing.T, natsURL, dir, id string, ttl time.Duration) *agentProc {
	t.Helper()
	path := filepath.Join(dir, id+".yaml")
	if err := os.WriteFile(path, []byte(agentConfig(natsURL, dir, id, ttl, "5s")), 0o600); err != nil {
		t.Fatal(err)
	}
	p := &runProc{node: id, stderr: filepath.Join(t.TempDir(), id+".stderr"), exited: make(chan struct{})}
	startProc(t, p, []string{"RUN_LOCK=" + filepath.Join(dir, "lock"), "RUN_LOG=" + filepath.Join(dir, "runs.log")},
		"agent", "--config", path)
	return &agentProc{node: id, config: path, runProc: p}
}

// notices returns the lines of the notify log.
func notices(dir string) []string {
	var out []string
	for _, l := range strings.Split(readFile(filepath.Join(dir, "notify.log")), "\n") {
		if l != "" {
			out = append(out, l)
		}
	}
	return out
}

// hasNotice reports whether a line of the notify log starts with prefix.
func hasNotice(dir, prefix string) bool {
	for _, l := range notices(dir) {
		if strings.HasPrefix(l, prefix) {
			return true
		}
	}
	return false
}

// TestAgentFailover runs two agents: the leader runs the service and the
// notify commands say so; a failing check moves leadership (the service
// never runs twice at once); a reload with a bad file is refused; one that
// changes only the notify commands causes no failover; SIGTERM hands over
// at once.
func TestAgentFailover(t *testing.T) {
	// Runs alone: an upper bound on time (SIGTERM's handover within lease_ttl/2).
	natsBin, _ := binaries(t)
	ns := startNATS(t, natsBin)
	dir := t.TempDir()
	const ttl = 3 * time.Second
	for _, id := range []string{"a", "b"} {
		if err := os.WriteFile(filepath.Join(dir, "ready-"+id), nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	logPath := filepath.Join(dir, "runs.log")
	a := startAgent(t, ns.URL(), dir, "a", ttl)
	natstest.WaitFor(t, 3*ttl, func() bool { return hasNotice(dir, "become_leader a leader a ") }, "a did not lead")
	natstest.WaitFor(t, 5*time.Second, func() bool { s, _ := readStarts(t, logPath); return len(s) == 1 && s[0].node == "a" }, "a's service did not start")
	b := startAgent(t, ns.URL(), dir, "b", ttl)
	natstest.WaitFor(t, 10*time.Second, func() bool { return b.logged("node started") }, "b did not start")

	// Both agents answer health queries, as the library's nodes do.
	var health string
	natstest.WaitFor(t, 10*time.Second, func() bool {
		out, err := exec.Command(goClusterBinary(t), "health", "--server", ns.URL(), "--cluster", "agenttest", "--json").CombinedOutput()
		health = string(out)
		return err == nil && strings.Contains(health, `"nodeId": "a"`) && strings.Contains(health, `"nodeId": "b"`) && strings.Contains(health, "PRIMARY")
	}, "go-cluster health does not show both agents: %s", lazy(func() string { return health }))

	// a's check fails: it steps down, b leads and runs the service.
	if err := os.Remove(filepath.Join(dir, "ready-a")); err != nil {
		t.Fatal(err)
	}
	natstest.WaitFor(t, 10*time.Second, func() bool { return hasNotice(dir, "become_leader b leader b ") }, "b did not take over from a, not ready")
	tookOver := time.Now()
	natstest.WaitFor(t, 5*time.Second, func() bool { s, _ := readStarts(t, logPath); return len(s) == 2 && s[1].node == "b" }, "b's service did not start")
	for _, want := range []string{"fault a ", "lose_leadership a follower "} {
		if !hasNotice(dir, want) {
			t.Errorf("no %q notice: %q", want, notices(dir))
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "ready-a"), nil, 0o600); err != nil {
		t.Fatal(err)
	}

	// A bad file is refused; a's agent goes on.
	if err := os.WriteFile(a.config, []byte("clusters:\n  - name: agenttest\n    bogus: 1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	a.signal(syscall.SIGHUP)
	natstest.WaitFor(t, 5*time.Second, func() bool { return a.logged("reload refused") }, "a did not refuse a bad file")
	if !a.logged(`unknown key \"bogus\"`) && !a.logged(`unknown key "bogus"`) {
		t.Errorf("the refusal does not name the unknown key")
	}
	if !a.running() {
		t.Fatal("a exited on a bad reload")
	}

	// A change to the notify commands only: b keeps leading.
	before := len(notices(dir))
	if err := os.WriteFile(b.config, []byte(agentConfig(ns.URL(), dir, "b", ttl, "7s")), 0o600); err != nil {
		t.Fatal(err)
	}
	b.signal(syscall.SIGHUP)
	natstest.WaitFor(t, 5*time.Second, func() bool { return b.logged("msg=reloaded") }, "b did not reload")
	if got := notices(dir)[before:]; len(got) != 0 {
		t.Fatalf("a reload of notify commands caused events: %q", got)
	}

	// SIGTERM: b hands over at once, not after the TTL, once a's cooldown
	// after its step-down (one TTL) is over.
	natstest.WaitFor(t, 2*ttl, func() bool { return time.Since(tookOver) > ttl+time.Second }, "")
	b.signal(syscall.SIGTERM)
	stopped := time.Now()
	if code := b.waitExit(t, 20*time.Second); code != 0 {
		t.Fatalf("b exited %d", code)
	}
	natstest.WaitFor(t, ttl, func() bool { return countNotices(dir, "become_leader a leader a ") == 2 }, "a did not take over from b")
	if took := time.Since(stopped); took > ttl/2 {
		t.Errorf("a took over %v after b's SIGTERM: not a handover (TTL %v)", took, ttl)
	}
	if !hasNotice(dir, "lose_leadership b follower ") {
		t.Errorf("b ran no lose_leadership notice: %q", notices(dir))
	}
	natstest.WaitFor(t, 5*time.Second, func() bool { s, _ := readStarts(t, logPath); return len(s) == 3 }, "a's service did not start again")
	starts, overlaps := readStarts(t, logPath)
	if len(overlaps) > 0 {
		t.Fatalf("services overlapped: %q", overlaps)
	}
	for i := 1; i < len(starts); i++ {
		if starts[i].epoch <= starts[i-1].epoch {
			t.Fatalf("service starts out of epoch order: %+v", starts)
		}
	}
}

// countNotices counts the lines of the notify log that start with prefix.
func countNotices(dir, prefix string) int {
	n := 0
	for _, l := range notices(dir) {
		if strings.HasPrefix(l, prefix) {
			n++
		}
	}
	return n
}

// lazy formats as what its function returns when formatted: a failure
// message that shows the last value seen.
type lazy func() string

func (l lazy) String() string { return l() }
