package runner

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	cluster "github.com/ozanturksever/go-cluster"
	"github.com/ozanturksever/go-cluster/internal/faultproxy"
	"github.com/ozanturksever/go-cluster/internal/natstest"
)

// ignoresTerm is a command that ignores SIGTERM (its sleeps inherit the
// ignored disposition), writes its pid to $DEATH_FIFO.pid and holds the
// FIFO $DEATH_FIFO open for writing for as long as any process of it
// lives.
var ignoresTerm = []string{"sh", "-c", `trap '' TERM; echo $$ > "$DEATH_FIFO.pid"; exec 3>"$DEATH_FIFO"; while :; do sleep 0.02; done`}

// deathWatch tells when a command holding its FIFO open has gone: the
// FIFO's end of file is the moment the last process of the command died
// (seen a little late, never early). No process but the command holds
// its write end.
type deathWatch struct {
	env  string // DEATH_FIFO=path, for the command's environment
	pid  string // the file the command's pid is in
	up   chan struct{}
	dead chan time.Time
}

func newDeathWatch(t *testing.T) *deathWatch {
	t.Helper()
	path := filepath.Join(t.TempDir(), "death")
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Fatal(err)
	}
	d := &deathWatch{env: "DEATH_FIFO=" + path, pid: path + ".pid", up: make(chan struct{}), dead: make(chan time.Time, 1)}
	go func() {
		f, err := os.Open(path) // blocks until the command opens it
		if err != nil {
			return
		}
		defer f.Close()
		close(d.up)
		_, _ = io.Copy(io.Discard, f) // returns at end of file: the last writer died
		d.dead <- time.Now()
	}()
	t.Cleanup(func() { // unblocks the open if the command never came
		if w, err := os.OpenFile(path, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			_ = w.Close()
		}
	})
	return d
}

// started waits for the command to open the FIFO.
func (d *deathWatch) started(t *testing.T) {
	t.Helper()
	select {
	case <-d.up:
	case <-time.After(15 * time.Second):
		t.Fatal("the command did not start")
	}
}

// deadlineWatch reads the node's tenure deadline over and over; last is
// the latest one read while leading.
type deadlineWatch struct {
	mu   sync.Mutex
	last time.Time
	stop chan struct{}
	done chan struct{}
}

func watchDeadline(n *cluster.Node) *deadlineWatch {
	d := &deadlineWatch{stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(d.done)
		for {
			if t, ok := n.Tenure(); ok {
				d.mu.Lock()
				d.last = t.Deadline
				d.mu.Unlock()
			}
			select {
			case <-d.stop:
				return
			case <-time.After(time.Millisecond):
			}
		}
	}()
	return d
}

// latest is the last deadline read.
func (d *deadlineWatch) latest() time.Time {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.last
}

// final stops the watch and returns the last deadline it read.
func (d *deadlineWatch) final() time.Time {
	close(d.stop)
	<-d.done
	return d.latest()
}

// checkKilledBeforeDeadline cuts the leading node off from NATS and checks
// that its command, which ignores SIGTERM, died from the SIGKILL sent
// KillLead (TTL/20) before the tenure's deadline: not before it (the grace
// would have been cut short), and not alive once the deadline has passed.
// Seeing is late, never early, so neither check fails on a slow machine
// when the command did right: a death seen before a moment happened
// before it, and a command seen alive after the deadline was alive at it.
func checkKilledBeforeDeadline(t *testing.T, n *cluster.Node, px *faultproxy.Proxy, death *deathWatch) {
	t.Helper()
	death.started(t)
	pid := strings.TrimSpace(readFile(death.pid))
	natstest.WaitFor(t, 10*time.Second, n.IsLeader, "the node does not lead")
	dw := watchDeadline(n)
	px.Cut()
	cut := time.Now()
	lead := KillLead(n.Config())
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	var died time.Time
	for died.IsZero() {
		select {
		case died = <-death.dead:
		case now := <-tick.C:
			if d := dw.latest(); !d.IsZero() && now.After(d) && processAlive(pid) {
				dw.final()
				t.Fatalf("the command still runs %v after the tenure's deadline; SIGKILL is due %v before it", now.Sub(d), lead)
			}
			if now.Sub(cut) > 3*n.Config().LeaseTTL {
				dw.final()
				t.Fatalf("the command still runs %v after the cut", now.Sub(cut))
			}
		}
	}
	deadline := dw.final()
	t.Logf("cut at 0, command dead at %v (as seen), tenure deadline at %v: %v before it (SIGKILL due %v before it)",
		died.Sub(cut), deadline.Sub(cut), deadline.Sub(died), lead)
	if died.Before(deadline.Add(-lead)) {
		t.Fatalf("the command died %v before the tenure's deadline, before its SIGKILL was due (%v before it): its grace was cut short",
			deadline.Sub(died), lead)
	}
	px.Restore()
}

// TestRunnerKillsBeforeTheDeadline: cut off from NATS, a Runner's command
// that ignores SIGTERM is dead before the tenure's deadline, killed
// TTL/20 before it.
func TestRunnerKillsBeforeTheDeadline(t *testing.T) {
	// Runs alone: a race built from timings (the command killed TTL/20 before the tenure's deadline).
	natstest.CheckLeaks(t)
	srv := natstest.RunServer(t)
	px := faultproxy.New(t, srv.Addr())
	death := newDeathWatch(t)
	r, err := New(Config{
		Node: cluster.Config{ClusterID: "deadline", NodeID: "n1", NATSURLs: []string{px.URL()}, LeaseTTL: 3 * time.Second},
		Argv: ignoresTerm, Once: true, Grace: 200 * time.Millisecond, Env: []string{death.env},
	})
	if err != nil {
		t.Fatal(err)
	}
	done := runAsync(context.Background(), r)
	checkKilledBeforeDeadline(t, r.Node(), px, death)
	select {
	case res := <-done:
		if res.err != nil || res.code != 137 {
			t.Fatalf("Run = %d, %v; want 137 (SIGKILL), nil", res.code, res.err)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("Run did not return")
	}
}

// TestServiceKillsBeforeTheDeadline: the same for the agent's service.
func TestServiceKillsBeforeTheDeadline(t *testing.T) {
	// Runs alone: a race built from timings (the service killed TTL/20 before the tenure's deadline).
	natstest.CheckLeaks(t)
	srv := natstest.RunServer(t)
	px := faultproxy.New(t, srv.Addr())
	death := newDeathWatch(t)
	svc, err := NewService(ServiceConfig{Argv: ignoresTerm, Grace: 200 * time.Millisecond, Env: []string{death.env},
		BackoffMin: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	n := startNodeOf(t, cluster.Config{ClusterID: "svc-deadline", NodeID: "n1", NATSURLs: []string{px.URL()}, LeaseTTL: 3 * time.Second}, svc)
	checkKilledBeforeDeadline(t, n, px, death)
	stop(t, n)
}
