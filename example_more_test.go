package cluster_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	cluster "github.com/ozanturksever/go-cluster"
	"github.com/ozanturksever/go-cluster/clustertest"
)

// ValidateLeadership proves tenure with a write before a critical
// operation and returns the epoch to pass to the fenced resource. A node
// that no longer leads gets ErrNotLeader instead.
func ExampleNode_ValidateLeadership() {
	srv, err := clustertest.StartServer()
	if err != nil {
		fmt.Println(err)
		return
	}
	defer srv.Close()
	ctx := context.Background()

	leads := make(chan struct{})
	node, err := cluster.NewNode(cluster.Config{
		ClusterID: "orders", NodeID: "node-1", NATSURLs: srv.URLs(),
		LeaseTTL: time.Second, // a new bucket's first election waits one LeaseTTL
		Logger:   slog.New(slog.DiscardHandler),
	}, cluster.HookFuncs{BecomeLeader: func(context.Context) error {
		close(leads)
		return nil
	}})
	if err != nil {
		fmt.Println(err)
		return
	}
	if err := node.Start(ctx); err != nil {
		fmt.Println(err)
		return
	}
	defer node.Stop(ctx)
	<-leads

	epoch, err := node.ValidateLeadership(ctx)
	if err != nil {
		fmt.Println(err)
		return
	}
	// Send epoch with the write: the store refuses epochs lower than the
	// highest it has seen. It is a large number (a new bucket starts at
	// its creation time in microseconds) that grows by one per tenure.
	fmt.Println("write with the tenure's epoch:", epoch == node.Epoch())

	if err := node.StepDown(ctx); err != nil {
		fmt.Println(err)
		return
	}
	_, err = node.ValidateLeadership(ctx)
	fmt.Println("after StepDown, not leader:", errors.Is(err, cluster.ErrNotLeader))
	// Output:
	// write with the tenure's epoch: true
	// after StepDown, not leader: true
}

// An observer follows the leader without campaigning: a dashboard or a
// proxy learns who leads through OnLeaderChange ("" while nobody does).
func ExampleNewObserver() {
	srv, err := clustertest.StartServer()
	if err != nil {
		fmt.Println(err)
		return
	}
	defer srv.Close()
	ctx := context.Background()
	cfg := cluster.Config{ClusterID: "orders", NATSURLs: srv.URLs(), LeaseTTL: time.Second, Logger: slog.New(slog.DiscardHandler)}

	cfg.NodeID = "node-1"
	node, err := cluster.NewNode(cfg, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	if err := node.Start(ctx); err != nil {
		fmt.Println(err)
		return
	}
	if _, err := node.WaitForLeader(ctx); err != nil {
		fmt.Println(err)
		return
	}

	changes := make(chan string, 8)
	cfg.NodeID = "dashboard"
	obs, err := cluster.NewObserver(cfg, cluster.HookFuncs{
		LeaderChange: func(_ context.Context, leader string) error {
			changes <- leader
			return nil
		},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	if err := obs.Start(ctx); err != nil {
		fmt.Println(err)
		return
	}
	defer obs.Stop(ctx)
	fmt.Printf("leader: %q\n", <-changes)
	fmt.Println("observer leads:", obs.IsLeader())
	err = obs.StepDown(ctx)
	fmt.Println("observer cannot step down:", errors.Is(err, cluster.ErrNotLeader))

	if err := node.Stop(ctx); err != nil { // releases the lease
		fmt.Println(err)
		return
	}
	fmt.Printf("leader: %q\n", <-changes)
	// Output:
	// leader: "node-1"
	// observer leads: false
	// observer cannot step down: true
	// leader: ""
}

// WaitForLeader blocks until a leader is known, without polling: here a
// node that joins later learns who already leads.
func ExampleNode_WaitForLeader() {
	srv, err := clustertest.StartServer()
	if err != nil {
		fmt.Println(err)
		return
	}
	defer srv.Close()
	ctx := context.Background()
	start := func(id string) *cluster.Node {
		n, err := cluster.NewNode(cluster.Config{
			ClusterID: "orders", NodeID: id, NATSURLs: srv.URLs(), LeaseTTL: time.Second,
			Logger: slog.New(slog.DiscardHandler),
		}, nil)
		if err != nil {
			panic(err)
		}
		if err := n.Start(ctx); err != nil {
			panic(err)
		}
		return n
	}

	first := start("node-1")
	defer first.Stop(ctx)
	leader, err := first.WaitForLeader(ctx)
	fmt.Println("node-1 sees:", leader, err)

	second := start("node-2")
	defer second.Stop(ctx)
	leader, err = second.WaitForLeader(ctx)
	fmt.Println("node-2 sees:", leader, err)
	// Output:
	// node-1 sees: node-1 <nil>
	// node-2 sees: node-1 <nil>
}

// StepDownTo hands leadership to a named node, for example before taking
// the leader's host down for maintenance; the epoch grows by one.
func ExampleNode_StepDownTo() {
	srv, err := clustertest.StartServer()
	if err != nil {
		fmt.Println(err)
		return
	}
	defer srv.Close()
	ctx := context.Background()
	start := func(id string, hooks cluster.Hooks) *cluster.Node {
		n, err := cluster.NewNode(cluster.Config{
			ClusterID: "orders", NodeID: id, NATSURLs: srv.URLs(), LeaseTTL: time.Second,
			Logger: slog.New(slog.DiscardHandler),
		}, hooks)
		if err != nil {
			panic(err)
		}
		if err := n.Start(ctx); err != nil {
			panic(err)
		}
		return n
	}

	a := start("node-a", nil)
	defer a.Stop(ctx)
	if _, err := a.WaitForLeader(ctx); err != nil {
		fmt.Println(err)
		return
	}
	b := start("node-b", nil)
	defer b.Stop(ctx)
	cLeads := make(chan struct{})
	c := start("node-c", cluster.HookFuncs{BecomeLeader: func(context.Context) error {
		close(cLeads)
		return nil
	}})
	defer c.Stop(ctx)
	// Both followers know the leader before the handover.
	for _, n := range []*cluster.Node{b, c} {
		if _, err := n.WaitForLeader(ctx); err != nil {
			fmt.Println(err)
			return
		}
	}
	epoch := a.Epoch()
	fmt.Println("leader:", a.Leader())

	if err := a.StepDownTo(ctx, "node-c"); err != nil {
		fmt.Println(err)
		return
	}
	<-cLeads
	fmt.Println("node-c leads:", c.IsLeader(), "epoch grew by:", c.Epoch()-epoch)
	// Output:
	// leader: node-a
	// node-c leads: true epoch grew by: 1
}

// Events delivers leadership as values on a channel, for code that
// selects instead of implementing Hooks. BecameLeader carries the tenure's
// ctx: work started under it stops when the tenure ends.
func ExampleNode_Events() {
	srv, err := clustertest.StartServer()
	if err != nil {
		fmt.Println(err)
		return
	}
	defer srv.Close()
	ctx := context.Background()

	node, err := cluster.NewNode(cluster.Config{
		ClusterID: "orders", NodeID: "node-1", NATSURLs: srv.URLs(),
		LeaseTTL: time.Second, // a new bucket's first election waits one LeaseTTL
		Logger:   slog.New(slog.DiscardHandler),
	}, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	events := node.Events(ctx)
	if err := node.Start(ctx); err != nil {
		fmt.Println(err)
		return
	}
	for ev := range events {
		fmt.Println(ev.Kind, ev.Leader, ev.Epoch > 0) // a tenure's epoch, 0 for none
		if ev.Kind == cluster.BecameLeader {
			break
		}
	}
	_ = node.Stop(ctx)
	for ev := range events { // closed once the node has stopped
		fmt.Printf("%s %q\n", ev.Kind, ev.Leader)
	}
	// Output:
	// leader-changed  false
	// became-leader node-1 true
	// leader-changed "node-1"
	// lost-leadership ""
	// leader-changed ""
}

// Metadata travels with the lease: every node (and any KV client) learns
// where the leader serves, with no second registry.
func ExampleNode_Lease() {
	srv, err := clustertest.StartServer()
	if err != nil {
		fmt.Println(err)
		return
	}
	defer srv.Close()
	ctx := context.Background()
	cfg := cluster.Config{ClusterID: "orders", NATSURLs: srv.URLs(), LeaseTTL: time.Second, Logger: slog.New(slog.DiscardHandler)}

	cfg.NodeID, cfg.Metadata = "node-1", map[string]string{"addr": "10.0.0.7:8080"}
	leader, err := cluster.NewNode(cfg, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	if err := leader.Start(ctx); err != nil {
		fmt.Println(err)
		return
	}
	defer leader.Stop(ctx)
	if _, err := leader.WaitForLeader(ctx); err != nil {
		fmt.Println(err)
		return
	}

	cfg.NodeID, cfg.Metadata = "client", nil
	watcher, err := cluster.NewObserver(cfg, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	if err := watcher.Start(ctx); err != nil {
		fmt.Println(err)
		return
	}
	defer watcher.Stop(ctx)
	if _, err := watcher.WaitForLeader(ctx); err != nil {
		fmt.Println(err)
		return
	}
	info, _ := watcher.Lease()
	fmt.Println("send writes to", info.NodeID, "at", info.Metadata["addr"])
	// Output:
	// send writes to node-1 at 10.0.0.7:8080
}
