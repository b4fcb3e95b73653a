package runner

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	cluster "github.com/ozanturksever/go-cluster"
	"github.com/ozanturksever/go-cluster/internal/natstest"
)

// groupChild is a command's background child: it records SIGTERM, SIGHUP
// and SIGUSR1 in $DIR/child.log, and writes its pid once its traps are
// set.
const groupChild = `trap 'echo TERM >> "$DIR/child.log"; exit 0' TERM
trap 'echo HUP >> "$DIR/child.log"' HUP
trap 'echo USR1 >> "$DIR/child.log"' USR1
echo $$ > "$DIR/child.pid.tmp" && mv "$DIR/child.pid.tmp" "$DIR/child.pid"
while :; do sleep 0.02; done`

// groupCommand starts groupChild in the background, survives SIGHUP and
// SIGUSR1, dies on SIGTERM, and exits 4, leaving the child running, once
// $DIR/exit exists. It ignores SIGHUP and SIGUSR1 only after the child
// has started (a child started with them ignored could not trap them), and
// says so in $DIR/parent.ready.
const groupCommand = `sh "$DIR/child.sh" &
trap '' HUP USR1
: > "$DIR/parent.ready"
while [ ! -e "$DIR/exit" ]; do sleep 0.02; done
exit 4`

// groupService starts a node whose service is groupCommand in a new
// directory, and returns the node, the directory and the child's pid.
func groupService(t *testing.T, id string) (*cluster.Node, string, int) {
	t.Helper()
	srv := natstest.RunServer(t)
	dir := groupDir(t)
	svc, err := NewService(ServiceConfig{Argv: []string{"sh", "-c", groupCommand}, Env: []string{"DIR=" + dir},
		Grace: 300 * time.Millisecond, BackoffMin: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	n := startServiceNode(t, srv, id, svc)
	t.Cleanup(func() { stop(t, n) })
	return n, dir, childPid(t, dir)
}

// groupDir writes the child's script to a new directory and returns it.
func groupDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "child.sh"), []byte(groupChild), 0o600); err != nil {
		t.Fatal(err)
	}
	return dir
}

// childPid waits for the command and its child to be ready for signals
// and returns the child's pid.
func childPid(t *testing.T, dir string) int {
	t.Helper()
	pidFile := filepath.Join(dir, "child.pid")
	natstest.WaitFor(t, 10*time.Second, func() bool { return strings.HasSuffix(readFile(pidFile), "\n") }, "the command's child did not start")
	natstest.WaitFor(t, 10*time.Second, func() bool { _, err := os.Stat(filepath.Join(dir, "parent.ready")); return err == nil },
		"the command did not set its traps")
	pid, err := strconv.Atoi(strings.TrimSpace(readFile(pidFile)))
	if err != nil {
		t.Fatal(err)
	}
	return pid
}

// childTermed waits for the child to record SIGTERM and be gone.
func childTermed(t *testing.T, dir string, pid int, when string) {
	t.Helper()
	natstest.WaitFor(t, 5*time.Second, func() bool { return !processAlive(pid) }, "the service's child (pid %d) still runs %s", pid, when)
	if !strings.Contains(readFile(filepath.Join(dir, "child.log")), "TERM\n") {
		t.Fatalf("the service's child did not get SIGTERM %s (log %q)", when, readFile(filepath.Join(dir, "child.log")))
	}
}

// processAlive reports whether pid exists and is not a zombie.
func processAlive[P int | string](pid P) bool {
	state, _, ok := procState(fmt.Sprint(pid))
	return ok && state != 'Z'
}

// TestServiceLossReachesTheProcessGroup: when leadership is lost, a child
// the service started in the background gets SIGTERM, and is gone before
// OnLoseLeadership returns (before StepDown releases the lease).
func TestServiceLossReachesTheProcessGroup(t *testing.T) {
	t.Parallel()
	natstest.CheckLeaks(t)
	n, dir, pid := groupService(t, "group-loss")
	if err := n.StepDown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if processAlive(pid) {
		t.Fatalf("the service's child (pid %d) still runs after StepDown returned", pid)
	}
	childTermed(t, dir, pid, "when leadership was lost")
}

// TestServiceExitTermsWhatItLeft: when the service exits while a child it
// started still runs, the child gets SIGTERM (a chance to finish cleanly)
// and is gone before the service is restarted.
func TestServiceExitTermsWhatItLeft(t *testing.T) {
	t.Parallel()
	natstest.CheckLeaks(t)
	_, dir, pid := groupService(t, "group-exit")
	if err := os.WriteFile(filepath.Join(dir, "exit"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	childTermed(t, dir, pid, "when the service exited")
}
