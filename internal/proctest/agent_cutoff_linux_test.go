package proctest

import (
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ozanturksever/go-cluster/internal/faultproxy"
	"github.com/ozanturksever/go-cluster/internal/natstest"
)

// cutoffConfig is node id's file: the VIP on eth0 of namespace nsPath
// and a service that writes its PID to DIR/svc-<id>.pid and sleeps.
func cutoffConfig(natsURL, dir, id, nsPath, vipAddr string, ttl time.Duration) string {
	return fmt.Sprintf(`clusters:
  - name: agentcutoff
    connection: {servers: [%q]}
    election: {node_id: %s, lease_ttl: %s}
    vips:
      - {address: %s/24, interface: eth0, netns: %s, garp: {count: 3, interval: 100ms, refresh: 0s}}
    service:
      argv: [sh, -c, 'echo $$ > %s/svc-%s.pid; exec sleep 1000']
`, natsURL, id, ttl, vipAddr, nsPath, dir, id)
}

// TestAgentCutOffFromNATSLetsGoBeforeTheSuccessorAnnounces: the leading
// agent reaches NATS through a fault proxy, which is cut. Its service must
// be dead and its VIP gone (netlink event in its namespace) before the
// successor's first gratuitous ARP for the VIP arrives on the other end
// of the successor's veth. The margin is logged.
func TestAgentCutOffFromNATSLetsGoBeforeTheSuccessorAnnounces(t *testing.T) {
	// Runs alone: a race built from timings (the old leader lets go about lease_ttl/10 before the successor announces).
	for _, fault := range []string{"cut", "blackhole"} {
		t.Run(fault, func(t *testing.T) { cutOff(t, fault) })
	}
}

func cutOff(t *testing.T, fault string) {
	requireRoot(t)
	natsBin, _ := binaries(t)
	ns := startNATS(t, natsBin)
	dir := t.TempDir()
	const ttl = 2 * time.Second
	const vipAddr = "10.97.0.100"
	vip := netip.MustParseAddr(vipAddr)
	px := faultproxy.New(t, strings.TrimPrefix(ns.URL(), "nats://"))
	names := map[string]string{}
	agents := map[string]*runProc{}
	for _, id := range []string{"a", "b"} {
		names[id] = netnsName(t, "gccut", id)
		path := netnsWithEth0(t, names[id])
		url := ns.URL()
		if id == "a" {
			url = px.URL()
		}
		file := filepath.Join(dir, id+".yaml")
		if err := os.WriteFile(file, []byte(cutoffConfig(url, dir, id, path, vipAddr, ttl)), 0o600); err != nil {
			t.Fatal(err)
		}
		p := &runProc{node: id, stderr: filepath.Join(t.TempDir(), id+".stderr"), exited: make(chan struct{})}
		startProc(t, p, nil, "agent", "--config", file)
		agents[id] = p
		if id == "a" {
			natstest.WaitFor(t, 5*ttl, func() bool { return hasAddr(t, names["a"], vipAddr) }, "a never held the VIP")
		}
	}
	var pid int
	natstest.WaitFor(t, 5*time.Second, func() bool {
		pid, _ = strconv.Atoi(strings.TrimSpace(readFile(filepath.Join(dir, "svc-a.pid"))))
		return pid > 0 && alive(pid)
	}, "a's service did not start")
	natstest.WaitFor(t, 10*time.Second, func() bool { return agents["b"].logged("node started") }, "b did not start")
	if hasAddr(t, names["b"], vipAddr) {
		t.Fatal("b holds the VIP while a leads")
	}

	// The capture's socket needs an IPv4 address on its interface: one of
	// another subnet, which plays no part in the VIP's.
	ipCmd(t, "-n", names["b"], "addr", "add", "192.0.2.254/24", "dev", "peer0")
	garp := firstGARP(t, names["b"], "peer0", vip)
	vipGone := addrRemoved(t, names["a"], vipAddr+"/24")
	svcDead := exited(t, pid)
	cut := time.Now()
	if fault == "cut" {
		px.Cut()
	} else {
		px.Blackhole()
	}

	var gone, dead, announced time.Time
	timeout := time.After(5 * ttl)
	for gone.IsZero() || dead.IsZero() || announced.IsZero() {
		select {
		case gone = <-vipGone:
		case dead = <-svcDead:
		case announced = <-garp:
		case <-timeout:
			t.Fatalf("after the %s: a's VIP removed %v, a's service dead %v, b's first GARP %v (zero: not seen)", fault, gone, dead, announced)
		}
	}
	let := gone
	if dead.After(let) {
		let = dead
	}
	margin := announced.Sub(let)
	t.Logf("%s: a's service dead %v and its VIP gone %v after the fault; b's first GARP %v after it: margin %v",
		fault, dead.Sub(cut).Round(time.Millisecond), gone.Sub(cut).Round(time.Millisecond),
		announced.Sub(cut).Round(time.Millisecond), margin.Round(time.Millisecond))
	if margin <= 0 {
		t.Fatalf("b announced the VIP %v before a let go of it (service dead %v, VIP gone %v)", -margin, dead, gone)
	}
	if !hasAddr(t, names["b"], vipAddr) || hasAddr(t, names["a"], vipAddr) {
		t.Fatal("after the failover the VIP is not on b alone")
	}
}
