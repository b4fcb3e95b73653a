package cluster_test

import (
	"context"
	"fmt"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	cluster "github.com/ozanturksever/go-cluster"
	"github.com/ozanturksever/go-cluster/clustertest"
)

// CreateBucket creates a cluster's bucket ahead of time (as go-cluster
// init does), with the settings a node would create it with. Once the
// bucket is older than LeaseTTL, the first node to start leads at once. A
// second call finds the bucket and accepts it.
func ExampleCreateBucket() {
	srv, err := clustertest.StartServer()
	if err != nil {
		fmt.Println(err)
		return
	}
	defer srv.Close()
	nc, err := nats.Connect(srv.URL())
	if err != nil {
		fmt.Println(err)
		return
	}
	defer nc.Close()
	js, err := jetstream.New(nc) // behind a leaf node: jetstream.NewWithDomain(nc, "hub")
	if err != nil {
		fmt.Println(err)
		return
	}
	ctx := context.Background()
	opts := cluster.BucketOptions{Replicas: 1, Storage: jetstream.FileStorage}
	for range 2 {
		kv, created, err := cluster.CreateBucket(ctx, js, "orders", opts)
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Println(kv.Bucket(), "created:", created)
	}
	// Output:
	// cluster-orders created: true
	// cluster-orders created: false
}
