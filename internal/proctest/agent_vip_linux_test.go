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

// requireRoot skips the test unless it runs as root, and fails it instead
// when CI is set: it must not be skipped silently there.
func requireRoot(t *testing.T) {
	t.Helper()
	if os.Geteuid() == 0 {
		return
	}
	if os.Getenv("CI") != "" {
		t.Fatal("this test needs root to create network namespaces (CI is set: it must not be skipped)")
	}
	t.Skip("this test needs root to create network namespaces")
}

// ipCmd runs ip with args.
func ipCmd(t *testing.T, args ...string) string {
	t.Helper()
	out, err := exec.Command("ip", args...).CombinedOutput()
	if err != nil {
		t.Fatalf("ip %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// netnsWithEth0 makes a network namespace with an interface eth0 (one end
// of a veth pair whose other end, peer0, is there too; both up) and
// returns its path; it is deleted at cleanup.
func netnsWithEth0(t *testing.T, name string) string {
	t.Helper()
	ipCmd(t, "netns", "add", name)
	t.Cleanup(func() { _ = exec.Command("ip", "netns", "del", name).Run() })
	ipCmd(t, "-n", name, "link", "add", "eth0", "type", "veth", "peer", "name", "peer0")
	ipCmd(t, "-n", name, "link", "set", "peer0", "up")
	ipCmd(t, "-n", name, "link", "set", "eth0", "up")
	return "/var/run/netns/" + name
}

// hasAddr reports whether eth0 of namespace name has addr.
func hasAddr(t *testing.T, name, addr string) bool {
	return strings.Contains(ipCmd(t, "-n", name, "-o", "addr", "show", "dev", "eth0"), " "+addr+"/")
}

// TestAgentVIPFollowsTheLeader: each agent manages the VIP in a network
// namespace of its own; the leader's holds it, a crash of the leader
// moves it to the other, and SIGTERM removes it before the agent exits.
func TestAgentVIPFollowsTheLeader(t *testing.T) {
	t.Parallel()
	requireRoot(t)
	natsBin, _ := binaries(t)
	ns := startNATS(t, natsBin)
	dir := t.TempDir()
	const vipAddr = "10.99.0.100"
	names := map[string]string{}
	agents := map[string]*runProc{}
	for _, id := range []string{"a", "b"} {
		names[id] = netnsName(t, "gcagent", id)
		path := netnsWithEth0(t, names[id])
		conf := fmt.Sprintf(`clusters:
  - name: agentvip
    connection: {servers: [%q]}
    election: {node_id: %s, lease_ttl: 2s}
    vips:
      - {address: %s/24, interface: eth0, netns: %s, garp: {count: 1, refresh: 0s}}
    notify:
      become_leader: [sh, -c, 'echo "$GO_CLUSTER_NODE $GO_CLUSTER_VIPS" >> %s/notify.log']
`, ns.URL(), id, vipAddr, path, dir)
		file := filepath.Join(dir, id+".yaml")
		if err := os.WriteFile(file, []byte(conf), 0o600); err != nil {
			t.Fatal(err)
		}
		p := &runProc{node: id, stderr: filepath.Join(t.TempDir(), id+".stderr"), exited: make(chan struct{})}
		startProc(t, p, nil, "agent", "--config", file)
		agents[id] = p
		if id == "a" {
			natstest.WaitFor(t, 15*time.Second, func() bool { return hasAddr(t, names["a"], vipAddr) }, "a never held the VIP")
		}
	}
	natstest.WaitFor(t, 10*time.Second, func() bool { return agents["b"].logged("node started") }, "b did not start")
	if hasAddr(t, names["b"], vipAddr) {
		t.Fatal("b holds the VIP while a leads")
	}
	if got := strings.TrimSpace(readFile(filepath.Join(dir, "notify.log"))); got != "a "+vipAddr+"/24" {
		t.Fatalf("notify log %q, want a's become_leader with GO_CLUSTER_VIPS", got)
	}

	agents["a"].signal(syscall.SIGKILL)
	agents["a"].waitExit(t, 5*time.Second)
	natstest.WaitFor(t, 15*time.Second, func() bool { return hasAddr(t, names["b"], vipAddr) }, "b did not take the VIP over")

	agents["b"].signal(syscall.SIGTERM)
	if code := agents["b"].waitExit(t, 20*time.Second); code != 0 {
		t.Fatalf("b exited %d", code)
	}
	if hasAddr(t, names["b"], vipAddr) {
		t.Fatal("b left the VIP behind after SIGTERM")
	}
}
