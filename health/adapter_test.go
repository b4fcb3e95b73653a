package health

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	cluster "github.com/ozanturksever/go-cluster"
	"github.com/ozanturksever/go-cluster/internal/natstest"
)

type fakeNode struct {
	cluster, node string
	epoch         int64
}

func (f fakeNode) Config() cluster.Config {
	return cluster.Config{ClusterID: f.cluster, NodeID: f.node}
}
func (f fakeNode) Epoch() int64 { return f.epoch }
func (f fakeNode) Ready() error { return nil }

// TestAdapterHooks drives the Adapter's hooks by hand, as a Node calls them.
func TestAdapterHooks(t *testing.T) {
	natstest.CheckLeaks(t)
	srv := runServer(t)
	c := startChecker(t, srv.Connect(t), "orders", "n1")
	a := NewAdapter(c)
	ctx := testCtx(t, 10*time.Second)

	if err := a.Bind(fakeNode{"orders", "n2", 1}); !errors.Is(err, ErrInvalidConfig) {
		t.Fatalf("Bind(other node) = %v, want ErrInvalidConfig", err)
	}
	if err := a.Bind(fakeNode{"billing", "n1", 1}); !errors.Is(err, ErrInvalidConfig) {
		t.Fatalf("Bind(other cluster) = %v, want ErrInvalidConfig", err)
	}
	if err := a.Bind(nil); !errors.Is(err, ErrInvalidConfig) {
		t.Fatalf("Bind(nil) = %v, want ErrInvalidConfig", err)
	}
	var failed *cluster.Node // as left by a NewNode that failed
	if err := a.Bind(failed); !errors.Is(err, ErrInvalidConfig) {
		t.Fatalf("Bind(nil *cluster.Node) = %v, want ErrInvalidConfig", err)
	}
	if err := a.Bind(fakeNode{"orders", "n1", 9}); err != nil {
		t.Fatalf("Bind: %v", err)
	}

	check := func(step, role, leader string) {
		t.Helper()
		r, err := c.QueryNode(ctx, "n1", 2*time.Second)
		if err != nil {
			t.Fatalf("%s: %v", step, err)
		}
		if r.Role != role || r.Leader != leader || r.Epoch != 9 {
			t.Fatalf("%s: role=%q leader=%q epoch=%d, want %q %q 9", step, r.Role, r.Leader, r.Epoch, role, leader)
		}
	}
	hooks := cluster.ComposeHooks(cluster.NoOpHooks{}, a) // as an application composes it
	check("start", "PASSIVE", "")
	must(t, hooks.OnLeaderChange(ctx, "n2"))
	check("follower", "PASSIVE", "n2")
	must(t, hooks.OnLeaderChange(ctx, ""))
	check("no leader", "PASSIVE", "")
	must(t, hooks.OnBecomeLeader(ctx))
	check("became leader", "PRIMARY", "n1")
	must(t, hooks.OnLeaderChange(ctx, "n1"))
	check("leader change to self", "PRIMARY", "n1")
	must(t, hooks.OnLoseLeadership(ctx))
	check("lost leadership", "PASSIVE", "")
	must(t, hooks.OnLeaderChange(ctx, "n3"))
	check("new leader", "PASSIVE", "n3")
	// Losing leadership after the takeover was already reported keeps the
	// known leader.
	must(t, hooks.OnBecomeLeader(ctx))
	must(t, hooks.OnLeaderChange(ctx, "n3"))
	must(t, hooks.OnLoseLeadership(ctx))
	check("late lose", "PASSIVE", "n3")
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// TestAdapterFollowsNode runs three real cluster.Nodes, each with a Checker
// bound by an Adapter, and watches a StepDown through health queries only.
func TestAdapterFollowsNode(t *testing.T) {
	natstest.CheckLeaks(t)
	srv := runServer(t)
	ctx := testCtx(t, 60*time.Second)
	const clusterID = "adapt"

	nodes := map[string]*cluster.Node{}
	for i := 1; i <= 3; i++ {
		id := fmt.Sprintf("n%d", i)
		nc := srv.Connect(t) // shared by the node and its checker
		checker, err := NewChecker(Config{ClusterID: clusterID, NodeID: id, Conn: nc, Logger: quiet})
		if err != nil {
			t.Fatal(err)
		}
		adapter := NewAdapter(checker)
		node, err := cluster.NewNode(cluster.Config{
			ClusterID: clusterID, NodeID: id, Conn: nc, Logger: quiet,
			LeaseTTL: time.Second, RenewInterval: 250 * time.Millisecond,
		}, cluster.ComposeHooks(cluster.NoOpHooks{}, adapter))
		if err != nil {
			t.Fatalf("NewNode: %v", err)
		}
		if err := adapter.Bind(node); err != nil {
			t.Fatalf("Bind: %v", err)
		}
		if err := checker.Start(ctx); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(checker.Stop)
		if err := node.Start(ctx); err != nil {
			t.Fatalf("node Start: %v", err)
		}
		t.Cleanup(func() {
			sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			if err := node.Stop(sctx); err != nil {
				t.Errorf("node Stop: %v", err)
			}
		})
		nodes[id] = node
	}
	cl := newTestClient(t, srv.Connect(t), clusterID)

	// agreed returns the leader and epoch once all three nodes answer, one of
	// them is PRIMARY, and all agree on it and on the epoch.
	agreed := func() (string, int64, bool) {
		rs, err := cl.QueryClusterN(ctx, 3, time.Second)
		if err != nil || len(rs) != 3 {
			return "", 0, false
		}
		var primaries []string
		for _, r := range rs {
			if r.IsLeader() {
				primaries = append(primaries, r.NodeID)
			}
		}
		if len(primaries) != 1 {
			return "", 0, false
		}
		for _, r := range rs {
			if r.Leader != primaries[0] || r.Epoch != rs[0].Epoch || r.Epoch == 0 {
				return "", 0, false
			}
		}
		return primaries[0], rs[0].Epoch, true
	}

	var leader string
	var epoch int64
	natstest.WaitFor(t, 15*time.Second, func() bool {
		var ok bool
		leader, epoch, ok = agreed()
		return ok
	}, "the health responses never agreed on one leader")
	t.Logf("leader %s at epoch %d", leader, epoch)

	if err := nodes[leader].StepDown(ctx); err != nil {
		t.Fatalf("StepDown: %v", err)
	}
	var next string
	var nextEpoch int64
	natstest.WaitFor(t, 15*time.Second, func() bool {
		var ok bool
		next, nextEpoch, ok = agreed()
		return ok && next != leader
	}, "after %s stepped down, the health responses never showed a new leader", leader)
	if nextEpoch <= epoch {
		t.Errorf("epoch went from %d to %d", epoch, nextEpoch)
	}
	old, err := cl.QueryNode(ctx, leader, time.Second)
	if err != nil || old.Role != "PASSIVE" || old.Leader != next {
		t.Fatalf("old leader answers %+v, %v; want PASSIVE following %s", old, err, next)
	}
	t.Logf("after StepDown: leader %s at epoch %d", next, nextEpoch)
}
