package cluster_test

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	cluster "github.com/ozanturksever/go-cluster"
	"github.com/ozanturksever/go-cluster/clustertest"
)

// Run ties a node to a ctx: it starts, leads while the ctx lasts, and when
// the ctx ends stops with a release, so a follower takes over at once. In
// a program the ctx is usually signal.NotifyContext's.
func ExampleNode_Run() {
	srv, err := clustertest.StartServer()
	if err != nil {
		fmt.Println(err)
		return
	}
	defer srv.Close()

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	leads := make(chan struct{})
	node, err := cluster.NewNode(cluster.Config{
		ClusterID: "example", NodeID: "node-1", NATSURLs: srv.URLs(),
		LeaseTTL: time.Second,
		Logger:   slog.New(slog.DiscardHandler),
	}, cluster.HookFuncs{
		BecomeLeader: func(context.Context) error {
			fmt.Println("leading")
			close(leads)
			return nil
		},
		LoseLeadership: func(context.Context) error {
			fmt.Println("draining before the release")
			return nil
		},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	ran := make(chan error, 1)
	go func() { ran <- node.Run(ctx) }()
	<-leads
	cancel() // SIGTERM, say
	fmt.Println("run:", <-ran)
	// Output:
	// leading
	// draining before the release
	// run: <nil>
}
