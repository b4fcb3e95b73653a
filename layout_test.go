package cluster

import (
	"errors"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/ozanturksever/go-cluster/internal/bucketmeta"
	"github.com/ozanturksever/go-cluster/internal/natstest"
	"github.com/ozanturksever/go-cluster/internal/store"
	"github.com/ozanturksever/go-cluster/internal/wire"
)

// A bucket marked protocol 3, made before the account's bucket, keeps
// working (docs/design.md §2.6, §2.7): its nodes announce in its members
// bucket, whose ceiling the first of them sets. Its holder a (LeaseTTL
// 3s) is cut off as the bucket is deleted and made again, now marked 4
// and with a TTL of 1s, by whoever: the nodes b and c (LeaseTTL 1s)
// started on the new bucket read the ceiling in the members bucket still,
// and wait a out. Read only from the bucket's own mark, or only from the
// account's bucket, the ceiling would be none, and b or c would lead
// beside a.
func TestABucketOfProtocol3KeepsItsCeilingAcrossARecreate(t *testing.T) {
	t.Parallel()
	srv, rec, id := setup(t)
	nc := srv.Connect(t)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := store.Create(ctx(t), js, id, store.Options{LeaseTTL: 3 * time.Second}); err != nil {
		t.Fatal(err)
	}
	if _, err := bucketmeta.MarkProtocol(ctx(t), js, wire.KVStream(wire.BucketName(id)), wire.Protocol); err != nil {
		t.Fatal(err)
	}
	acfg := testConfig(id, "a", srv.URL())
	acfg.LeaseTTL, acfg.RenewInterval = 3*time.Second, 750*time.Millisecond
	a, proxy := proxiedNode(t, srv, acfg, rec)
	waitOneLeader(t, []*Node{a}, 10*time.Second)

	members, err := js.KeyValue(ctx(t), wire.MembersBucketName(id))
	if err != nil {
		t.Fatalf("the members bucket of a cluster of protocol 3: %v", err)
	}
	if _, err := members.Get(ctx(t), wire.MemberKey("a")); err != nil {
		t.Errorf("a's member record in the members bucket: %v", err)
	}
	if account, err := js.KeyValue(ctx(t), wire.AccountBucketName); !errors.Is(err, jetstream.ErrBucketNotFound) {
		t.Errorf("a node of a cluster of protocol 3 made the account's bucket (%v %v)", account, err)
	}
	if m := streamMeta(t, js, wire.MembersBucketName(id)); m.MaxTTL != 3*time.Second {
		t.Errorf("the members bucket's ceiling %v, want a's LeaseTTL, 3s", m.MaxTTL)
	}

	proxy.Blackhole()
	if err := js.DeleteKeyValue(ctx(t), wire.BucketName(id)); err != nil {
		t.Fatal(err)
	}
	var cerr error
	natstest.WaitFor(t, 5*time.Second, func() bool {
		_, _, cerr = store.Create(ctx(t), js, id, store.Options{LeaseTTL: time.Second})
		return cerr == nil
	}, "create the bucket again: %v", cerr)
	b := startNode(t, testConfig(id, "b", srv.URL()), rec, nil) // LeaseTTL 1s
	c := startNode(t, testConfig(id, "c", srv.URL()), rec, nil)
	waitOneLeader(t, []*Node{b, c}, 15*time.Second)
	if m := streamMeta(t, js, wire.BucketName(id)); m.Protocol != wire.BucketProtocol || m.MaxTTL != time.Second {
		t.Errorf("the bucket made again: %+v, want marked %d with a 1s ceiling of its own", m, wire.BucketProtocol)
	}
	rec.check(t) // nobody leads while a, cut off, still does
}

// streamMeta is the election metadata of bucket's stream.
func streamMeta(t *testing.T, js jetstream.JetStream, bucket string) bucketmeta.Meta {
	t.Helper()
	s, err := js.Stream(ctx(t), wire.KVStream(bucket))
	if err != nil {
		t.Fatal(err)
	}
	m, err := bucketmeta.Parse(s.CachedInfo().Config.Metadata)
	if err != nil {
		t.Fatal(err)
	}
	return m
}
