package cluster_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"time"

	cluster "github.com/ozanturksever/go-cluster"
	"github.com/ozanturksever/go-cluster/clustertest"
)

// A single node on an embedded NATS server becomes leader, proves it with a
// fencing check, and stops, releasing the lease.
func ExampleNewNode() {
	srv, err := clustertest.StartServer()
	if err != nil {
		fmt.Println(err)
		return
	}
	defer srv.Close()

	became := make(chan struct{})
	node, err := cluster.NewNode(cluster.Config{
		ClusterID: "example",
		NodeID:    "node-1",
		NATSURLs:  srv.URLs(),
		LeaseTTL:  time.Second,
		Logger:    slog.New(slog.NewTextHandler(io.Discard, nil)),
	}, cluster.HookFuncs{
		BecomeLeader: func(ctx context.Context) error {
			close(became) // start the leader's work here; stop it when ctx ends
			return nil
		},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	ctx := context.Background()
	if err := node.Start(ctx); err != nil {
		fmt.Println(err)
		return
	}
	<-became
	// A new bucket's first epoch is its creation time in microseconds:
	// a fencing token above every epoch of any bucket before it.
	epoch, err := node.ValidateLeadership(ctx)
	fmt.Println("leader:", node.Leader(), "epoch set:", epoch > 0, "err:", err)
	fmt.Println("stop:", node.Stop(ctx))
	// Output:
	// leader: node-1 epoch set: true err: <nil>
	// stop: <nil>
}

// StepDown hands leadership to a follower without waiting for the lease to
// expire, and the epoch grows by one.
func ExampleNode_StepDown() {
	srv, err := clustertest.StartServer()
	if err != nil {
		fmt.Println(err)
		return
	}
	defer srv.Close()
	ctx := context.Background()
	start := func(id string, hooks cluster.Hooks) *cluster.Node {
		n, err := cluster.NewNode(cluster.Config{
			ClusterID: "example", NodeID: id, NATSURLs: srv.URLs(), LeaseTTL: time.Second,
			Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		}, hooks)
		if err != nil {
			panic(err)
		}
		if err := n.Start(ctx); err != nil {
			panic(err)
		}
		return n
	}
	a := start("a", nil)
	defer a.Stop(ctx)
	first, _ := a.WaitForLeader(ctx)
	bLeads := make(chan struct{})
	b := start("b", cluster.HookFuncs{BecomeLeader: func(context.Context) error {
		close(bLeads)
		return nil
	}})
	defer b.Stop(ctx)
	epoch := a.Epoch()
	fmt.Println("leader:", first)

	if err := a.StepDown(ctx); err != nil {
		fmt.Println(err)
		return
	}
	<-bLeads
	fmt.Println("leader:", b.Leader(), "epoch grew by:", b.Epoch()-epoch)
	// Output:
	// leader: a
	// leader: b epoch grew by: 1
}

// ComposeHooks calls become in order and lose in reverse order, so an
// add-on listed after the application (a VIP) arrives after the
// application is ready and leaves before it stops.
func ExampleComposeHooks() {
	say := func(name string) cluster.Hooks {
		return cluster.HookFuncs{
			BecomeLeader:   func(context.Context) error { fmt.Println("become", name); return nil },
			LoseLeadership: func(context.Context) error { fmt.Println("lose", name); return nil },
		}
	}
	h := cluster.ComposeHooks(say("app"), say("vip"))
	_ = h.OnBecomeLeader(context.Background())
	_ = h.OnLoseLeadership(context.Background())
	// Output:
	// become app
	// become vip
	// lose vip
	// lose app
}
