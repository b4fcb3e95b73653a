package proctest

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestAgentCheckAsAnotherUser: the built binary's --check, run as nobody
// with HOME of a directory nobody cannot read (as with `sudo -u` or
// setpriv keeping root's HOME), passes a file that names its servers: the
// selected nats context is not read. A file that names a context it
// cannot read is refused, as the agent would fail on it. On main the
// first failed: "go-cluster: NATS context: open .../context.txt:
// permission denied", exit 1 (issue 33, defect 11).
func TestAgentCheckAsAnotherUser(t *testing.T) {
	t.Parallel()
	requireRoot(t)
	if _, err := exec.LookPath("setpriv"); err != nil {
		t.Fatalf("setpriv (util-linux) is needed: %v", err)
	}
	dir, err := os.MkdirTemp("", "agentcheck-user-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "go-cluster") // binDir is 0700: nobody cannot run it there
	copyFile(t, goClusterBinary(t), bin, 0o755)
	home := filepath.Join(dir, "home") // root's, 0700, with a selected context
	if err := os.MkdirAll(filepath.Join(home, ".config", "nats", "context"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(home, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, ".config", "nats", "context.txt"), []byte("prod\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	servers := write("servers.yaml", "clusters:\n  - name: web\n    connection: {servers: [\"nats://127.0.0.1:4222\"]}\n    election: {node_id: web1}\n")
	named := write("named.yaml", "clusters:\n  - name: web\n    connection: {servers: [\"nats://127.0.0.1:4222\"], context: prod}\n    election: {node_id: web1}\n")
	check := func(file string) (int, string) {
		cmd := exec.Command("setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups", bin, "agent", "--check", "--config", file)
		cmd.Env = []string{"HOME=" + home, "PATH=/usr/bin:/bin"}
		out, err := cmd.CombinedOutput()
		if ee, ok := err.(*exec.ExitError); ok {
			return ee.ExitCode(), string(out)
		} else if err != nil {
			t.Fatal(err)
		}
		return 0, string(out)
	}
	if code, out := check(servers); code != 0 || !strings.Contains(out, "valid (1 cluster(s))") {
		t.Errorf("a file with servers, as nobody: exit %d\n%s", code, out)
	}
	if code, out := check(named); code != 1 || !strings.Contains(out, fmt.Sprintf("%s:3: clusters[0].connection:", named)) || !strings.Contains(out, "permission denied") {
		t.Errorf("a file naming a context nobody cannot read: exit %d, want 1 naming the connection\n%s", code, out)
	}
}

// copyFile copies src to dst with mode.
func copyFile(t *testing.T, src, dst string, mode os.FileMode) {
	t.Helper()
	in, err := os.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, mode)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
}
