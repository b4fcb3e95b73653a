package proctest

import (
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ozanturksever/go-cluster/internal/natstest"
)

// unitLines returns the values of key= in the shipped unit, in order.
func unitLines(t *testing.T, key string) []string {
	t.Helper()
	b, err := os.ReadFile("../../packaging/go-cluster-agent.service")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(l), key+"="); ok {
			out = append(out, v)
		}
	}
	return out
}

// TestAgentUnitCleansUpAfterSIGKILL (issue 33, defect 7): a SIGKILLed
// agent leaves its VIP (and route) up; the shipped unit's ExecStopPost=,
// run as systemd runs it after the main process died, removes them, and
// a stray copy of the VIP with another prefix too.
func TestAgentUnitCleansUpAfterSIGKILL(t *testing.T) {
	t.Parallel()
	requireRoot(t)
	stops := unitLines(t, "ExecStopPost")
	if len(stops) != 1 {
		t.Fatalf("the unit has %d ExecStopPost= lines, want 1 that removes the VIPs: %q", len(stops), stops)
	}
	// systemd's prefixes ("-": failure ignored, and the like) are not part of the command.
	argv := strings.Fields(strings.TrimLeft(stops[0], "-@:+!"))
	if argv[0] != "/usr/bin/go-cluster" {
		t.Fatalf("ExecStopPost=%s does not run /usr/bin/go-cluster", stops[0])
	}
	argv[0] = goClusterBinary(t)

	natsBin, _ := binaries(t)
	ns := startNATS(t, natsBin)
	dir := t.TempDir()
	const ip, vip = "10.91.0.100", "10.91.0.100/24"
	spec := `{address: ` + vip + `, interface: eth0, netns: %[1]s, garp: {count: 1, refresh: 0s}, routes: [{to: 10.90.0.0/24}]}`
	a := newVIPHost(t, ns.URL(), dir, "vipcleanup", "a", 100, spec)
	a.start(t)
	natstest.WaitFor(t, 15*time.Second, func() bool { return a.has(t, vip) }, "a never held the VIP")
	route := func() string { return ipCmd(t, "-n", a.ns, "route", "show", "10.90.0.0/24") }
	natstest.WaitFor(t, 5*time.Second, func() bool { return route() != "" }, "a never added the route")

	killed := time.Now()
	a.agent.signal(syscall.SIGKILL)
	a.agent.waitExit(t, 5*time.Second)
	if !a.has(t, vip) {
		t.Fatal("the VIP went with the SIGKILLed agent: nothing to clean up")
	}
	ipCmd(t, "-n", a.ns, "addr", "add", ip+"/32", "dev", "eth0")

	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), "GO_CLUSTER_CONFIG="+a.file) // the unit's Environment=, pointing at the test's file
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("ExecStopPost=%s: %v\n%s", stops[0], err, out)
	}
	t.Logf("VIP off the host %v after the SIGKILL (cleanup run at once)", time.Since(killed).Round(time.Millisecond))
	if a.has(t, vip) || a.has(t, ip+"/32") {
		t.Fatalf("the VIP is still there after the unit's cleanup: %s\n%s", a.addrs(t), out)
	}
	if r := route(); r != "" {
		t.Fatalf("the route is still there after the unit's cleanup: %s", r)
	}
}
