package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// agentCheck writes text as an agent file and runs `go-cluster agent
// --check --config FILE` with extra flags in env, returning the exit code,
// stdout and stderr.
func agentCheck(t *testing.T, env map[string]string, text string, extra ...string) (code int, file, stdout, stderr string) {
	t.Helper()
	file = filepath.Join(t.TempDir(), "agent.yaml")
	if err := os.WriteFile(file, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	if env == nil {
		env = map[string]string{"XDG_CONFIG_HOME": t.TempDir()}
	}
	var out, errb bytes.Buffer
	args := append([]string{"agent", "--check", "--config", file}, extra...)
	code = run(context.Background(), args, &out, &errb, func(k string) string { return env[k] })
	return code, file, out.String(), errb.String()
}

// TestAgentCheckRefusesWhatThisHostCannotRun: --check refuses a VIP on an
// interface this host lacks and an exec check whose command is not here
// (exit 1, each named with its line), and --other-host checks the same
// file as one meant for another host (exit 0). On main the file passed:
// "valid (1 cluster(s))", exit 0 (issue 33, defects 1 and 11).
func TestAgentCheckRefusesWhatThisHostCannotRun(t *testing.T) {
	t.Parallel()
	text := "clusters:\n  - name: web\n    election: {node_id: web1}\n    checks:\n      - name: app\n        exec: {argv: [/nonexistent/check-app]}\n    vips:\n      - {address: 192.0.2.100/24, interface: eth9x}\n"
	code, file, stdout, stderr := agentCheck(t, nil, text)
	if code != exitFailure {
		t.Fatalf("exit %d, want %d; stdout %q stderr %q", code, exitFailure, stdout, stderr)
	}
	for _, want := range []string{
		"2 problem(s)",
		file + `:6: clusters[0].checks[0].exec.argv[0]: cannot be run on this host: exec: "/nonexistent/check-app"`,
		file + `:8: clusters[0].vips[0].interface: no interface "eth9x" on this host`,
		"--other-host",
	} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr %q does not say %q", stderr, want)
		}
	}
	code, _, stdout, stderr = agentCheck(t, nil, text, "--other-host")
	if code != exitOK || !strings.Contains(stdout, "valid (1 cluster(s))") {
		t.Fatalf("--other-host: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
}

// TestAgentOtherHostNeedsCheck: --other-host means nothing to a running
// agent, so without --check it is a usage error (exit 2).
func TestAgentOtherHostNeedsCheck(t *testing.T) {
	t.Parallel()
	var out, errb bytes.Buffer
	env := map[string]string{"XDG_CONFIG_HOME": t.TempDir()}
	code := run(context.Background(), []string{"agent", "--other-host", "--config", "/nonexistent.yaml"}, &out, &errb, func(k string) string { return env[k] })
	if code != exitUsage || !strings.Contains(errb.String(), "--other-host") {
		t.Fatalf("exit %d, stderr %q", code, errb.String())
	}
}

// TestAgentCheckTakesHostNamesAsNodeIDs: node_id and --node take a host
// name, as the library does (wire.CheckNodeID); what it refuses is
// refused. On main both were refused: "has character '.'" (issue 33,
// defect 3).
func TestAgentCheckTakesHostNamesAsNodeIDs(t *testing.T) {
	t.Parallel()
	code, _, _, stderr := agentCheck(t, nil, "clusters:\n  - name: web\n    election: {node_id: db1.example.com}\n")
	if code != exitOK {
		t.Errorf("node_id db1.example.com: exit %d, stderr %q", code, stderr)
	}
	code, _, _, stderr = agentCheck(t, nil, "clusters:\n  - name: web\n", "--node", "web1.example.com")
	if code != exitOK {
		t.Errorf("--node web1.example.com: exit %d, stderr %q", code, stderr)
	}
	code, _, _, stderr = agentCheck(t, nil, "clusters:\n  - name: web\n", "--node", "web1..example.com")
	if code != exitUsage || !strings.Contains(stderr, "--node") {
		t.Errorf("--node web1..example.com: exit %d, stderr %q", code, stderr)
	}
}

// TestAgentCheckWithServersSkipsTheSelectedContext: a file that names its
// servers does not read the context selected with `nats context select`,
// so a selection this user cannot read (here context.txt is a directory;
// as another user it is a home directory's 0700) fails nothing. On main:
// "NATS context: read .../context.txt: is a directory", exit 1 (issue 33,
// defect 11).
func TestAgentCheckWithServersSkipsTheSelectedContext(t *testing.T) {
	t.Parallel()
	cfgHome := t.TempDir()
	if err := os.MkdirAll(filepath.Join(cfgHome, "nats", "context.txt"), 0o700); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"XDG_CONFIG_HOME": cfgHome}
	code, _, stdout, stderr := agentCheck(t, env, "clusters:\n  - name: web\n    connection: {servers: [\"nats://127.0.0.1:4222\"]}\n    election: {node_id: web1}\n")
	if code != exitOK {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
}

// TestAgentCheckResolvesTheConnection: --check makes each cluster's
// connection as the agent would, so a context the file names and this
// host does not have is refused at the connection's line. On main
// --check passed it and the agent failed to connect every 2 s.
func TestAgentCheckResolvesTheConnection(t *testing.T) {
	t.Parallel()
	code, file, stdout, stderr := agentCheck(t, nil, "clusters:\n  - name: web\n    connection:\n      context: prod\n    election: {node_id: web1}\n")
	if code != exitFailure || !strings.Contains(stderr, file+`:3: clusters[0].connection: NATS context "prod"`) {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
}
