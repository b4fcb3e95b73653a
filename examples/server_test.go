// Package examples holds the tests that run the example programs as built
// binaries: how each finds its NATS server.
package examples

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"go/parser"
	"go/token"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// The examples are built once per test process into binDir.
var (
	binOnce sync.Once
	binDir  string
	binErr  error
)

func TestMain(m *testing.M) {
	code := m.Run()
	if binDir != "" {
		_ = os.RemoveAll(binDir)
	}
	os.Exit(code)
}

// example returns the path of the built example name (basic, demo, ...),
// building every example on first use.
func example(t *testing.T, name string) string {
	t.Helper()
	binOnce.Do(func() {
		binDir, binErr = os.MkdirTemp("", "examples-bin-")
		if binErr != nil {
			return
		}
		// Readable by the unprivileged user the vip test runs as.
		if binErr = os.Chmod(binDir, 0o755); binErr != nil {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		// go test puts its own GOROOT/bin first on the tests' PATH.
		out, err := exec.CommandContext(ctx, "go", "build", "-o", binDir+string(filepath.Separator), "./...").CombinedOutput()
		if err != nil {
			binErr = fmt.Errorf("go build ./...: %v\n%s", err, out)
		}
	})
	if binErr != nil {
		t.Fatal(binErr)
	}
	return filepath.Join(binDir, name)
}

// cleanEnv is this process's environment without NATS_URL (nor any other
// NATS_ setting) and NODE_ID, plus env: what a program sees under sudo,
// which drops NATS_URL.
func cleanEnv(env ...string) []string {
	var out []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "NATS_") && !strings.HasPrefix(kv, "NODE_ID=") {
			out = append(out, kv)
		}
	}
	return append(out, env...)
}

// outcome is how a run of an example ended.
type outcome struct {
	code           int // -1: killed at the deadline
	stdout, stderr string
	took           time.Duration
}

// runExample runs bin with args in a clean environment plus env, for at
// most limit; a run still going then is killed (code -1).
func runExample(t *testing.T, bin string, limit time.Duration, env []string, args ...string) outcome {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = cleanEnv(env...)
	return wait(t, cmd, limit)
}

// wait runs cmd for at most limit and says how it ended.
func wait(t *testing.T, cmd *exec.Cmd, limit time.Duration) outcome {
	t.Helper()
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var err error
	killed := false
	select {
	case err = <-done:
	case <-time.After(limit):
		killed = true
		_ = cmd.Process.Kill()
		err = <-done
	}
	o := outcome{stdout: stdout.String(), stderr: stderr.String(), took: time.Since(start)}
	var exit *exec.ExitError
	switch {
	case killed:
		o.code = -1
	case err == nil:
	case errors.As(err, &exit):
		o.code = exit.ExitCode()
	default:
		t.Fatalf("run %s: %v", cmd.Path, err)
	}
	return o
}

// The VIP example never elects on a server of its own: without -nats or
// NATS_URL (sudo drops NATS_URL) two hosts would each start one and both
// hold the address. It refuses at once, before it touches anything, and
// needs no privilege to say so: as root the test runs it as nobody.
func TestVIPRefusesWithoutServer(t *testing.T) {
	bin := example(t, "vip")
	cmd := exec.Command(bin, "-addr", "10.0.0.100", "-iface", "gocl-absent0", "-node", "h1")
	cmd.Env = cleanEnv()
	switch {
	case os.Geteuid() != 0:
	case reachableByAll(bin):
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	default: // a private TMPDIR: the refusal is checked as root alone
		t.Logf("%s is not reachable by other users: run as root", bin)
	}
	o := wait(t, cmd, 20*time.Second)
	if o.code != 2 {
		t.Fatalf("exit %d after %v, want 2 at once\nstdout:\n%s\nstderr:\n%s", o.code, o.took, o.stdout, o.stderr)
	}
	if !strings.Contains(o.stderr, "no NATS server") || !strings.Contains(o.stderr, "-nats") {
		t.Errorf("stderr does not say a server is needed:\n%s", o.stderr)
	}
	if o.stdout != "" {
		t.Errorf("it started something before refusing:\n%s", o.stdout)
	}
}

// reachableByAll reports whether every user may run path: each directory
// above it searchable by others.
func reachableByAll(path string) bool {
	for dir := filepath.Dir(path); ; dir = filepath.Dir(dir) {
		fi, err := os.Stat(dir)
		if err != nil || fi.Mode().Perm()&0o001 == 0 {
			return false
		}
		if dir == filepath.Dir(dir) {
			return true
		}
	}
}

// The examples meant to run as several processes start an embedded
// server only when asked (-embedded): without a server they refuse, and
// with a server and -embedded they refuse the contradiction.
func TestMultiProcessExamplesNeedEmbeddedFlag(t *testing.T) {
	for _, name := range []string{"basic", "health", "metrics"} {
		bin := example(t, name)
		for _, tc := range []struct {
			what string
			env  []string
			args []string
			says string
		}{
			{"no server", []string{"NODE_ID=n1"}, nil, "-embedded"},
			{"-embedded with -nats", []string{"NODE_ID=n1"}, []string{"-embedded", "-nats", "nats://127.0.0.1:1"}, "choose one"},
			{"-embedded with NATS_URL", []string{"NODE_ID=n1", "NATS_URL=nats://127.0.0.1:1"}, []string{"-embedded"}, "choose one"},
		} {
			o := runExample(t, bin, 20*time.Second, tc.env, tc.args...)
			if o.code != 2 {
				t.Errorf("%s, %s: exit %d after %v, want 2 at once\nstdout:\n%s\nstderr:\n%s", name, tc.what, o.code, o.took, o.stdout, o.stderr)
				continue
			}
			if !strings.Contains(o.stderr, tc.says) || o.stdout != "" {
				t.Errorf("%s, %s: want nothing on stdout and %q on stderr\nstdout:\n%s\nstderr:\n%s", name, tc.what, tc.says, o.stdout, o.stderr)
			}
		}
	}
}

// Asked with -embedded, they run on a server of their own and say so in
// their first line of output; the in-process demos (every node in one
// process) do so without being asked.
func TestEmbeddedServerSaidFirst(t *testing.T) {
	for _, tc := range []struct {
		name string
		env  []string
		args []string
		stop string // send SIGTERM once stdout has this; "" runs to the end
	}{
		{"basic", []string{"NODE_ID=n1"}, []string{"-embedded"}, "LEADER"},
		{"health", nil, []string{"-embedded", "-nodes", "2", "-duration", "2s"}, ""},
		{"metrics", nil, []string{"-embedded", "-nodes", "2", "-duration", "2s", "-listen", "127.0.0.1:0"}, ""},
		{"demo", nil, []string{"-ttl", "1s"}, ""},
		{"state", nil, []string{"-increments", "8"}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			first, o := runUntil(t, example(t, tc.name), tc.env, tc.stop, tc.args...)
			if o.code != 0 {
				t.Fatalf("exit %d after %v\nstdout:\n%s\nstderr:\n%s", o.code, o.took, o.stdout, o.stderr)
			}
			if !strings.Contains(first, "embedded NATS server") || !strings.Contains(first, "nats://127.0.0.1:") {
				t.Errorf("first line %q does not say it runs an embedded NATS server, with its URL\nstdout:\n%s", first, o.stdout)
			}
		})
	}
}

// runUntil runs bin in a clean environment plus env and returns its first
// line of output and how it ended. With stop set, it sends SIGTERM once a
// line of stdout contains stop; either way it waits at most a minute.
func runUntil(t *testing.T, bin string, env []string, stop string, args ...string) (string, outcome) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = cleanEnv(env...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	pipe, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	timer := time.AfterFunc(time.Minute, func() { _ = cmd.Process.Kill() })
	defer timer.Stop()
	var stdout strings.Builder
	first := ""
	sc := bufio.NewScanner(pipe)
	for i := 0; sc.Scan(); i++ {
		line := sc.Text()
		stdout.WriteString(line + "\n")
		if i == 0 {
			first = line
		}
		if stop != "" && strings.Contains(line, stop) {
			_ = cmd.Process.Signal(syscall.SIGTERM)
			stop = ""
		}
	}
	_, _ = io.Copy(io.Discard, pipe)
	err = cmd.Wait()
	o := outcome{stdout: stdout.String(), stderr: stderr.String(), took: time.Since(start)}
	var exit *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &exit):
		o.code = exit.ExitCode()
	default:
		t.Fatalf("run %s: %v", bin, err)
	}
	return first, o
}

// The examples are programs to copy: none imports an internal package of
// the module or the test-support packages (clustertest,
// internal/natstest); those that start an embedded server do it with
// examples/embedded, public, which a copy can import or copy too.
func TestExamplesImportNoTestSupport(t *testing.T) {
	files, err := filepath.Glob("*/*.go")
	if err != nil {
		t.Fatal(err)
	}
	banned := []string{"github.com/ozanturksever/go-cluster/clustertest", "github.com/ozanturksever/go-cluster/internal/natstest"}
	checked := 0
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		parsed, err := parser.ParseFile(token.NewFileSet(), f, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		checked++
		for _, imp := range parsed.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			for _, b := range banned {
				if path == b {
					t.Errorf("%s imports %s", f, path)
				}
			}
			if strings.Contains(path, "/go-cluster/internal/") {
				t.Errorf("%s imports %s, an internal package: a copy of it would not build", f, path)
			}
		}
	}
	if checked < 6 {
		t.Errorf("checked %d files, want every example's", checked)
	}
}
