package proctest

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ozanturksever/go-cluster/internal/natstest"
)

// TestRunExitCodeAndRelease: the command gets the GO_CLUSTER_* variables,
// run exits with its status, and the release lets a run waiting elsewhere
// take over at once rather than after the TTL.
func TestRunExitCodeAndRelease(t *testing.T) {
	// Runs alone: an upper bound on time (the waiting run leads within ttl/2 of the release).
	natsBin, _ := binaries(t)
	ns := startNATS(t, natsBin)
	dir := t.TempDir()
	const ttl = 3 * time.Second
	a := startRun(t, ns.URL(), "runexit", "node-a", []string{"DIR=" + dir}, []string{"--ttl", ttl.String()},
		"sh", "-c", `echo "$GO_CLUSTER_CLUSTER $GO_CLUSTER_NODE $GO_CLUSTER_EPOCH" > "$DIR/a.env"; while [ ! -e "$DIR/go" ]; do sleep 0.02; done; exit 7`)
	natstest.WaitFor(t, 20*time.Second, func() bool { return readFile(filepath.Join(dir, "a.env")) != "" }, "node-a's command did not start")
	b := startRun(t, ns.URL(), "runexit", "node-b", []string{"DIR=" + dir}, []string{"--ttl", ttl.String()},
		"sh", "-c", `echo "$GO_CLUSTER_NODE $GO_CLUSTER_EPOCH" > "$DIR/b.env"`)
	natstest.WaitFor(t, 20*time.Second, func() bool { return b.logged("node started") }, "node-b did not start")

	if err := os.WriteFile(filepath.Join(dir, "go"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if code := a.waitExit(t, 10*time.Second); code != 7 {
		t.Fatalf("run exited %d, want the command's 7", code)
	}
	released := time.Now()
	fields := strings.Fields(readFile(filepath.Join(dir, "a.env")))
	if len(fields) != 3 || fields[0] != "runexit" || fields[1] != "node-a" || fields[2] == "0" {
		t.Fatalf("command environment = %q, want cluster, node, epoch", fields)
	}
	epochA, _ := strconv.ParseInt(fields[2], 10, 64)

	if code := b.waitExit(t, ttl); code != 0 {
		t.Fatalf("run node-b exited %d, want 0", code)
	}
	if took := time.Since(released); took > ttl/2 {
		t.Fatalf("node-b's command ran %v after node-a's release: it waited for the TTL (%v), not the release", took, ttl)
	}
	fb := strings.Fields(readFile(filepath.Join(dir, "b.env")))
	if len(fb) != 2 || fb[0] != "node-b" {
		t.Fatalf("node-b's environment = %q", fb)
	}
	if epochB, _ := strconv.ParseInt(fb[1], 10, 64); epochB <= epochA {
		t.Fatalf("node-b's epoch %d is not above node-a's %d", epochB, epochA)
	}
}

// TestRunForwardsSignals: a SIGTERM sent to run reaches the command, and
// run exits with the status the command chose.
func TestRunForwardsSignals(t *testing.T) {
	t.Parallel()
	natsBin, _ := binaries(t)
	ns := startNATS(t, natsBin)
	dir := t.TempDir()
	a := startRun(t, ns.URL(), "runsig", "node-a", []string{"DIR=" + dir}, []string{"--ttl", "3s"},
		"sh", "-c", `trap 'echo TERM > "$DIR/got"; exit 3' TERM; trap 'echo HUP >> "$DIR/hup"' HUP; touch "$DIR/up"; while :; do sleep 0.02; done`)
	natstest.WaitFor(t, 20*time.Second, func() bool { return readFile(filepath.Join(dir, "up")) != "" || fileExists(filepath.Join(dir, "up")) }, "the command did not start")
	a.signal(syscall.SIGHUP)
	natstest.WaitFor(t, 5*time.Second, func() bool { return strings.Contains(readFile(filepath.Join(dir, "hup")), "HUP") }, "SIGHUP did not reach the command")
	if !a.running() {
		t.Fatal("run exited on a SIGHUP the command caught")
	}
	a.signal(syscall.SIGTERM)
	if code := a.waitExit(t, 10*time.Second); code != 3 {
		t.Fatalf("run exited %d, want the command's 3", code)
	}
	if got := strings.TrimSpace(readFile(filepath.Join(dir, "got"))); got != "TERM" {
		t.Fatalf("the command recorded %q, want TERM", got)
	}
}

// TestRunKilledTakesChildAlong: when the leader's run is killed with
// SIGKILL its command dies with it (Pdeathsig), and the other run takes
// over after the TTL.
func TestRunKilledTakesChildAlong(t *testing.T) {
	t.Parallel()
	natsBin, _ := binaries(t)
	ns := startNATS(t, natsBin)
	dir := t.TempDir()
	script := `echo $$ > "$DIR/$GO_CLUSTER_NODE.pid"; while :; do sleep 0.02; done`
	a := startRun(t, ns.URL(), "runkill", "node-a", []string{"DIR=" + dir}, []string{"--ttl", "2s"}, "sh", "-c", script)
	pidFile := filepath.Join(dir, "node-a.pid")
	natstest.WaitFor(t, 20*time.Second, func() bool { return strings.HasSuffix(readFile(pidFile), "\n") }, "node-a's command did not start")
	startRun(t, ns.URL(), "runkill", "node-b", []string{"DIR=" + dir}, []string{"--ttl", "2s"}, "sh", "-c", script)
	pid, err := strconv.Atoi(strings.TrimSpace(readFile(pidFile)))
	if err != nil || !alive(pid) {
		t.Fatalf("node-a's command pid %q: alive %v, err %v", readFile(pidFile), alive(pid), err)
	}
	a.signal(syscall.SIGKILL)
	a.waitExit(t, 5*time.Second)
	natstest.WaitFor(t, 2*time.Second, func() bool { return !alive(pid) }, "node-a's command (pid %d) outlived its run", pid)
	natstest.WaitFor(t, 15*time.Second, func() bool { return fileExists(filepath.Join(dir, "node-b.pid")) }, "node-b did not take over")
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// TestRunWaitsForNATS: with no server to reach, run says so and tries
// again (it never leads on a server of its own); once a server is up it
// leads and runs the command.
func TestRunWaitsForNATS(t *testing.T) {
	t.Parallel()
	natsBin, _ := binaries(t)
	port := freePort(t)
	ns := newNATSProc(t, natsBin, "late", port, "")
	dir := t.TempDir()
	a := startRun(t, ns.URL(), "runlate", "node-a", []string{"DIR=" + dir}, []string{"--ttl", "2s", "--once"},
		"sh", "-c", `touch "$DIR/ran"`)
	natstest.WaitFor(t, 10*time.Second, func() bool { return a.logged("cannot reach NATS") }, "run did not say it cannot reach NATS")
	if fileExists(filepath.Join(dir, "ran")) || !a.running() {
		t.Fatal("the command ran, or run exited, with no NATS server")
	}
	ns.start(t)
	if code := a.waitExit(t, 20*time.Second); code != 0 {
		t.Fatalf("run exited %d, want 0", code)
	}
	if !fileExists(filepath.Join(dir, "ran")) {
		t.Fatal("the command did not run")
	}
}
