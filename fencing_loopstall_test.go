package cluster

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ozanturksever/go-cluster/internal/election"
)

// loopStall holds a node's driver loop (Node.beforeAction) at the first
// action that match accepts once engaged, until freed: the loop slow or
// stuck, as on a loaded machine or a connection that does not drain.
type loopStall struct {
	match    func(election.Action) bool
	engaged  atomic.Bool
	once     sync.Once
	stalled  chan struct{} // closed when the loop is held
	release  chan struct{} // closed by free
	freeOnce sync.Once
}

func newLoopStall(match func(election.Action) bool) *loopStall {
	return &loopStall{match: match, stalled: make(chan struct{}), release: make(chan struct{})}
}

// engage makes the next matching action hold the loop.
func (s *loopStall) engage() { s.engaged.Store(true) }

// free lets the loop go on; idempotent.
func (s *loopStall) free() { s.freeOnce.Do(func() { close(s.release) }) }

// before is the Node's beforeAction: it holds the loop once, at the first
// matching action after engage.
func (s *loopStall) before(a election.Action) {
	if !s.engaged.Load() || !s.match(a) {
		return
	}
	first := false
	s.once.Do(func() { close(s.stalled); first = true })
	if first {
		<-s.release
	}
}

// startNodeWithSeam starts a campaigning node whose driver loop calls
// before ahead of each action; stopped at cleanup.
func startNodeWithSeam(t *testing.T, cfg Config, hooks Hooks, before func(election.Action)) *Node {
	t.Helper()
	n, err := NewNode(cfg, hooks)
	if err != nil {
		t.Fatalf("NewNode(%s): %v", cfg.NodeID, err)
	}
	n.beforeAction = func(a any) { before(a.(election.Action)) }
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := n.Start(ctx); err != nil {
		t.Fatalf("Start(%s): %v", cfg.NodeID, err)
	}
	t.Cleanup(func() { stopNode(t, n) })
	return n
}

// receive waits for a value on ch, failing the test after timeout.
func receive[T any](t *testing.T, ch <-chan T, timeout time.Duration, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(timeout):
		t.Fatalf("%s: nothing within %v", what, timeout)
	}
	var zero T
	return zero
}

// isRenewal matches the machine's renewal writes.
func isRenewal(a election.Action) bool {
	w, ok := a.(election.Write)
	return ok && w.Purpose == election.Renew
}

// Rule 32: the driver's own deadline timer ends a tenure on time when the
// loop cannot (issue 25: removing it left every test green). The loop is
// held just before it sends a renewal, so the view's deadline stays put
// and the machine's own deadline tick never runs; the tenure's ctx must
// still be cancelled, IsLeader turn false and OnLoseLeadership be called
// at the deadline, while the loop is held; and that hook, like the one
// the loop queues, must not read the node as leader (rule 44).
func TestDeadlineTimerEndsTheTenureWhileTheLoopIsStalled(t *testing.T) {
	t.Parallel()
	srv, _, id := setup(t)
	tenures := make(chan context.Context, 4)
	lost := make(chan string, 4) // Leader() as OnLoseLeadership read it
	var node atomic.Pointer[Node]
	hooks := HookFuncs{
		BecomeLeader:   func(ctx context.Context) error { tenures <- ctx; return nil },
		LoseLeadership: func(context.Context) error { lost <- node.Load().Leader(); return nil },
	}
	stall := newLoopStall(isRenewal)
	n := startNodeWithSeam(t, testConfig(id, "n1", srv.URL()), hooks, stall.before)
	node.Store(n)         // before engage: OnLoseLeadership comes after
	t.Cleanup(stall.free) // runs before the Stop registered above

	tenure := receive(t, tenures, 10*time.Second, "OnBecomeLeader")
	ended := make(chan time.Time, 1)
	context.AfterFunc(tenure, func() { ended <- time.Now() })
	stall.engage()
	receive(t, stall.stalled, 5*time.Second, "the loop held at a renewal")

	// Only the loop moves the view's deadline; it is held.
	live := n.eng.Tenure()
	if live == nil || live.Ctx != tenure {
		t.Fatal("the tenure ended before the loop was held")
	}
	deadline := live.Deadline
	const slack = time.Second
	select {
	case at := <-ended:
		if at.Before(deadline) {
			t.Fatalf("the tenure's ctx was cancelled %v before its deadline", deadline.Sub(at))
		}
	case <-time.After(time.Until(deadline) + slack):
		t.Fatalf("the tenure's ctx was still live %v past its deadline while the loop was held", slack)
	}
	if n.IsLeader() {
		t.Error("IsLeader past the tenure's deadline")
	}
	// Rule 44 on the timer's path too: the hook reads the view it was
	// queued for, the node no longer its own leader.
	if leader := receive(t, lost, slack, "OnLoseLeadership while the loop was held"); leader == "n1" {
		t.Error("OnLoseLeadership, queued by the deadline timer, read Leader() as the node itself")
	}

	// Freed, the loop hears the tenure has ended and carries on: it leads
	// again, and OnLoseLeadership was not called twice for one tenure.
	stall.free()
	ledAgainAbove(t, tenures, tenure, "OnBecomeLeader after the loop was freed")
	select {
	case <-lost:
		t.Error("OnLoseLeadership called twice for one tenure")
	default:
	}
}

// E5: a renewal confirmed just before the deadline, whose Extend the loop
// applies only after the deadline timer has ended the tenure, must not
// leave the machine leading while the application was told it lost: the
// node steps down and the lease moves on. The loop is held at that
// Extend until the timer has cancelled the tenure's ctx.
func TestAnExtendAppliedAfterTheDeadlineTimerStepsDown(t *testing.T) {
	t.Parallel()
	srv, _, id := setup(t)
	tenures := make(chan context.Context, 4)
	hooks := HookFuncs{BecomeLeader: func(ctx context.Context) error { tenures <- ctx; return nil }}
	stall := newLoopStall(func(a election.Action) bool { _, ok := a.(election.Extend); return ok })
	n := startNodeWithSeam(t, testConfig(id, "n1", srv.URL()), hooks, stall.before)
	t.Cleanup(stall.free) // runs before the Stop registered above

	tenure := receive(t, tenures, 10*time.Second, "OnBecomeLeader")
	stall.engage()
	receive(t, stall.stalled, 5*time.Second, "the loop held at an Extend")
	select {
	case <-tenure.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("the deadline timer did not end the tenure while the loop was held")
	}
	stall.free()
	ledAgainAbove(t, tenures, tenure, "OnBecomeLeader after the loop applied the late Extend")
	if !n.IsLeader() {
		t.Error("not leading after OnBecomeLeader")
	}
}

// ledAgainAbove waits for the next tenure on tenures (what names it) and
// checks its epoch is above the ended one's.
func ledAgainAbove(t *testing.T, tenures <-chan context.Context, ended context.Context, what string) {
	t.Helper()
	next := receive(t, tenures, 10*time.Second, what)
	e1, _ := TenureEpoch(ended)
	if e2, _ := TenureEpoch(next); e2 <= e1 {
		t.Errorf("led again at epoch %d, not above the ended tenure's %d", e2, e1)
	}
}
