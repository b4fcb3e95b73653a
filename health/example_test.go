package health_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"log/slog"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/ozanturksever/go-cluster/clustertest"
	"github.com/ozanturksever/go-cluster/health"
)

// Two nodes answer health requests; a client that knows only the cluster's
// name asks one node, then every node at once.
func Example() {
	srv, err := clustertest.StartServer()
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()
	nc, err := nats.Connect(srv.URL())
	if err != nil {
		log.Fatal(err)
	}
	defer nc.Close()
	ctx := context.Background()

	for _, id := range []string{"node-1", "node-2"} {
		checker, err := health.NewChecker(health.Config{
			ClusterID: "orders", NodeID: id, Conn: nc,
			Logger: slog.New(slog.DiscardHandler),
		})
		if err != nil {
			log.Fatal(err)
		}
		if err := checker.Start(ctx); err != nil {
			log.Fatal(err)
		}
		defer checker.Stop()
		checker.SetLeader("node-1")
		if id == "node-1" {
			checker.SetRole("PRIMARY") // an Adapter does this for a cluster.Node
			checker.SetCustom("version", "1.4.2")
		}
	}

	client, err := health.NewClient(nc, "orders")
	if err != nil {
		log.Fatal(err)
	}
	r, err := client.QueryNode(ctx, "node-1", time.Second)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(r.NodeID, r.Role, "leader:", r.Leader, "version:", r.Custom["version"])

	all, err := client.QueryClusterN(ctx, 2, time.Second) // returns once both answered
	if err != nil {
		log.Fatal(err)
	}
	for _, r := range all {
		fmt.Println(r.NodeID, r.Role)
	}

	_, err = client.QueryNode(ctx, "node-9", 5*time.Second) // reported at once
	fmt.Println(errors.Is(err, health.ErrNoResponders), err)
	// Output:
	// node-1 PRIMARY leader: node-1 version: 1.4.2
	// node-1 PRIMARY
	// node-2 PASSIVE
	// true health: query node "node-9" of cluster "orders": no responders: nats: no responders available for request
}
