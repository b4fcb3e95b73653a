package proctest

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ozanturksever/go-cluster/internal/natstest"
)

// TestAgentVIPLabelAndRoutes: the leading agent gives its VIP the label
// and adds the routes of the file (from the VIP, through the gateway, in
// the table given), and SIGTERM removes both before it exits.
func TestAgentVIPLabelAndRoutes(t *testing.T) {
	t.Parallel()
	requireRoot(t)
	natsBin, _ := binaries(t)
	ns := startNATS(t, natsBin)
	dir := t.TempDir()
	name := netnsName(t, "gcroutes", "")
	path := netnsWithEth0(t, name)
	conf := fmt.Sprintf(`clusters:
  - name: agentroutes
    connection: {servers: [%q]}
    election: {node_id: a, lease_ttl: 2s, preempt_delay: 1s}
    vips:
      - address: 10.98.0.100/24
        interface: eth0
        label: "eth0:web"
        netns: %s
        garp: {count: 1, refresh: 0s}
        routes:
          - {to: 10.9.0.0/16, via: 10.98.0.1, metric: 10}
          - {to: 10.8.0.0/24}
          - {to: default, via: 10.98.0.1, table: 100}
`, ns.URL(), path)
	file := filepath.Join(dir, "a.yaml")
	if err := os.WriteFile(file, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	p := &runProc{node: "a", stderr: filepath.Join(t.TempDir(), "a.stderr"), exited: make(chan struct{})}
	startProc(t, p, nil, "agent", "--config", file)

	routes := func() string { return ipCmd(t, "-n", name, "-4", "route", "show", "table", "all") }
	want := []string{
		"10.9.0.0/16 via 10.98.0.1 dev eth0 src 10.98.0.100 metric 10",
		"10.8.0.0/24 dev eth0 scope link src 10.98.0.100",
		"default via 10.98.0.1 dev eth0 table 100 src 10.98.0.100",
	}
	natstest.WaitFor(t, 15*time.Second, func() bool {
		got := routes()
		for _, w := range want {
			if !strings.Contains(got, w) {
				return false
			}
		}
		return true
	}, "the leader's routes never appeared")
	if addrs := ipCmd(t, "-n", name, "-4", "-o", "addr", "show", "dev", "eth0"); !strings.Contains(addrs, "10.98.0.100/24") ||
		!strings.Contains(addrs, "eth0:web") {
		t.Fatalf("the VIP with its label is not on eth0:\n%s", addrs)
	}

	p.signal(syscall.SIGTERM)
	if code := p.waitExit(t, 20*time.Second); code != 0 {
		t.Fatalf("the agent exited %d", code)
	}
	got := routes()
	for _, w := range []string{"10.9.0.0/16", "10.8.0.0/24", "table 100"} {
		if strings.Contains(got, w) {
			t.Fatalf("route %s left behind after SIGTERM:\n%s", w, got)
		}
	}
	if hasAddr(t, name, "10.98.0.100") {
		t.Fatal("the VIP was left behind after SIGTERM")
	}
}
