package proctest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ozanturksever/go-cluster/internal/natstest"
)

// TestAgentStatusAndMetricsShowTheVIP: two agents, each with its VIP's
// interface in a network namespace of its own: `go-cluster status` lists
// the VIP on the leader's row and none on the follower's, and each
// agent's /metrics says which holds it (issue 33, defect 10). Root.
func TestAgentStatusAndMetricsShowTheVIP(t *testing.T) {
	t.Parallel()
	requireRoot(t)
	natsBin, _ := binaries(t)
	ns := startNATS(t, natsBin)
	dir := t.TempDir()
	const vipAddr = "10.99.1.100"
	listen := map[string]string{}
	for _, id := range []string{"a", "b"} {
		name := netnsName(t, "gcobs", id)
		path := netnsWithEth0(t, name)
		listen[id] = fmt.Sprintf("127.0.0.1:%d", freePort(t))
		prio := map[string]int{"a": 100, "b": 50}[id]
		conf := fmt.Sprintf(`listen: %s
clusters:
  - name: agentobs
    connection: {servers: [%q]}
    election: {node_id: %s, lease_ttl: 2s, priority: %d}
    vips:
      - {address: %s/24, interface: eth0, netns: %s, garp: {count: 2, interval: 50ms, refresh: 0s}}
`, listen[id], ns.URL(), id, prio, vipAddr, path)
		file := filepath.Join(dir, id+".yaml")
		if err := os.WriteFile(file, []byte(conf), 0o600); err != nil {
			t.Fatal(err)
		}
		p := &runProc{node: id, stderr: filepath.Join(t.TempDir(), id+".stderr"), exited: make(chan struct{})}
		startProc(t, p, nil, "agent", "--config", file)
		if id == "a" {
			natstest.WaitFor(t, 15*time.Second, func() bool { return hasAddr(t, name, vipAddr) }, "a never held the VIP")
		}
	}
	held := func(id string) string {
		_, body := get("http://" + listen[id] + "/metrics")
		for _, l := range strings.Split(body, "\n") {
			if strings.HasPrefix(l, "gocluster_agent_vip_held{") && strings.Contains(l, `vip="`+vipAddr+`/24"`) {
				return l[strings.LastIndex(l, " ")+1:]
			}
		}
		return ""
	}
	natstest.WaitFor(t, 10*time.Second, func() bool { return held("a") == "1" && held("b") == "0" },
		"/metrics: a's vip_held %q, b's %q; want 1 and 0", lazy(func() string { return held("a") }), lazy(func() string { return held("b") }))

	var out string
	natstest.WaitFor(t, 10*time.Second, func() bool {
		b, err := exec.Command(goClusterBinary(t), "status", "--server", ns.URL(), "--cluster", "agentobs").CombinedOutput()
		out = string(b)
		return err == nil && rowHas(out, "a", "leader", vipAddr+"/24") && rowHas(out, "b", "follower", "-") &&
			!rowHas(out, "b", vipAddr+"/24")
	}, "go-cluster status does not list the VIP on a's row alone:\n%s", lazy(func() string { return out }))
	if !strings.Contains(out, "VIPS") || !strings.Contains(out, "FAILING CHECKS") {
		t.Fatalf("no VIPS and FAILING CHECKS columns:\n%s", out)
	}
}

// rowHas reports whether the line of out that starts with node has every
// one of words among its fields.
func rowHas(out, node string, words ...string) bool {
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		if len(f) == 0 || f[0] != node {
			continue
		}
		for _, w := range words {
			found := false
			for _, x := range f[1:] {
				found = found || x == w
			}
			if !found {
				return false
			}
		}
		return true
	}
	return false
}
