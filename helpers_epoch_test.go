package cluster

import (
	"context"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/ozanturksever/go-cluster/internal/wire"
)

// firstEpoch is the first epoch of clusterID's bucket as the server at url
// holds it now: its creation time in microseconds (design rule 50).
// Within a bucket the epochs go on from it one by one.
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
	created := streamCreated(status)
	if created.IsZero() {
		t.Fatalf("bucket %s: the server gave no creation time", status.Bucket())
	}
	return created.UnixMicro()
}

// streamCreated is the creation time of the bucket's stream, zero when
// the status does not carry it.
func streamCreated(status jetstream.KeyValueStatus) time.Time {
	if bs, ok := status.(*jetstream.KeyValueBucketStatus); ok {
		return bs.StreamInfo().Created
	}
	return time.Time{}
}
