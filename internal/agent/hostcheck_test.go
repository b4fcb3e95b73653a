package agent

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// hostProblems parses text (valid) and returns what CheckHost finds.
func hostProblems(t *testing.T, text string, connect func(Cluster) (Endpoint, error)) []string {
	t.Helper()
	cfg, err := Parse("agent.yaml", []byte(text))
	if err != nil {
		t.Fatal(err)
	}
	err = cfg.CheckHost(connect)
	if err == nil {
		return nil
	}
	var ce *ConfigError
	if !errors.As(err, &ce) || !errors.Is(err, ErrInvalidConfig) {
		t.Fatalf("%v is not a *ConfigError", err)
	}
	var out []string
	for _, p := range ce.Problems {
		out = append(out, p.String())
	}
	return out
}

// TestCheckHostRefusesWhatThisHostCannotRun: a VIP on an interface this
// host does not have, and a command that cannot be run here (an exec
// check's argv[0] not found or not executable, a notify command, the
// service), are problems at their field's line; what exists passes. On
// main the file passed --check and the leader retried adding the address
// for as long as it led (issue 33, defects 1 and 11).
func TestCheckHostRefusesWhatThisHostCannotRun(t *testing.T) {
	dir := t.TempDir()
	notExec := filepath.Join(dir, "not-executable")
	if err := os.WriteFile(notExec, []byte("#!/bin/sh\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	got := hostProblems(t, `clusters:
  - name: web
    checks:
      - name: missing
        exec: {argv: [/nonexistent/check-app]}
      - name: not-on-path
        exec: {argv: [go-cluster-no-such-command]}
      - name: not-executable
        exec: {argv: [`+notExec+`]}
      - name: fine
        exec: {argv: [sh, -c, "true"]}
      - name: shell
        exec: {shell: "exit 0"}
    vips:
      - {address: 192.0.2.100/24, interface: eth9x}
      - {address: 192.0.2.101/24, interface: lo}
    notify:
      become_leader: [/nonexistent/notify]
    service:
      argv: [/nonexistent/service]
`, nil)
	want := []string{
		`agent.yaml:5: clusters[0].checks[0].exec.argv[0]: cannot be run on this host: exec: "/nonexistent/check-app"`,
		`agent.yaml:7: clusters[0].checks[1].exec.argv[0]: cannot be run on this host: exec: "go-cluster-no-such-command": executable file not found in $PATH`,
		`agent.yaml:9: clusters[0].checks[2].exec.argv[0]: cannot be run on this host: exec: "` + notExec + `": permission denied`,
		`agent.yaml:15: clusters[0].vips[0].interface: no interface "eth9x" on this host`,
		`agent.yaml:18: clusters[0].notify.become_leader[0]: cannot be run on this host: exec: "/nonexistent/notify"`,
		`agent.yaml:20: clusters[0].service.argv[0]: cannot be run on this host: exec: "/nonexistent/service"`,
	}
	if len(got) != len(want) {
		t.Fatalf("got %d problems:\n%s\nwant %d", len(got), strings.Join(got, "\n"), len(want))
	}
	for i := range want {
		if !strings.HasPrefix(got[i], want[i]) {
			t.Errorf("problem %d = %q\nwant it to start %q", i, got[i], want[i])
		}
	}
}

// TestCheckHostShellNeedsBinSh: a shell check is run by /bin/sh, which
// must be there; it is on every host these tests run on, so the check
// passes, and the field it would name is the check's shell.
func TestCheckHostShellNeedsBinSh(t *testing.T) {
	if _, err := exec.LookPath("/bin/sh"); err != nil {
		t.Fatalf("/bin/sh: %v", err)
	}
	if got := hostProblems(t, "clusters:\n  - name: web\n    checks:\n      - {name: s, exec: {shell: 'exit 0'}}\n", nil); got != nil {
		t.Fatalf("problems: %q", got)
	}
	if msg := commandProblem(shellPath + "-absent"); msg == "" {
		t.Fatal("a missing shell is not a problem")
	}
}

// TestCheckHostResolvesEachConnection: a connection the agent could not
// make from the file (Options.Connect fails: a context that cannot be
// read, say) is a problem at the cluster's connection.
func TestCheckHostResolvesEachConnection(t *testing.T) {
	got := hostProblems(t, "clusters:\n  - name: web\n    connection:\n      context: prod\n", func(cl Cluster) (Endpoint, error) {
		return Endpoint{}, errors.New("context " + cl.Connection.Context + ": cannot be read")
	})
	want := "agent.yaml:3: clusters[0].connection: context prod: cannot be read"
	if len(got) != 1 || got[0] != want {
		t.Fatalf("got %q, want %q", got, want)
	}
}

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

// TestCheckHostLooksInTheVIPsNetns: a VIP with netns has its interface
// looked for in that namespace (lo is in every one; eth0 is not in a new
// one), and a namespace that does not exist is a problem.
func TestCheckHostLooksInTheVIPsNetns(t *testing.T) {
	requireRoot(t)
	name := "agentcheck-" + strconv.Itoa(os.Getpid())
	if out, err := exec.Command("ip", "netns", "add", name).CombinedOutput(); err != nil {
		t.Fatalf("ip netns add: %v\n%s", err, out)
	}
	t.Cleanup(func() { _ = exec.Command("ip", "netns", "del", name).Run() })
	path := "/var/run/netns/" + name
	got := hostProblems(t, `clusters:
  - name: web
    vips:
      - {address: 192.0.2.100/24, interface: lo, netns: `+path+`}
      - {address: 192.0.2.101/24, interface: eth0, netns: `+path+`}
      - {address: 192.0.2.102/24, interface: eth0, netns: `+path+`-absent}
`, nil)
	want := []string{
		`agent.yaml:5: clusters[0].vips[1].interface: no interface "eth0" in network namespace ` + path,
		`agent.yaml:6: clusters[0].vips[2].interface: cannot open network namespace ` + path + `-absent`,
	}
	if len(got) != len(want) {
		t.Fatalf("got %d problems:\n%s\nwant %d", len(got), strings.Join(got, "\n"), len(want))
	}
	for i := range want {
		if !strings.HasPrefix(got[i], want[i]) {
			t.Errorf("problem %d = %q\nwant it to start %q", i, got[i], want[i])
		}
	}
}
