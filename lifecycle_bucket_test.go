package cluster

import (
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
	t.Parallel()
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
