package cluster

import (
	"errors"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/ozanturksever/go-cluster/internal/bucketmeta"
	"github.com/ozanturksever/go-cluster/internal/store"
	"github.com/ozanturksever/go-cluster/internal/wire"
)

// Start refuses a bucket it cannot share with the nodes already there:
// one whose lease record another protocol version wrote, one marked for
// another protocol, and one that keeps no LeaseTTL (I2), each with an
// error naming what to run (docs/production.md).
func TestStartRefusesAnotherProtocol(t *testing.T) {
	t.Parallel()
	srv, _, _ := setup(t)
	js, err := jetstream.New(srv.Connect(t))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name   string
		meta   map[string]string
		record string
		want   error
	}{
		{"a record of protocol 1", rebased(wire.Protocol), `{"node_id":"old","epoch":7}`, ErrProtocolVersion},
		{"a record of protocol 2", rebased(wire.Protocol), `{"node_id":"old","epoch":7,"v":2}`, ErrProtocolVersion},
		{"a bucket marked for a newer protocol", rebased(wire.BucketProtocolHi(wire.ProtocolHi) + 1), "", ErrProtocolVersion},
		{"no LeaseTTL in the metadata", bucketmeta.Meta{Protocol: wire.Protocol, EpochBase: time.Now().UnixMicro()}.Set(nil), "", ErrBucketConfig},
		// made by another tool: its revisions may repeat a deleted bucket's (design §2.1)
		{"neither a first_seq nor an epoch_base", bucketmeta.ForNewBucket(testTTL, wire.Protocol), "", ErrBucketConfig},
	} {
		t.Run(c.name, func(t *testing.T) {
			id := uniqueClusterID(t)
			cfg := store.BucketConfig(id, store.Options{})
			cfg.Metadata = c.meta
			kv, err := js.CreateKeyValue(ctx(t), cfg)
			if err != nil {
				t.Fatal(err)
			}
			if c.record != "" {
				if _, err := kv.Put(ctx(t), wire.LeaseKey, []byte(c.record)); err != nil {
					t.Fatal(err)
				}
			}
			n, err := NewNode(testConfig(id, "a", srv.URL()), NoOpHooks{})
			if err != nil {
				t.Fatal(err)
			}
			err = n.Start(ctx(t))
			if err == nil {
				_ = n.Stop(ctx(t))
			}
			if !errors.Is(err, c.want) {
				t.Fatalf("Start = %v, want %v", err, c.want)
			}
			t.Logf("Start: %v", err)
		})
	}
}

// rebased is the metadata of a bucket of protocol made by hand and given an
// epoch base, as go-cluster init --rebase does: its revisions from 1.
func rebased(protocol int) map[string]string {
	return bucketmeta.Meta{LeaseTTL: testTTL, MaxTTL: testTTL, Protocol: protocol, EpochBase: time.Now().UnixMicro()}.Set(nil)
}
