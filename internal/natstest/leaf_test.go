package natstest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// A client of the leaf reaches the hub's JetStream through the hub's
// domain as soon as RunLeaf returns, and its own server's through no
// domain: two different stores.
func TestLeafReachesHubDomain(t *testing.T) {
	CheckLeaks(t)
	hub := RunHub(t, "hub")
	leaf := RunLeaf(t, hub, "leaf")
	nc := leaf.Connect(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	viaHub, err := jetstream.NewWithDomain(nc, "hub")
	if err != nil {
		t.Fatal(err)
	}
	kv, err := viaHub.CreateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: "through-leaf"})
	if err != nil {
		t.Fatalf("create a bucket in the hub's domain through the leaf: %v", err)
	}
	if _, err := kv.Put(ctx, "k", []byte("v")); err != nil {
		t.Fatalf("put through the leaf: %v", err)
	}
	// The bucket is the hub's: the hub's own client sees it...
	hubJS, _ := jetstream.New(hub.Connect(t))
	if _, err := hubJS.KeyValue(ctx, "through-leaf"); err != nil {
		t.Fatalf("hub lookup: %v", err)
	}
	// ... and the leaf's own JetStream does not.
	local, _ := jetstream.New(nc)
	if _, err := local.KeyValue(ctx, "through-leaf"); !errors.Is(err, jetstream.ErrBucketNotFound) {
		t.Fatalf("leaf-local lookup = %v, want ErrBucketNotFound", err)
	}
}
