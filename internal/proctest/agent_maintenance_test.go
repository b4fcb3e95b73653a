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

// TestAgentMaintenance: go-cluster maintenance on makes the agent's
// leader step down and stay out; off lets it lead again.
func TestAgentMaintenance(t *testing.T) {
	t.Parallel()
	natsBin, _ := binaries(t)
	ns := startNATS(t, natsBin)
	dir := t.TempDir()
	note := fmt.Sprintf(`[sh, -c, 'echo "$GO_CLUSTER_EVENT $GO_CLUSTER_REASON" >> %s/notify.log']`, dir)
	conf := fmt.Sprintf("clusters:\n  - name: agentmaint\n    connection: {servers: [%q]}\n    election: {node_id: a, lease_ttl: 1s}\n    notify: {become_leader: %s, lose_leadership: %s, fault: %s}\n",
		ns.URL(), note, note, note)
	file := filepath.Join(dir, "a.yaml")
	if err := os.WriteFile(file, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	p := &runProc{node: "a", stderr: filepath.Join(t.TempDir(), "a.stderr"), exited: make(chan struct{})}
	startProc(t, p, nil, "agent", "--config", file)
	natstest.WaitFor(t, 15*time.Second, func() bool { return countNotices(dir, "become_leader") == 1 }, "a did not lead")

	cli := func(args ...string) (string, int) {
		out, err := exec.Command(goClusterBinary(t), append([]string{"--server", ns.URL(), "--cluster", "agentmaint"}, args...)...).CombinedOutput()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return string(out), code
	}
	if out, code := cli("maintenance", "on", "--node", "a"); code != 0 || !strings.Contains(out, "node a of cluster agentmaint: maintenance on") {
		t.Fatalf("maintenance on: exit %d: %s", code, out)
	}
	natstest.WaitFor(t, 10*time.Second, func() bool { return countNotices(dir, "lose_leadership") == 1 }, "a did not step down")
	if !hasNotice(dir, "fault maintenance: switched on") {
		t.Errorf("no fault notice naming the maintenance: %q", notices(dir))
	}
	if out, code := cli("maintenance", "off", "--node", "a"); code != 0 || !strings.Contains(out, "maintenance off") {
		t.Fatalf("maintenance off: exit %d: %s", code, out)
	}
	natstest.WaitFor(t, 10*time.Second, func() bool { return countNotices(dir, "become_leader") == 2 }, "a did not lead again")
	if out, code := cli("maintenance", "on", "--node", "nobody"); code != 1 || !strings.Contains(out, `no agent runs node "nobody"`) {
		t.Fatalf("maintenance of an unknown node: exit %d: %s", code, out)
	}
	if out, code := cli("maintenance", "maybe", "--node", "a"); code != 2 {
		t.Fatalf("maintenance maybe: exit %d: %s", code, out)
	}
}
