package cluster

import (
	"context"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/ozanturksever/go-cluster/internal/store"
	"github.com/ozanturksever/go-cluster/internal/wire"
)

func ctx(t testing.TB) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return c
}

// openKV binds (creating if needed) the cluster's bucket from a separate
// connection, as an operator or another tool would.
func openKV(t testing.TB, url, clusterID string) jetstream.KeyValue {
	t.Helper()
	nc, err := nats.Connect(url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	if kv, err := js.KeyValue(ctx(t), wire.BucketName(clusterID)); err == nil {
		return kv
	}
	kv, _, err := store.Create(ctx(t), js, clusterID, store.Options{LeaseTTL: testTTL})
	if err != nil {
		t.Fatal(err)
	}
	return kv
}
