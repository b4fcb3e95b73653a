package cluster

import (
	"context"
	"testing"
	"time"

	"github.com/ozanturksever/go-cluster/internal/election"
)

// viewSeen is what a hook read of its node's view.
type viewSeen struct {
	leader  string
	leading bool
	epoch   int64
	tenure  int64 // TenureEpoch of the hook's ctx (0: none)
}

// Rule 44: a hook reads the view it was queued for. The machine reports
// the leader change right after Become and Lose, in the same batch; the
// driver sets the view's leader with the tenure, before it queues the
// hook. Under load the hook ran before the loop got to the leader change
// (ExampleNode_StepDown, ExampleNode_Events, sometimes); issue 25:
// removing either assignment left every test green. Here the loop is held
// at that leader change until the hook has read the view, every time.
func TestHooksReadTheViewTheyWereQueuedFor(t *testing.T) {
	t.Parallel()
	srv, _, id := setup(t)
	var n *Node
	became, lost := make(chan viewSeen, 4), make(chan viewSeen, 4)
	hookRead := make(chan struct{}, 1) // a hook has read the view
	read := func(ctx context.Context, to chan viewSeen) {
		tenure, _ := TenureEpoch(ctx)
		select {
		case to <- viewSeen{leader: n.Leader(), leading: n.IsLeader(), epoch: n.Epoch(), tenure: tenure}:
		default:
		}
		select {
		case hookRead <- struct{}{}:
		default:
		}
	}
	hooks := HookFuncs{
		BecomeLeader:   func(ctx context.Context) error { read(ctx, became); return nil },
		LoseLeadership: func(ctx context.Context) error { read(ctx, lost); return nil },
	}
	// Only the loop's goroutine touches queued.
	queued, held := false, 0
	before := func(a election.Action) {
		switch a.(type) {
		case election.Become, election.Lose:
			queued = true
		case election.LeaderChange:
			if queued {
				queued = false
				select {
				case <-hookRead:
					held++
				case <-time.After(5 * time.Second): // the assertions below tell
				}
			}
		}
	}
	cfg := testConfig(id, "n1", srv.URL())
	var err error
	if n, err = NewNode(cfg, hooks); err != nil {
		t.Fatal(err)
	}
	obsCtx, obsCancel := context.WithCancel(context.Background())
	defer obsCancel()
	events := n.Events(obsCtx) // before Start: no event is missed
	n.beforeAction = func(a any) { before(a.(election.Action)) }
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := n.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stopNode(t, n) })

	b := receive(t, became, 10*time.Second, "OnBecomeLeader")
	if b.leader != "n1" || !b.leading || b.epoch != b.tenure || b.tenure == 0 {
		t.Errorf("OnBecomeLeader read Leader()=%q IsLeader()=%v Epoch()=%d; want n1, true, the tenure's epoch %d", b.leader, b.leading, b.epoch, b.tenure)
	}
	if err := n.StepDown(ctx); err != nil {
		t.Fatal(err)
	}
	l := receive(t, lost, 5*time.Second, "OnLoseLeadership")
	if l.leader == "n1" || l.leading {
		t.Errorf("OnLoseLeadership read Leader()=%q IsLeader()=%v; want not n1, false", l.leader, l.leading)
	}
	for ev := range events {
		if ev.Kind == LostLeadership {
			if ev.Leader == "n1" {
				t.Errorf("Observe's LostLeadership carries the node itself as leader")
			}
			break
		}
	}
	stopNode(t, n) // the loop's goroutine has ended: held is ours to read
	if held != 2 {
		t.Errorf("the loop was held at %d leader changes until a hook had read the view, want 2 (Become, Lose)", held)
	}
}
