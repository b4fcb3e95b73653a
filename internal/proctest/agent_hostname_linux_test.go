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

// inUTS is argv run in a UTS namespace of its own whose host name is
// host: `unshare --uts` execs a shell that sets it and execs argv, so
// the process is argv's (signals reach it). The name is written to the
// kernel as it is (hostname(1) would refuse the bad ones tested here).
func inUTS(host string, argv ...string) *exec.Cmd {
	return exec.Command("unshare", append([]string{"--uts", "sh", "-c", `printf %s "$0" > /proc/sys/kernel/hostname && exec "$@"`, host}, argv...)...)
}

// checkAs runs `go-cluster agent --check --config file` on a host named
// host and returns its exit code and output.
func checkAs(t *testing.T, host, file string) (int, string) {
	t.Helper()
	out, err := inUTS(host, goClusterBinary(t), "agent", "--check", "--config", file).CombinedOutput()
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode(), string(out)
	} else if err != nil {
		t.Fatal(err)
	}
	return 0, string(out)
}

// TestAgentHostNameIsTheNodeID: the built binary on a host named
// web1.example.com, with no node_id, passes --check, runs as node
// web1.example.com (it leads, and go-cluster maintenance reaches it by
// that name), and --check refuses exactly what the agent refuses: a host
// name the library does not take as a NodeID. node_id: db1.example.com
// passes too. On main --check passed web1.example.com and the agent then
// exited 1 ("the host name cannot be one ... character '.'"), and
// --check refused node_id: db1.example.com (issue 33, defect 3).
func TestAgentHostNameIsTheNodeID(t *testing.T) {
	t.Parallel()
	requireRoot(t)
	natsBin, _ := binaries(t)
	ns := startNATS(t, natsBin)
	dir := t.TempDir()
	noID := filepath.Join(dir, "no-id.yaml")
	if err := os.WriteFile(noID, []byte(fmt.Sprintf("clusters:\n  - name: hostnames\n    connection: {servers: [%q]}\n    election: {lease_ttl: 1s}\n", ns.URL())), 0o600); err != nil {
		t.Fatal(err)
	}
	dotted := filepath.Join(dir, "dotted.yaml")
	if err := os.WriteFile(dotted, []byte(fmt.Sprintf("clusters:\n  - name: hostnames\n    connection: {servers: [%q]}\n    election: {node_id: db1.example.com}\n", ns.URL())), 0o600); err != nil {
		t.Fatal(err)
	}

	if code, out := checkAs(t, "web1.example.com", dotted); code != 0 {
		t.Errorf("--check of node_id db1.example.com: exit %d\n%s", code, out)
	}
	if code, out := checkAs(t, "web1..example.com", noID); code != 1 || !strings.Contains(out, `clusters[0].election.node_id: not set, and the host name "web1..example.com" cannot be a node ID`) {
		t.Errorf("--check on host web1..example.com: exit %d, want 1 naming the host name\n%s", code, out)
	}
	if code, out := checkAs(t, "web1.example.com", noID); code != 0 {
		t.Fatalf("--check on host web1.example.com: exit %d\n%s", code, out)
	}

	p := &runProc{node: "web1.example.com", stderr: filepath.Join(t.TempDir(), "agent.stderr"), exited: make(chan struct{})}
	errFile, err := os.Create(p.stderr)
	if err != nil {
		t.Fatal(err)
	}
	defer errFile.Close()
	p.cmd = inUTS("web1.example.com", goClusterBinary(t), "agent", "--config", noID)
	p.cmd.Stdout, p.cmd.Stderr = errFile, errFile
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		_ = p.cmd.Wait()
		p.code = p.cmd.ProcessState.ExitCode()
		close(p.exited)
	}()
	t.Cleanup(func() {
		p.signal(syscall.SIGKILL)
		<-p.exited
		if t.Failed() {
			t.Logf("agent stderr:\n%s", readFile(p.stderr))
		}
	})

	cli := func(args ...string) (string, error) {
		out, err := exec.Command(goClusterBinary(t), append([]string{"--server", ns.URL(), "--cluster", "hostnames"}, args...)...).CombinedOutput()
		return string(out), err
	}
	var status string
	natstest.WaitFor(t, 15*time.Second, func() bool {
		out, err := cli("status", "--json")
		status = out
		return err == nil && strings.Contains(out, `"leader": "web1.example.com"`)
	}, "the agent on web1.example.com did not lead under that name: %s", lazy(func() string { return status }))
	if out, err := cli("maintenance", "on", "--node", "web1.example.com"); err != nil || !strings.Contains(out, "maintenance on") {
		t.Fatalf("maintenance on --node web1.example.com: %v\n%s", err, out)
	}
	if !p.running() {
		t.Fatalf("the agent exited with %d", p.code)
	}
}
