package health_test

import (
	"context"
	"fmt"
	"log"
	"log/slog"
	"time"

	"github.com/nats-io/nats.go"
	cluster "github.com/ozanturksever/go-cluster"
	"github.com/ozanturksever/go-cluster/clustertest"
	"github.com/ozanturksever/go-cluster/health"
)

// A cluster.Node whose health responses follow its leadership through an
// Adapter: the application never calls SetRole.
func ExampleAdapter() {
	srv, err := clustertest.StartServer()
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()
	nc, err := nats.Connect(srv.URL(), nats.MaxReconnects(-1))
	if err != nil {
		log.Fatal(err)
	}
	defer nc.Close()
	ctx := context.Background()
	quiet := slog.New(slog.DiscardHandler)

	// 1. The checker, and its adapter.
	checker, err := health.NewChecker(health.Config{ClusterID: "orders", NodeID: "node-1", Conn: nc, Logger: quiet})
	if err != nil {
		log.Fatal(err)
	}
	adapter := health.NewAdapter(checker)

	// 2. The node, with the application's hooks and the adapter's.
	var appHooks cluster.NoOpHooks
	node, err := cluster.NewNode(cluster.Config{
		ClusterID: "orders", NodeID: "node-1", Conn: nc, Logger: quiet,
		LeaseTTL: time.Second, // a new bucket's first election waits one LeaseTTL
	}, cluster.ComposeHooks(appHooks, adapter))
	if err != nil {
		log.Fatal(err)
	}

	// 3. Bind the adapter to the node, so responses carry its epoch.
	if err := adapter.Bind(node); err != nil {
		log.Fatal(err)
	}

	if err := checker.Start(ctx); err != nil {
		log.Fatal(err)
	}
	defer checker.Stop()
	if err := node.Start(ctx); err != nil {
		log.Fatal(err)
	}
	defer node.Stop(ctx)

	// The only node of the cluster becomes leader; wait until its health
	// response says so.
	client, _ := health.NewClient(nc, "orders")
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		r, err := client.QueryNode(ctx, "node-1", time.Second)
		if err == nil && r.IsLeader() {
			// The epoch is the tenure's fencing token: a large number
			// (a new bucket's first is its creation time in µs).
			fmt.Println(r.NodeID, r.Role, "leader:", r.Leader, "epoch is the node's:", r.Epoch == node.Epoch())
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	fmt.Println("no leader")
	// Output:
	// node-1 PRIMARY leader: node-1 epoch is the node's: true
}
