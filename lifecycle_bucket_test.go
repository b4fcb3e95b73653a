package cluster

import (
	"errors"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/ozanturksever/go-cluster/internal/natstest"
	"github.com/ozanturksever/go-cluster/internal/store"
	"github.com/ozanturksever/go-cluster/internal/wire"
)

// The bucket a node creates has Bucket.Storage and Bucket.Placement besides
// the election's settings; a bucket that exists is used as it is.
func TestNodeCreatesBucketWithStorageAndPlacement(t *testing.T) {
	natstest.CheckLeaks(t)
	srv := natstest.RunServer(t, natstest.WithOptions(func(o *server.Options) { o.Tags = []string{"az:1"} }))
	rec, id := newRecorder(), uniqueClusterID(t)
	cfg := testConfig(id, "a", srv.URL())
	cfg.Bucket.Storage = jetstream.MemoryStorage
	cfg.Bucket.Placement = &jetstream.Placement{Tags: []string{"az:1"}}
	a := startNode(t, cfg, rec, nil)
	waitOneLeader(t, []*Node{a}, 10*time.Second)

	js, _ := jetstream.New(srv.Connect(t))
	info := streamInfo(t, js, id)
	if info.Config.Storage != jetstream.MemoryStorage || info.Config.Placement == nil || len(info.Config.Placement.Tags) != 1 ||
		info.Config.Placement.Tags[0] != "az:1" {
		t.Errorf("bucket storage %v placement %+v, want memory on az:1", info.Config.Storage, info.Config.Placement)
	}
	want := store.BucketConfig(id, store.Options{Storage: jetstream.MemoryStorage})
	if info.Config.MaxMsgsPerSubject != int64(want.History) || info.Config.SubjectDeleteMarkerTTL != want.LimitMarkerTTL ||
		info.Config.Duplicates != 2*time.Minute || info.Config.MaxAge != 0 {
		t.Errorf("bucket config %+v is not BucketConfig's", info.Config)
	}

	// Another node with other settings uses the bucket as it is.
	cfg.NodeID, cfg.Bucket.Storage, cfg.Bucket.Placement = "b", jetstream.FileStorage, nil
	b := startNode(t, cfg, rec, nil)
	natstest.WaitFor(t, 5*time.Second, func() bool { return b.Leader() == "a" }, "b did not follow a")
	if info := streamInfo(t, js, id); info.Config.Storage != jetstream.MemoryStorage {
		t.Errorf("the existing bucket changed to %v", info.Config.Storage)
	}
	rec.check(t)
}

func streamInfo(t *testing.T, js jetstream.JetStream, clusterID string) *jetstream.StreamInfo {
	t.Helper()
	s, err := js.Stream(ctx(t), wire.KVStream(wire.BucketName(clusterID)))
	if err != nil {
		t.Fatal(err)
	}
	return s.CachedInfo()
}

// CreateBucket creates the bucket the Node would, says so, accepts it
// again, and refuses one the election cannot use.
func TestCreateBucket(t *testing.T) {
	natstest.CheckLeaks(t)
	srv := natstest.RunServer(t)
	js, _ := jetstream.New(srv.Connect(t))
	id := uniqueClusterID(t)
	if _, created, err := store.Create(ctx(t), js, id, store.Options{}); err != nil || !created {
		t.Fatalf("first CreateBucket = created %v, %v; want created", created, err)
	}
	if _, created, err := store.Create(ctx(t), js, id, store.Options{Replicas: 1}); err != nil || created {
		t.Fatalf("second CreateBucket = created %v, %v; want found", created, err)
	}
	bad := uniqueClusterID(t)
	if _, err := js.CreateKeyValue(ctx(t), jetstream.KeyValueConfig{Bucket: wire.BucketName(bad), TTL: time.Hour}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := store.Create(ctx(t), js, bad, store.Options{}); !errors.Is(err, ErrBucketConfig) || !errors.Is(err, ErrInvalidConfig) {
		t.Errorf("CreateBucket over a bucket with a TTL = %v, want ErrBucketConfig", err)
	}
	for _, o := range []store.Options{{Replicas: 6}, {Storage: 9}, {Placement: &jetstream.Placement{}}, {Placement: &jetstream.Placement{Tags: []string{""}}}} {
		if _, _, err := store.Create(ctx(t), js, uniqueClusterID(t), o); !errors.Is(err, ErrInvalidConfig) {
			t.Errorf("CreateBucket(%+v) = %v, want ErrInvalidConfig", o, err)
		}
	}
	if _, _, err := store.Create(ctx(t), js, "a b", store.Options{}); !errors.Is(err, ErrInvalidConfig) {
		t.Errorf("CreateBucket with a bad cluster ID = %v", err)
	}
}
