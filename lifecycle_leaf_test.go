package cluster

import (
	"errors"
	"github.com/ozanturksever/go-cluster/state"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/ozanturksever/go-cluster/internal/natstest"
	"github.com/ozanturksever/go-cluster/internal/wire"
)

// leafConfig is testConfig for a node connected to leaf that reaches the
// bucket in the hub's domain.
func leafConfig(id, name string, leaf *natstest.Server) Config {
	c := stableConfig(id, name, leaf.URL())
	c.JetStreamDomain = "hub"
	return c
}

// Nodes connected to a leaf node elect in the bucket of the hub's domain,
// and their fenced state goes there too: every request through the leaf
// (which does not carry $JS.API.> or $KV.>) uses the domain.
func TestNodesBehindLeafElectInHubDomain(t *testing.T) {
	t.Parallel()
	natstest.CheckLeaks(t)
	hub := natstest.RunHub(t, "hub")
	leaf := natstest.RunLeaf(t, hub, "leaf")
	rec, id := newRecorder(), uniqueClusterID(t)

	a := startNode(t, leafConfig(id, "a", leaf), rec, nil)
	b := startNode(t, leafConfig(id, "b", leaf), rec, nil)
	l := waitOneLeader(t, []*Node{a, b}, 15*time.Second)
	first := firstEpoch(t, hub.URL(), id)
	if l.Epoch() != first {
		t.Errorf("leader epoch = %d, want the bucket's first, %d", l.Epoch(), first)
	}

	// The bucket is the hub's, not the leaf's own JetStream's.
	hubJS, _ := jetstream.New(hub.Connect(t))
	hkv, err := hubJS.KeyValue(ctx(t), wire.BucketName(id))
	if err != nil {
		t.Fatalf("hub lookup of the bucket: %v", err)
	}
	if e, err := hkv.Get(ctx(t), wire.LeaseKey); err != nil {
		t.Fatalf("hub read of the lease: %v", err)
	} else if lease, err := decodeLease(e.Value(), e.Revision()); err != nil || lease.NodeID != l.Config().NodeID {
		t.Fatalf("hub's lease = %+v, %v; want held by %s", lease, err, l.Config().NodeID)
	}
	leafJS, _ := jetstream.New(leaf.Connect(t))
	if _, err := leafJS.KeyValue(ctx(t), wire.BucketName(id)); !errors.Is(err, jetstream.ErrBucketNotFound) {
		t.Errorf("leaf-local lookup = %v, want ErrBucketNotFound", err)
	}

	// Fenced state: a Put (publish), a Get (stream message get request),
	// and a Commit (batch publish) all through the leaf.
	if _, err := l.State().Put(ctx(t), "cfg.a", []byte("1")); err != nil {
		t.Fatalf("Put through the leaf: %v", err)
	}
	if err := l.State().EnableCommit(ctx(t)); err != nil {
		t.Fatalf("EnableCommit through the leaf: %v", err)
	}
	if _, err := l.State().Commit(ctx(t), state.Write{Key: "cfg.b", Value: []byte("2")}, state.Write{Key: "cfg.c", Value: []byte("3"), Expect: state.ExpectAbsent()}); err != nil {
		t.Fatalf("Commit through the leaf: %v", err)
	}
	other := a
	if l == a {
		other = b
	}
	for key, want := range map[string]string{"cfg.a": "1", "cfg.b": "2", "cfg.c": "3"} {
		natstest.WaitFor(t, 5*time.Second, func() bool {
			e, err := other.State().Get(ctx(t), key)
			return err == nil && string(e.Value) == want
		}, "follower's Get(%s) through the leaf", key)
	}

	// A hand-over through the leaf.
	if err := l.StepDown(ctx(t)); err != nil {
		t.Fatalf("StepDown: %v", err)
	}
	natstest.WaitFor(t, 10*time.Second, func() bool { return other.IsLeader() && other.Epoch() == first+1 }, "%s did not take over", other.Config().NodeID)
	rec.check(t)
}
