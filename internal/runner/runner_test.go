package runner

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	cluster "github.com/ozanturksever/go-cluster"
	"github.com/ozanturksever/go-cluster/internal/natstest"
)

// newRunner makes a runner of node id on srv with a 1s TTL.
func newRunner(t *testing.T, srv *natstest.Server, id string, once bool, argv ...string) *Runner {
	t.Helper()
	r, err := New(Config{
		Node: cluster.Config{ClusterID: "runner", NodeID: id, NATSURLs: []string{srv.URL()}, LeaseTTL: parallelTTL},
		Argv: argv, Once: once, Env: []string{"DIR=" + t.TempDir()},
	})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// result is what Run returned.
type result struct {
	code int
	err  error
}

func runAsync(ctx context.Context, r *Runner) <-chan result {
	ch := make(chan result, 1)
	go func() {
		code, err := r.Run(ctx)
		ch <- result{code, err}
	}()
	return ch
}

func TestRunReturnsTheCommandsStatus(t *testing.T) {
	t.Parallel()
	natstest.CheckLeaks(t)
	srv := natstest.RunServer(t)
	dir := t.TempDir()
	r := newRunner(t, srv, "n1", true, "sh", "-c", `echo "$GO_CLUSTER_EPOCH" > `+filepath.Join(dir, "epoch")+`; exit 5`)
	code, err := r.Run(context.Background())
	if err != nil || code != 5 {
		t.Fatalf("Run = %d, %v; want 5, nil", code, err)
	}
	if e, _ := strconv.Atoi(strings.TrimSpace(readFile(filepath.Join(dir, "epoch")))); e < 1 {
		t.Fatalf("GO_CLUSTER_EPOCH = %q", readFile(filepath.Join(dir, "epoch")))
	}
	select {
	case <-r.Node().Done():
	default:
		t.Fatal("the node still runs after Run returned")
	}
}

// TestStepDownWaitsForTheCommand: on StepDown the command gets SIGTERM,
// and the lease is released only once it has exited: the next leader's
// command starts after it ended.
func TestStepDownWaitsForTheCommand(t *testing.T) {
	t.Parallel()
	natstest.CheckLeaks(t)
	srv := natstest.RunServer(t)
	dir := t.TempDir()
	stamp := func(name string) string { return `date +%s%N > ` + filepath.Join(dir, name) }
	a := newRunner(t, srv, "a", false, "sh", "-c",
		`trap 'sleep 0.3; `+stamp("a-end")+`; exit 0' TERM; `+stamp("a-up")+`; while :; do sleep 0.02; done`)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	aDone := runAsync(ctx, a)
	natstest.WaitFor(t, 10*time.Second, func() bool { return readFile(filepath.Join(dir, "a-up")) != "" }, "a's command did not start")
	b := newRunner(t, srv, "b", false, "sh", "-c", stamp("b-up")+`; while :; do sleep 0.02; done`)
	bDone := runAsync(ctx, b)
	natstest.WaitFor(t, 10*time.Second, func() bool { return b.Node().Leader() == "a" }, "b does not see a lead")

	if err := a.Node().StepDown(context.Background()); err != nil {
		t.Fatal(err)
	}
	natstest.WaitFor(t, 10*time.Second, func() bool { return readFile(filepath.Join(dir, "b-up")) != "" }, "b's command did not start")
	aEnd, _ := strconv.ParseInt(strings.TrimSpace(readFile(filepath.Join(dir, "a-end"))), 10, 64)
	bUp, _ := strconv.ParseInt(strings.TrimSpace(readFile(filepath.Join(dir, "b-up"))), 10, 64)
	if aEnd == 0 || bUp <= aEnd {
		t.Fatalf("b's command started at %d, a's ended at %d: they overlapped", bUp, aEnd)
	}
	cancel()
	for _, ch := range []<-chan result{aDone, bDone} {
		select {
		case <-ch:
		case <-time.After(10 * time.Second):
			t.Fatal("Run did not return after its ctx ended")
		}
	}
}

func readFile(path string) string {
	b, _ := os.ReadFile(path)
	return string(b)
}

// TestOnceAfterLoss: with Once, a run whose command was stopped because
// leadership ended returns the command's status (143: SIGTERM).
func TestOnceAfterLoss(t *testing.T) {
	t.Parallel()
	natstest.CheckLeaks(t)
	srv := natstest.RunServer(t)
	dir := t.TempDir()
	r := newRunner(t, srv, "once", true, "sh", "-c", `touch `+filepath.Join(dir, "up")+`; exec sleep 30`)
	done := runAsync(context.Background(), r)
	natstest.WaitFor(t, 10*time.Second, func() bool { _, err := os.Stat(filepath.Join(dir, "up")); return err == nil }, "the command did not start")
	natstest.WaitFor(t, 5*time.Second, r.Node().IsLeader, "not leading")
	if err := r.Node().StepDown(context.Background()); err != nil {
		t.Fatal(err)
	}
	select {
	case res := <-done:
		if res.err != nil || res.code != 143 {
			t.Fatalf("Run = %d, %v; want 143, nil", res.code, res.err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return after the loss")
	}
}

// TestCommandThatCannotStart: Run returns 127 and stops the node.
func TestCommandThatCannotStart(t *testing.T) {
	t.Parallel()
	natstest.CheckLeaks(t)
	srv := natstest.RunServer(t)
	r := newRunner(t, srv, "nostart", false, filepath.Join(t.TempDir(), "absent"))
	code, err := r.Run(context.Background())
	if err != nil || code != 127 {
		t.Fatalf("Run = %d, %v; want 127, nil", code, err)
	}
}
