package cluster

import (
	"context"
	"github.com/ozanturksever/go-cluster/internal/store"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/ozanturksever/go-cluster/internal/wire"
)

// firstEpoch is the first epoch of clusterID's bucket as the server at url
// holds it now: its first sequence, its creator's clock in microseconds
// (docs/design.md §2.1, §2.4). Within a bucket the epochs go on from it
// one by one.
func firstEpoch(t testing.TB, url, clusterID string) int64 {
	t.Helper()
	nc, err := nats.Connect(url)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatalf("jetstream: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	kv, err := js.KeyValue(ctx, wire.BucketName(clusterID))
	if err != nil {
		t.Fatalf("bucket of %s: %v", clusterID, err)
	}
	status, err := kv.Status(ctx)
	if err != nil {
		t.Fatalf("bucket status: %v", err)
	}
	first := streamFirstSeq(status)
	if first == 0 {
		t.Fatalf("bucket %s: created without a first_seq", status.Bucket())
	}
	return int64(first)
}

// streamFirstSeq is the first_seq of the bucket's stream, 0 when the
// status does not carry it.
func streamFirstSeq(status jetstream.KeyValueStatus) uint64 {
	if bs, ok := status.(*jetstream.KeyValueBucketStatus); ok {
		return bs.StreamInfo().Config.FirstSeq
	}
	return 0
}

// fence is n's live tenure's epoch and latest lease revision, as fenced
// writes read them, and false when n does not lead.
func fence(n *Node) (epoch int64, rev uint64, ok bool) {
	return n.eng.Fenced().Node.Tenure()
}

// stateStore is a started node's bucket, as fenced writes reach it.
func stateStore(n *Node) (*store.Store, error) {
	return n.eng.Fenced().Node.Store()
}
