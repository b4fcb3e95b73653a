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

// createAgain creates the bucket of id right after the test deleted it
// (natstest.CreateAfterDelete says why it may have to ask again).
func createAgain(t *testing.T, js jetstream.JetStream, id string) jetstream.KeyValue {
	t.Helper()
	var kv jetstream.KeyValue
	natstest.CreateAfterDelete(t, "create "+id+" again", func() (err error) {
		kv, _, err = Create(testCtx(t), js, id, Options{})
		return err
	})
	return kv
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
		if err != nil || m != (bucketmeta.Meta{LeaseTTL: c.want, MaxTTL: c.want, Protocol: wire.BucketProtocol}) {
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

// A bucket the library creates starts its sequences at its creator's
// clock in µs (first_seq): created again, its revisions are above every
// one of the bucket deleted, so that a compare-and-swap on an old
// revision cannot land in it (docs/design.md §2.1).
func TestCreatedBucketsRevisionsNameTheirIncarnation(t *testing.T) {
	nc := natstest.RunServer(t).Connect(t)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	before := uint64(time.Now().UnixMicro())
	kv, created, err := Create(testCtx(t), js, "fs", Options{})
	if err != nil || !created {
		t.Fatalf("create: %v, %v", created, err)
	}
	old, err := kv.Put(testCtx(t), "lease", []byte("a"))
	if err != nil || old < before {
		t.Fatalf("the first write at revision %d (%v); want at least the creation time in µs, %d", old, err, before)
	}
	if err := js.DeleteKeyValue(testCtx(t), kv.Bucket()); err != nil {
		t.Fatal(err)
	}
	kv = createAgain(t, js, "fs")
	if _, err := kv.Update(testCtx(t), "lease", []byte("b"), old); err == nil {
		t.Fatal("a compare-and-swap on the deleted bucket's revision landed in the new one")
	}
	if rev, err := kv.Put(testCtx(t), "lease", []byte("c")); err != nil || rev <= old {
		t.Fatalf("the new bucket's first write at revision %d (%v); want above the old one's %d", rev, err, old)
	}
	st, err := kv.Status(testCtx(t))
	if err != nil {
		t.Fatal(err)
	}
	if cfg := st.(*jetstream.KeyValueBucketStatus).StreamInfo().Config; !cfg.AllowRollup || !cfg.DenyDelete || cfg.MaxMsgsPerSubject != LeaseHistory || cfg.Duplicates != 2*time.Minute || !cfg.AllowMsgTTL {
		t.Errorf("the stream is not configured as jetstream makes a bucket: %+v", cfg)
	}
}
