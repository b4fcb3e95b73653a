package proctest

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ozanturksever/go-cluster/internal/natstest"
)

// groupChild is a command's background child: it records SIGTERM, SIGHUP
// and SIGUSR1 in $DIR/child.log, and writes its pid once its traps are set.
const groupChild = `trap 'echo TERM >> "$DIR/child.log"; exit 0' TERM
trap 'echo HUP >> "$DIR/child.log"' HUP
trap 'echo USR1 >> "$DIR/child.log"' USR1
echo $$ > "$DIR/child.pid.tmp" && mv "$DIR/child.pid.tmp" "$DIR/child.pid"
while :; do sleep 0.02; done`

// groupCommand starts groupChild in the background, survives SIGHUP and
// SIGUSR1 itself, dies on SIGTERM, and exits 4, leaving the child
// running, once $DIR/exit exists.
const groupCommand = `sh "$DIR/child.sh" &
trap '' HUP USR1
while [ ! -e "$DIR/exit" ]; do sleep 0.02; done
exit 4`

// groupDir writes the child's script to a new directory and returns it.
func groupDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "child.sh"), []byte(groupChild), 0o600); err != nil {
		t.Fatal(err)
	}
	return dir
}

// childPid waits for the command's child to be ready and returns its pid.
func childPid(t *testing.T, dir string) int {
	t.Helper()
	path := filepath.Join(dir, "child.pid")
	natstest.WaitFor(t, 20*time.Second, func() bool { return strings.HasSuffix(readFile(path), "\n") }, "the command's child did not start")
	pid, err := strconv.Atoi(strings.TrimSpace(readFile(path)))
	if err != nil {
		t.Fatal(err)
	}
	return pid
}

// childGot reports whether the child recorded sig.
func childGot(dir, sig string) bool {
	return strings.Contains("\n"+readFile(filepath.Join(dir, "child.log")), "\n"+sig+"\n")
}

// TestRunSignalsReachTheCommandsProcessGroup: a child the command started
// in the background gets the signals run forwards (SIGHUP, SIGUSR1), the
// SIGTERM of lost leadership, and a SIGTERM when the command exits while
// it still runs; and it is gone by the time run exits.
func TestRunSignalsReachTheCommandsProcessGroup(t *testing.T) {
	t.Parallel()
	natsBin, _ := binaries(t)
	ns := startNATS(t, natsBin)

	t.Run("forwarded, then lost leadership", func(t *testing.T) {
		dir := groupDir(t)
		a := startRun(t, ns.URL(), "rungroup", "node-a", []string{"DIR=" + dir}, []string{"--ttl", "1s", "--once"}, "sh", "-c", groupCommand)
		pid := childPid(t, dir)
		for sig, name := range map[syscall.Signal]string{syscall.SIGHUP: "HUP", syscall.SIGUSR1: "USR1"} {
			a.signal(sig)
			natstest.WaitFor(t, 5*time.Second, func() bool { return childGot(dir, name) }, "the command's child did not get the SIG%s sent to run", name)
		}
		if !a.running() || !alive(pid) {
			t.Fatalf("after SIGHUP and SIGUSR1: run running %v, child alive %v; want both", a.running(), alive(pid))
		}
		out, err := exec.Command(goClusterBinary(t), "--server", ns.URL(), "--cluster", "rungroup", "stepdown", "--wait=false").CombinedOutput()
		if err != nil {
			t.Fatalf("go-cluster stepdown: %v\n%s", err, out)
		}
		if code := a.waitExit(t, 10*time.Second); code != 143 {
			t.Fatalf("run exited %d after losing leadership, want 143 (the command's SIGTERM)", code)
		}
		if !childGot(dir, "TERM") {
			t.Fatalf("the command's child did not get SIGTERM when leadership was lost (log %q)", readFile(filepath.Join(dir, "child.log")))
		}
		if alive(pid) {
			t.Fatalf("the command's child (pid %d) outlived run", pid)
		}
	})

	t.Run("the command exits, its child still running", func(t *testing.T) {
		dir := groupDir(t)
		a := startRun(t, ns.URL(), "rungroup-exit", "node-a", []string{"DIR=" + dir}, []string{"--ttl", "1s", "--once"}, "sh", "-c", groupCommand)
		pid := childPid(t, dir)
		if err := os.WriteFile(filepath.Join(dir, "exit"), nil, 0o600); err != nil {
			t.Fatal(err)
		}
		if code := a.waitExit(t, 10*time.Second); code != 4 {
			t.Fatalf("run exited %d, want the command's 4", code)
		}
		if !childGot(dir, "TERM") {
			t.Fatalf("the child left running by the command did not get SIGTERM (log %q)", readFile(filepath.Join(dir, "child.log")))
		}
		if alive(pid) {
			t.Fatalf("the command's child (pid %d) outlived run", pid)
		}
	})
}
