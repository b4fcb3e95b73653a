package store

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/ozanturksever/go-cluster/internal/bucketmeta"
	"github.com/ozanturksever/go-cluster/internal/natstest"
	"github.com/ozanturksever/go-cluster/internal/wire"
)

var clusterSeq atomic.Int64

// clusterID is a cluster ID no other test of the run uses.
func clusterID(*testing.T) string {
	return "c" + time.Now().Format("150405") + "-" + strconv.FormatInt(clusterSeq.Add(1), 10)
}

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// Create writes Options.LeaseTTL (or wire.DefaultLeaseTTL) into the new
// bucket's metadata, with the protocol, and refuses a LeaseTTL out of
// a Config's bounds, naming the field.
func TestCreateLeaseTTL(t *testing.T) {
	natstest.CheckLeaks(t)
	srv := natstest.RunServer(t)
	js, _ := jetstream.New(srv.Connect(t))
	for _, c := range []struct{ ttl, want time.Duration }{{0, wire.DefaultLeaseTTL}, {2500 * time.Millisecond, 2500 * time.Millisecond}} {
		id := clusterID(t)
		if _, _, err := Create(testCtx(t), js, id, Options{LeaseTTL: c.ttl}); err != nil {
			t.Fatal(err)
		}
		stream, err := js.Stream(testCtx(t), wire.KVStream(wire.BucketName(id)))
		if err != nil {
			t.Fatal(err)
		}
		m, err := bucketmeta.Parse(stream.CachedInfo().Config.Metadata)
		if err != nil || m != (bucketmeta.Meta{LeaseTTL: c.want, MaxTTL: c.want, Protocol: wire.Protocol}) {
			t.Errorf("a bucket created with LeaseTTL %v has metadata %+v, %v; want %v", c.ttl, m, err, c.want)
		}
	}
	for _, ttl := range []time.Duration{-time.Second, wire.MinLeaseTTL - 1, wire.MaxLeaseTTL + 1} {
		id := clusterID(t)
		_, _, err := Create(testCtx(t), js, id, Options{LeaseTTL: ttl})
		if !errors.Is(err, wire.ErrInvalidConfig) || !strings.Contains(err.Error(), "LeaseTTL") {
			t.Errorf("Create with LeaseTTL %v = %v, want wire.ErrInvalidConfig naming LeaseTTL", ttl, err)
		}
	}
}

// Create creates the bucket the Node would, says so, accepts it
// again, and refuses one the election cannot use.
func TestCreate(t *testing.T) {
	natstest.CheckLeaks(t)
	srv := natstest.RunServer(t)
	js, _ := jetstream.New(srv.Connect(t))
	id := clusterID(t)
	if _, created, err := Create(testCtx(t), js, id, Options{}); err != nil || !created {
		t.Fatalf("first Create = created %v, %v; want created", created, err)
	}
	if _, created, err := Create(testCtx(t), js, id, Options{Replicas: 1}); err != nil || created {
		t.Fatalf("second Create = created %v, %v; want found", created, err)
	}
	bad := clusterID(t)
	if _, err := js.CreateKeyValue(testCtx(t), jetstream.KeyValueConfig{Bucket: wire.BucketName(bad), TTL: time.Hour}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := Create(testCtx(t), js, bad, Options{}); !errors.Is(err, wire.ErrBucketConfig) || !errors.Is(err, wire.ErrInvalidConfig) {
		t.Errorf("Create over a bucket with a TTL = %v, want wire.ErrBucketConfig", err)
	}
	for _, o := range []Options{{Replicas: 6}, {Storage: 9}, {Placement: &jetstream.Placement{}}, {Placement: &jetstream.Placement{Tags: []string{""}}}} {
		if _, _, err := Create(testCtx(t), js, clusterID(t), o); !errors.Is(err, wire.ErrInvalidConfig) {
			t.Errorf("Create(%+v) = %v, want wire.ErrInvalidConfig", o, err)
		}
	}
	if _, _, err := Create(testCtx(t), js, "a b", Options{}); !errors.Is(err, wire.ErrInvalidConfig) {
		t.Errorf("Create with a bad cluster ID = %v", err)
	}
}
