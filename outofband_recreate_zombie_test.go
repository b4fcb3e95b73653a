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
	"github.com/ozanturksever/go-cluster/internal/wire"
)

// The schedule of issue 44 on real servers: a 3-server JetStream cluster
// whose routes pass through proxies, two nodes, and the bucket deleted and
// created again while the leader's server is cut off. Each step waits for
// the servers to be where the next needs them; nothing is left to chance
// but the order of a few answers, held by wide margins.
//
//  1. n2, its connection pinned to server z (neither the meta leader nor
//     the stream's leader, so that z takes no write once cut off), leads
//     in the bucket's incarnation X.
//  2. z's routes are cut: n2's renewals find no stream and its deadline
//     ends the tenure; it follows its own record at X's revision r.
//  3. On the majority's side the bucket is deleted, and n5 starts,
//     creates it again (incarnation Y), waits out the fresh bucket (P6),
//     creates the lease and renews it up to revision r. Then n5's
//     connection is blackholed: it still leads, until its deadline, and
//     nothing more is written to Y. Its LeaseTTL, 15s, outlasts what
//     follows: up to 9s for step 5, then about 1s.
//  4. z, cut off, answers stream info for X from its copy, a member of a
//     leaderless group (nats-server answers so once its JetStream has run
//     for 10s): n2's Confirms name X, and n2 campaigns over its record at
//     r, its writes finding no stream.
//  5. z's routes to Y's leader s (not the meta leader, so that z's meta
//     state does not catch up) are healed, just after z campaigned for
//     the meta group: it campaigns again, making the meta leader step
//     down, no sooner than 4s later (natstest's MetaTerm). The route is
//     slow, 100ms each way, so that z's own stream info answers, naming
//     X, reach n2 before s's, naming Y.
//  6. n2's next CAS on r reaches s and lands in Y over n5's live record;
//     the Confirm of its landing is answered by z, naming X.
//
// Once n5's deadline has passed, every tenure is checked: none may
// overlap another, and epochs must grow. (Where revisions of a bucket
// created again cannot be those of the one before, Y never holds
// revision r, n5 is frozen at its first revision above it, and n2's CAS
// cannot land.)
func TestRecreatedBucketAnsweredForByACutOffServerGivesNoSecondLeader(t *testing.T) {
	// Side by side with other tests: revisions of the bucket created
	// again start above r (design §2.1), so n5 is frozen at its first and
	// no race is left to shift; each step waits for the servers to be
	// where the next needs them.
	t.Parallel()
	natstest.CheckLeaks(t)
	c := natstest.RunClusterWithRouteProxies(t, 3, func(target string) natstest.RouteProxy { return faultproxy.New(t, target) })
	natstest.WaitFor(t, 10*time.Second, c.FullMesh, "no full mesh of routes")
	rec := newRecorder()
	id := uniqueClusterID(t)
	bucket := wire.BucketName(id)
	stream := wire.KVStream(bucket)

	// 1. n2 leads in X through z.
	z := (c.MetaLeader() + 1) % 3
	majority := []int{(z + 1) % 3, (z + 2) % 3}
	cfg2 := testConfig(id, "n2")
	cfg2.Conn = c.Server(z).Connect(t, nats.IgnoreDiscoveredServers())
	cfg2.Bucket.Replicas = 3
	cfg2.LeaseTTL, cfg2.RenewInterval = 2*time.Second, 500*time.Millisecond
	n2 := startNode(t, cfg2, rec, nil)
	natstest.WaitFor(t, 15*time.Second, n2.IsLeader, "n2 did not lead")
	ncs := map[int]*nats.Conn{}
	for _, i := range majority {
		ncs[i] = c.Server(i).Connect(t, nats.IgnoreDiscoveredServers())
	}
	if c.StreamLeader("$G", stream) == z {
		c.MoveStreamLeader(t, ncs[majority[0]], stream, []int{0, 1, 2}, z)
	}
	natstest.WaitFor(t, 15*time.Second, func() bool {
		l, ok := n2.Lease()
		return n2.IsLeader() && ok && l.Revision >= 2 && c.MetaLeader() != z && c.StreamLeader("$G", stream) != z
	}, "n2 did not lead and renew with z leading neither the meta group nor the stream")
	createdX := createdOn(t, ncs[majority[0]], stream)

	// 2. z cut off; n2's deadline ends its tenure.
	for _, j := range majority {
		c.CutRoutes(z, j)
	}
	natstest.WaitFor(t, 10*time.Second, func() bool { return !n2.IsLeader() }, "n2, cut off, still leads")
	own, ok := n2.Lease()
	if !ok || own.NodeID != "n2" {
		t.Fatalf("n2 sees %+v; want its own record", own)
	}
	r := own.Revision

	// 3. X deleted, Y created by n5 on the majority's side.
	js, err := jetstream.New(ncs[majority[0]])
	if err != nil {
		t.Fatal(err)
	}
	natstest.WaitFor(t, 10*time.Second, func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
		defer cancel()
		err := js.DeleteKeyValue(ctx, bucket)
		return err == nil || errors.Is(err, jetstream.ErrBucketNotFound)
	}, "delete the bucket on the majority's side")
	proxy5 := faultproxy.New(t, c.Server(majority[0]).Addr())
	cfg5 := testConfig(id, "n5", proxy5.URL())
	cfg5.Bucket.Replicas = 3
	cfg5.LeaseTTL, cfg5.RenewInterval = 15*time.Second, 500*time.Millisecond
	// n5's Start creates an R3 stream while z is cut off but not yet
	// known to be offline: z may be the group's preferred leader, and the
	// other two then elect one after nats-server's election timeout
	// (4-9 s), past startNode's 10 s under load.
	n5 := startNodeWithin(t, cfg5, rec, nil, 30*time.Second)
	createdY := createdOn(t, ncs[majority[0]], stream)
	if !createdY.After(createdX) {
		t.Fatalf("the bucket n5 started on was created %v; want after the deleted one's %v", createdY, createdX)
	}
	l := c.MetaLeader()
	if l != majority[0] && l != majority[1] {
		t.Fatalf("meta leader: server %d; want one of the majority, %d or %d", l, majority[0], majority[1])
	}
	s := c.MoveStreamLeader(t, ncs[l], stream, majority, l)

	// 3, continued. n5 frozen at Y's first lease revision at or above r.
	kv, err := js.KeyValue(ctx(t), bucket)
	if err != nil {
		t.Fatal(err)
	}
	var first, frozen uint64
	natstest.WaitFor(t, cfg5.LeaseTTL+15*time.Second, func() bool {
		rev, ok := leaseRevision(kv)
		if !ok {
			return false
		}
		if first == 0 {
			first = rev
		}
		if rev < r {
			return false
		}
		// Cut only once n5 holds the write: cut between its landing and
		// its acknowledgement, n5 would never have led on it.
		if l, ok := n5.Lease(); !ok || l.Revision != rev || !n5.IsLeader() {
			return false
		}
		proxy5.Blackhole()
		frozen = rev
		return true
	}, "n5 did not write the lease up to revision %d", r)
	if first <= r && frozen != r {
		t.Fatalf("the schedule was missed: n5 was frozen at revision %d, past n2's %d", frozen, r)
	}
	holdFor(t, 2*cfg5.RenewInterval, func() bool {
		rev, ok := leaseRevision(kv)
		return !ok || rev == frozen
	}, "the lease at n5's frozen revision")
	if !n5.IsLeader() {
		t.Fatal("n5 does not lead once frozen")
	}

	// 4. z answers for X, and n2 follows its own record there.
	jsz, err := jetstream.New(cfg2.Conn)
	if err != nil {
		t.Fatal(err)
	}
	natstest.WaitFor(t, 30*time.Second, func() bool {
		return createdAnswer(jsz, stream).Equal(createdX)
	}, "server %d, cut off, does not answer for the deleted bucket", z)

	// 5. Heal z to s just after z campaigned for the meta group.
	term := c.MetaTerm(z)
	natstest.WaitFor(t, 15*time.Second, func() bool { return c.MetaTerm(z) > term }, "server %d, cut off, did not campaign for the meta group", z)
	if got := c.MetaLeader(); got != l || !c.Server(s).NATS().JetStreamIsStreamLeader("$G", stream) {
		t.Fatalf("meta leader: server %d, and server %d leads the stream: %v; want server %d, true", got, s, c.Server(s).NATS().JetStreamIsStreamLeader("$G", stream), l)
	}
	for _, p := range c.RouteProxies(z, s) {
		p.(*faultproxy.Proxy).Delay(100 * time.Millisecond)
	}
	healed := time.Now()
	t.Logf("X created %v, n2's record at revision %d; Y created %v, first lease revision %d, n5 frozen at %d; server %d healed to server %d (meta leader: server %d)",
		createdX, r, createdY, first, frozen, z, s, l)

	// 6. Whatever n2 does, n5 leads until its deadline.
	natstest.WaitFor(t, cfg5.LeaseTTL+5*time.Second, func() bool { return !n5.IsLeader() }, "n5 still leads")
	natstest.WaitFor(t, 5*time.Second, func() bool { return rec.count("n5", "lose") >= rec.count("n5", "become") }, "n5's OnLoseLeadership did not run")
	if last := rec.lastTenure(); last != nil && last.node == "n2" && last.start.After(healed) {
		t.Logf("n2 became leader %v after the heal, at epoch %d", last.start.Sub(healed).Round(time.Millisecond), last.epoch)
	}
	proxy5.Restore()
	for _, j := range majority {
		c.HealRoutes(z, j)
	}
	rec.check(t)
}

// streamCreated is the creation time of stream, as nc's server answers.
func createdOn(t *testing.T, nc *nats.Conn, stream string) time.Time {
	t.Helper()
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	created := createdAnswer(js, stream)
	if created.IsZero() {
		t.Fatalf("no stream info for %s", stream)
	}
	return created
}

// streamCreatedOK is the creation time of stream in the first answer to
// a stream info request, zero if none came within a second.
func createdAnswer(js jetstream.JetStream, stream string) time.Time {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	st, err := js.Stream(ctx, stream)
	if err != nil {
		return time.Time{}
	}
	return st.CachedInfo().Created
}

// leaseRevision is the lease key's latest revision, as kv's server
// answers within a second.
func leaseRevision(kv jetstream.KeyValue) (uint64, bool) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	e, err := kv.Get(ctx, wire.LeaseKey)
	if err != nil {
		return 0, false
	}
	return e.Revision(), true
}
