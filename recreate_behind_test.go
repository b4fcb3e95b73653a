package cluster

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/ozanturksever/go-cluster/internal/faultproxy"
	"github.com/ozanturksever/go-cluster/internal/natstest"
	"github.com/ozanturksever/go-cluster/internal/store"
	"github.com/ozanturksever/go-cluster/internal/wire"
)

// TestServerBehindARecreateMakesNoSecondLeader is the schedule of issue
// 44 on three real servers: n2 leads in the bucket's incarnation X (TTL
// 10s) on server z alone, which leads X's stream; z's routes are cut, and
// n2 leads on until its deadline; meanwhile the bucket is deleted and
// created again (Y) on the other two by an operator, with a TTL of 6s; n5
// leads in Y, renews once and is cut off, leading on until its deadline;
// z gets its route back to Y's stream leader only, not to the meta
// leader, so that it stays behind on the deletion (internal/natstest's
// zombie test), while n2's writes through it reach Y. On protocol 2 (seen
// at 49fb159): Y's first election waited Y's 6s, and n5 led while n2 was
// still live ("tenures overlap: n2 (epoch …623) was live when n5 (epoch
// …445) became leader"), and n2's compare-and-swap on X's revision 2
// landed over n5's record at Y's revision 2. The cluster's ceiling (I2),
// set by the first campaigning node's Start, and revisions that name
// their incarnation (design §2.1) leave neither. (A ceiling set only by
// the node that created the bucket left the first: seen failing, "n5
// leads 6.583s after z was cut off … tenures overlap".)
func TestServerBehindARecreateMakesNoSecondLeader(t *testing.T) {
	t.Parallel()
	natstest.CheckLeaks(t)
	c := natstest.RunClusterWithRouteProxies(t, 3, func(target string) natstest.RouteProxy { return faultproxy.New(t, target) })
	natstest.WaitFor(t, 10*time.Second, c.FullMesh, "no full mesh of routes")
	var meta int
	natstest.WaitFor(t, 10*time.Second, func() bool { meta = c.MetaLeader(); return meta >= 0 }, "no meta leader")
	z, a := (meta+1)%3, (meta+2)%3 // z is cut off; meta and a keep the quorum
	id := uniqueClusterID(t)
	bucket := wire.BucketName(id)
	stream := wire.KVStream(bucket)
	ncMeta := c.Server(meta).Connect(t, nats.IgnoreDiscoveredServers())
	js, err := jetstream.New(ncMeta)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := store.Create(ctx(t), js, id, store.Options{Replicas: 3, LeaseTTL: 10 * time.Second}); err != nil {
		t.Fatal(err)
	}
	c.MoveStreamLeader(t, ncMeta, stream, []int{z}, -1)
	rec := newRecorder()

	// n2 on z alone: it leads in X and renews once. Its Start set the
	// cluster's ceiling in the account's bucket: its TTL.
	cfg2 := testConfig(id, "n2", c.Server(z).URL())
	cfg2.NATSOptions = append(cfg2.NATSOptions, nats.IgnoreDiscoveredServers())
	cfg2.LeaseTTL, cfg2.RenewInterval, cfg2.Bucket.Replicas = 10*time.Second, 3*time.Second, 3
	n2 := startNode(t, cfg2, rec, nil)
	natstest.WaitFor(t, 15*time.Second, n2.IsLeader, "n2 did not lead in the first bucket")
	x := bucketThrough(t, js, bucket)
	first := revisionOf(x)
	natstest.WaitFor(t, 5*time.Second, func() bool { return revisionOf(x) == first+1 }, "n2 did not renew")
	for j := range 3 {
		if j != z {
			c.CutRoutes(z, j)
		}
	}
	cut := time.Now()

	// X deleted and Y created on the majority's side, with a shorter TTL.
	// The delete's answer is z's, X's stream leader, and is lost: ask
	// until it is gone.
	natstest.WaitFor(t, 15*time.Second, func() bool {
		c, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
		defer cancel()
		err := js.DeleteKeyValue(c, bucket)
		return err == nil || errors.Is(err, jetstream.ErrBucketNotFound)
	}, "the majority did not delete the bucket")
	natstest.WaitFor(t, 15*time.Second, func() bool {
		c, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		_, _, err := store.Create(c, js, id, store.Options{Replicas: 3, LeaseTTL: 6 * time.Second})
		return err == nil
	}, "the majority did not create the bucket again")
	l := c.MetaLeader()
	if l < 0 || l == z {
		t.Fatalf("meta leader n%d; want one on the majority's side", l)
	}
	s := a
	if l == a {
		s = meta
	}
	c.MoveStreamLeader(t, ncMeta, stream, []int{s}, -1) // not the meta leader: z hears it only through s

	// n5 on s, through a proxy: it leads in Y, renews once, and is cut off,
	// leading on until its deadline.
	p5 := faultproxy.New(t, c.Server(s).Addr())
	cfg5 := testConfig(id, "n5", p5.URL())
	cfg5.NATSOptions = append(cfg5.NATSOptions, nats.IgnoreDiscoveredServers())
	// Renewals 2s apart (TTL/3): the one renewal is seen, and n5 cut off
	// before its next, within a window load beside the test cannot close.
	cfg5.LeaseTTL, cfg5.RenewInterval, cfg5.Bucket.Replicas = 6*time.Second, 2*time.Second, 3
	n5 := startNode(t, cfg5, rec, nil)
	natstest.WaitFor(t, 30*time.Second, n5.IsLeader, "n5 did not lead in the bucket created again")
	t.Logf("n5 leads %v after z was cut off", time.Since(cut).Round(time.Millisecond))
	y := bucketThrough(t, js, bucket)
	firstY := revisionOf(y)
	natstest.WaitFor(t, 5*time.Second, func() bool { return revisionOf(y) == firstY+1 }, "n5 did not renew")
	p5.Blackhole()
	t.Logf("n2's last revision in X: %d; n5's in Y: %d", first+1, firstY+1)

	// z back, to s only: behind on the deletion, it answers for X.
	c.HealRoutes(z, s)
	natstest.WaitFor(t, 10*time.Second, func() bool { return c.Routed(z, s) && c.Routed(s, z) }, "no route between n%d and n%d", z, s)
	natstest.WaitFor(t, 15*time.Second, func() bool { return !n5.IsLeader() }, "n5, cut off, kept its tenure past its deadline")

	// Every fault healed: one leader again, above every epoch before.
	c.HealRoutes(z, l)
	p5.Restore()
	waitOneLeader(t, []*Node{n2, n5}, 30*time.Second)
	rec.check(t)
}

// bucketThrough binds the bucket through js.
func bucketThrough(t *testing.T, js jetstream.JetStream, bucket string) jetstream.KeyValue {
	t.Helper()
	var kv jetstream.KeyValue
	natstest.WaitFor(t, 10*time.Second, func() bool {
		var err error
		kv, err = js.KeyValue(ctx(t), bucket)
		return err == nil
	}, "bucket %s not found", bucket)
	return kv
}

// revisionOf is the lease key's last revision, 0 if it cannot be read.
func revisionOf(kv jetstream.KeyValue) uint64 {
	rev, _ := leaseRevision(kv)
	return rev
}
