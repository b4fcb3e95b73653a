package clustertest_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/ozanturksever/go-cluster/clustertest"
)

// A program (a demo, an example) starts a server without a test, and
// closes it when done.
func ExampleStartServer() {
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
	js, _ := jetstream.New(nc)
	ctx := context.Background()
	kv, err := js.CreateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: "example"})
	if err != nil {
		fmt.Println(err)
		return
	}
	if _, err := kv.Put(ctx, "greeting", []byte("hello")); err != nil {
		fmt.Println(err)
		return
	}
	e, err := kv.Get(ctx, "greeting")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%s = %s\n", e.Key(), e.Value())
	// Output:
	// greeting = hello
}

// A cluster of three servers holds a bucket replicated on all of them.
func ExampleStartCluster() {
	c, err := clustertest.StartCluster(3)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()

	nc, err := nats.Connect(c.URL())
	if err != nil {
		fmt.Println(err)
		return
	}
	defer nc.Close()
	js, _ := jetstream.New(nc)
	ctx := context.Background()
	kv, err := js.CreateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: "example", Replicas: 3})
	if err != nil {
		fmt.Println(err)
		return
	}
	st, err := kv.Status(ctx)
	if err != nil {
		fmt.Println(err)
		return
	}
	info := st.(*jetstream.KeyValueBucketStatus).StreamInfo()
	fmt.Println("servers:", len(c.URLs()), "replicas:", 1+len(info.Cluster.Replicas))
	// Output:
	// servers: 3 replicas: 3
}

// In a test, RunServer stops the server and removes its store when the test
// ends. Pass URLs() to cluster.Config.NATSURLs.
func ExampleRunServer() {
	_ = func(t *testing.T) { // func TestMyService(t *testing.T)
		srv := clustertest.RunServer(t)
		nc, err := nats.Connect(srv.URL())
		if err != nil {
			t.Fatal(err)
		}
		defer nc.Close()
		// ... start the service's cluster.Node with NATSURLs: srv.URLs()
	}
}

// In a test, RunCluster gives three servers in one process; a service's
// nodes then use Bucket: cluster.BucketOptions{Replicas: 3.}
func ExampleRunCluster() {
	_ = func(t *testing.T) { // func TestMyServiceOnACluster(t *testing.T)
		c := clustertest.RunCluster(t, 3)
		// ... start nodes with NATSURLs: c.URLs(), Bucket: cluster.BucketOptions{Replicas: 3}

		// Lose a server, then bring it back with its state.
		c.Servers()[0].Shutdown()
		if err := c.Servers()[0].Restart(); err != nil {
			t.Fatal(err)
		}
	}
}
