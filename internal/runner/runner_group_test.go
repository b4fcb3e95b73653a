package runner

import (
	"context"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	cluster "github.com/ozanturksever/go-cluster"
	"github.com/ozanturksever/go-cluster/internal/natstest"
)

// TestRunnerSignalsReachTheProcessGroup: signals given to Run (SIGHUP,
// SIGUSR1) reach a child the command started in the background, and so
// does the SIGTERM of lost leadership; the child is gone when Run returns.
func TestRunnerSignalsReachTheProcessGroup(t *testing.T) {
	t.Parallel()
	natstest.CheckLeaks(t)
	// A shell cannot trap a signal ignored when it started, and Go keeps a
	// signal ignored at its own start ignored in what it executes: under
	// nohup (SIGHUP ignored) the child's HUP trap never runs. The HUP is
	// then left out; SIGUSR1 and SIGTERM still show the group is reached.
	given := []syscall.Signal{syscall.SIGHUP, syscall.SIGUSR1}
	if signal.Ignored(syscall.SIGHUP) {
		t.Log("SIGHUP is ignored in this process (nohup): its trap cannot run in the command; testing SIGUSR1 and SIGTERM")
		given = given[1:]
	}
	srv := natstest.RunServer(t)
	dir := groupDir(t)
	sigs := make(chan os.Signal, 1)
	r, err := New(Config{
		Node: cluster.Config{ClusterID: "group", NodeID: "n1", NATSURLs: []string{srv.URL()}, LeaseTTL: parallelTTL},
		Argv: []string{"sh", "-c", groupCommand}, Env: []string{"DIR=" + dir}, Once: true, Signals: sigs,
	})
	if err != nil {
		t.Fatal(err)
	}
	done := runAsync(context.Background(), r)
	pid := childPid(t, dir)
	log := filepath.Join(dir, "child.log")
	for _, sig := range given {
		// The signal is given again until the child's trap has run: what is
		// tested is that Run passes it to the group, not that a shell runs
		// a trap for every signal.
		name := map[syscall.Signal]string{syscall.SIGHUP: "HUP", syscall.SIGUSR1: "USR1"}[sig]
		natstest.WaitFor(t, 10*time.Second, func() bool {
			select {
			case sigs <- sig:
			default: // one is still waiting for Run
			}
			return strings.Contains(readFile(log), name+"\n")
		}, "the command's child did not get the SIG%s given to Run", name)
	}
	if !processAlive(pid) {
		t.Fatal("the child died of a signal it traps")
	}
	natstest.WaitFor(t, 5*time.Second, r.Node().IsLeader, "not leading")
	if err := r.Node().StepDown(context.Background()); err != nil {
		t.Fatal(err)
	}
	select {
	case res := <-done:
		if res.err != nil || res.code != 143 {
			t.Fatalf("Run = %d, %v; want 143 (the command's SIGTERM), nil", res.code, res.err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return after the loss")
	}
	if !strings.Contains(readFile(log), "TERM\n") || processAlive(pid) {
		t.Fatalf("after the loss: child log %q, child alive %v; want TERM, not alive", readFile(log), processAlive(pid))
	}
}
