package cluster

// Safety regressions of the election core: a lease value that is not a
// record under mixed LeaseTTLs, a LeaseTTL others cannot decode, the bucket
// deleted and recreated under running nodes, the lease key compacted away,
// and an epoch forged at its maximum. Each breaks one of the invariants of
// docs/design.md §8: at most one tenure at a time, epochs that only grow.

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/ozanturksever/go-cluster/internal/bucketmeta"
	"github.com/ozanturksever/go-cluster/internal/faultproxy"
	"github.com/ozanturksever/go-cluster/internal/natstest"
	"github.com/ozanturksever/go-cluster/internal/store"
	"github.com/ozanturksever/go-cluster/internal/wire"
)

// TestP4GarbageOverACutOffHolderWaitsTheCeiling: b (LeaseTTL 1s) has seen a's record with
// ttl_ms 5000; a is cut off, and the key is overwritten with something that
// is not a released record. a may lead until its last renewal + 4.5s, so b
// must wait the longest TTL it has seen on the key, not its own 1s.
func TestP4GarbageOverACutOffHolderWaitsTheCeiling(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name      string
		overwrite func(context.Context, jetstream.KeyValue) error
	}{
		{"garbage", func(c context.Context, kv jetstream.KeyValue) error {
			_, err := kv.Put(c, wire.LeaseKey, []byte(`{not json`))
			return err
		}},
		{"deleted", func(c context.Context, kv jetstream.KeyValue) error { return kv.Delete(c, wire.LeaseKey) }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv, rec, id := setup(t)
			acfg := testConfig(id, "a", srv.URL())
			acfg.LeaseTTL, acfg.RenewInterval = 5*time.Second, time.Second
			a, proxy := proxiedNode(t, srv, acfg, rec)
			waitOneLeader(t, []*Node{a}, 15*time.Second)
			b := startNode(t, testConfig(id, "b", srv.URL()), rec, nil) // LeaseTTL 1s
			natstest.WaitFor(t, 3*time.Second, func() bool {
				l, ok := b.Lease()
				return ok && l.NodeID == "a" && l.TTLMillis == 5000
			}, "b did not see a's record with ttl_ms 5000")
			kv := bindKV(t, srv.URL(), id)

			proxy.Blackhole()
			cut := time.Now()
			if err := tc.overwrite(ctx(t), kv); err != nil {
				t.Fatal(err)
			}
			natstest.WaitFor(t, 12*time.Second, b.IsLeader, "b never took over")
			took, aLed := time.Since(cut).Round(time.Millisecond), a.IsLeader()
			natstest.WaitFor(t, 6*time.Second, func() bool { return rec.count("a", "lose") == 1 }, "a never ran OnLoseLeadership")
			if aLed {
				t.Errorf("b led %v after a (LeaseTTL 5s) was cut off and the lease %s, while a still led: b waited its own 1s, not the ttl_ms 5000 it had seen", took, tc.name)
			}
			rec.check(t)
			proxy.Restore()
		})
	}
}

// TestP1LeaseTTLAbove24hIsRefused: a record's ttl_ms above 24h is garbage to
// decodeLease, so a LeaseTTL above 24h must be refused where it is set.
func TestP1LeaseTTLAbove24hIsRefused(t *testing.T) {
	t.Parallel()
	cfg := func(ttl time.Duration) Config {
		return Config{ClusterID: "c", NodeID: "n", NATSURLs: []string{"nats://127.0.0.1:4222"}, LeaseTTL: ttl, RenewInterval: time.Hour}
	}
	for _, ttl := range []time.Duration{24*time.Hour + time.Millisecond, 25 * time.Hour} {
		t.Run("refused "+ttl.String(), func(t *testing.T) { checkInvalid(t, cfg(ttl), "LeaseTTL") })
	}
	t.Run("accepted 24h", func(t *testing.T) {
		c := cfg(24 * time.Hour)
		if err := c.check(); err != nil {
			t.Errorf("Validate = %v", err)
		}
		if _, err := NewNode(c, nil); err != nil {
			t.Errorf("NewNode = %v", err)
		}
		if _, err := NewObserver(c, nil); err != nil {
			t.Errorf("NewObserver = %v", err)
		}
		rec := fmt.Sprintf(`{"node_id":"a","epoch":1,"ttl_ms":%d}`, (24 * time.Hour).Milliseconds())
		if _, err := decodeLease([]byte(rec), 1); err != nil {
			t.Errorf("the record of a 24h holder is refused: %v", err)
		}
	})
	t.Run("holder above 24h", func(t *testing.T) {
		if _, err := NewNode(cfg(25*time.Hour), nil); err != nil {
			return // refused: nothing to show
		}
		srv, rec, id := setup(t)
		acfg := testConfig(id, "a", srv.URL())
		acfg.LeaseTTL, acfg.RenewInterval = 25*time.Hour, 2*time.Second
		// The consequence: b decodes a's record as garbage, waits its own 1s
		// on each revision, and a renews only every 2s.
		a := startNode(t, acfg, rec, nil)
		waitOneLeader(t, []*Node{a}, 15*time.Second)
		b := startNode(t, testConfig(id, "b", srv.URL()), rec, nil)
		started := time.Now()
		natstest.WaitFor(t, 5*time.Second, func() bool { return b.IsLeader() || b.Leader() == "a" }, "b neither follows a nor leads")
		if b.IsLeader() {
			t.Errorf("NewNode accepted LeaseTTL 25h; b read the record of a, live and renewing every 2s, as garbage and took the lease %v after starting",
				time.Since(started).Round(time.Millisecond))
		}
		rec.check(t)
	})
}

// bucketCase is where a bucket test runs: a single server or a 3-node
// JetStream cluster.
type bucketCase struct {
	url      string // client URL(s), comma-separated
	ttl      time.Duration
	replicas int
	config   func(nodeID string) Config
}

func singleServerCase(t *testing.T) (bucketCase, *recorder, string) {
	srv, rec, id := setup(t)
	return bucketCase{url: srv.URL(), ttl: testTTL, replicas: 1, config: func(n string) Config { return testConfig(id, n, srv.URL()) }}, rec, id
}

func jsClusterCase(t *testing.T) (bucketCase, *recorder, string) {
	natstest.CheckLeaks(t)
	c := natstest.RunCluster(t, 3)
	id := uniqueClusterID(t)
	cfg := clusterConfig(c, id, "x")
	return bucketCase{url: strings.Join(c.URLs(), ","), ttl: cfg.LeaseTTL, replicas: cfg.Bucket.Replicas,
		config: func(n string) Config { return clusterConfig(c, id, n) }}, newRecorder(), id
}

func (bc bucketCase) start(t *testing.T, rec *recorder, names ...string) []*Node {
	var nodes []*Node
	for _, n := range names {
		nodes = append(nodes, startNode(t, bc.config(n), rec, nil))
	}
	return nodes
}

// TestP7BucketRecreated: the bucket is deleted and created again
// under three running nodes. They must notice, the old leader must stop,
// and a leader must be elected again with an epoch above every earlier one.
func TestP7BucketRecreated(t *testing.T) {
	t.Parallel()
	bc, rec, id := singleServerCase(t)
	testBucketRecreated(t, bc, rec, id, false)
}

// TestP7BucketRecreatedNewNode: as above, and a node that starts on
// the new bucket must not lead at epoch 1 beside the old leader.
func TestP7BucketRecreatedNewNode(t *testing.T) {
	t.Parallel()
	bc, rec, id := singleServerCase(t)
	testBucketRecreated(t, bc, rec, id, true)
}

func TestP7JSClusterBucketRecreated(t *testing.T) {
	t.Parallel()
	bc, rec, id := jsClusterCase(t)
	testBucketRecreated(t, bc, rec, id, false)
}

func TestP7JSClusterBucketRecreatedNewNode(t *testing.T) {
	t.Parallel()
	bc, rec, id := jsClusterCase(t)
	testBucketRecreated(t, bc, rec, id, true)
}

func testBucketRecreated(t *testing.T, bc bucketCase, rec *recorder, id string, newNode bool) {
	nodes := bc.start(t, rec, "a", "b", "c")
	old := safetyRaiseEpoch(t, nodes, 3)
	before := rec.highestEpoch()
	loses := rec.count(old.Config().NodeID, "lose")

	safetyRecreateBucket(t, bc.url, id, bc.replicas)
	recreated := time.Now()
	if newNode {
		nodes = append(nodes, startNode(t, bc.config("d"), rec, nil))
	}
	if !safetyEventually(bc.ttl, func() bool { return rec.count(old.Config().NodeID, "lose") > loses }) {
		t.Errorf("old leader %s (epoch %d) still led one LeaseTTL (%v) after the bucket was recreated", old.Config().NodeID, before, bc.ttl)
	}
	if !safetyEventually(6*bc.ttl-time.Since(recreated), func() bool { return safetyLeadsAbove(nodes, before) }) {
		t.Errorf("6 LeaseTTLs (%v) after the bucket was recreated, no single node leads with an epoch above %d:%v",
			6*bc.ttl, before, safetyState(nodes))
	}
	safetyNoneStopped(t, nodes)
	rec.check(t)
}

// TestP2LeaseKeyCompacted: the lease key is purged and its marker
// removed, so the key is absent from a bucket that once held epochs. The
// running nodes must elect again with a higher epoch, and so must a node
// started afterwards.
func TestP2LeaseKeyCompacted(t *testing.T) {
	t.Parallel()
	bc, rec, id := singleServerCase(t)
	testLeaseKeyCompacted(t, bc, rec, id)
}

func TestP2JSClusterLeaseKeyCompacted(t *testing.T) {
	t.Parallel()
	bc, rec, id := jsClusterCase(t)
	testLeaseKeyCompacted(t, bc, rec, id)
}

func testLeaseKeyCompacted(t *testing.T, bc bucketCase, rec *recorder, id string) {
	nodes := bc.start(t, rec, "a", "b", "c")
	safetyRaiseEpoch(t, nodes, 2)
	before := rec.highestEpoch()

	kv := bindKV(t, bc.url, id)
	if err := kv.Purge(ctx(t), wire.LeaseKey); err != nil {
		t.Fatal(err)
	}
	if err := kv.PurgeDeletes(ctx(t), jetstream.DeleteMarkersOlderThan(-1)); err != nil {
		t.Fatal(err)
	}
	// Absent, unless a node has taken the key over already.
	if e, err := kv.Get(ctx(t), wire.LeaseKey); !errors.Is(err, jetstream.ErrKeyNotFound) {
		if l, derr := decodeLease(e.Value(), e.Revision()); err != nil || derr != nil || l.NodeID == "" {
			t.Fatalf("lease key after the compaction: %+v, %v, %v; want absent or a holder's record", l, err, derr)
		}
	}
	if !safetyEventually(6*bc.ttl, func() bool { return safetyLeadsAbove(nodes, before) }) {
		t.Errorf("6 LeaseTTLs (%v) after the lease key was compacted, no single node leads with an epoch above %d:%v",
			6*bc.ttl, before, safetyState(nodes))
	}
	safetyNoneStopped(t, nodes)

	// A node with no memory of the epochs: the only one left.
	d := startNode(t, bc.config("d"), rec, nil)
	for _, n := range nodes {
		stopNode(t, n)
	}
	// d may already have won when the leader released on Stop: compare
	// with the epochs of the others only (rec.check covers d's own order).
	var seen int64
	for _, tr := range rec.tenuresSnapshot() {
		if tr.node != "d" {
			seen = max(seen, tr.epoch)
		}
	}
	if !safetyEventually(6*bc.ttl, d.IsLeader) {
		t.Fatalf("new node d never led after the others stopped:%v", safetyState([]*Node{d}))
	}
	if d.Epoch() <= seen {
		t.Errorf("new node d leads at epoch %d after the lease key was compacted; epoch %d was handed out before", d.Epoch(), seen)
	}
	rec.check(t)
}

// maxEpoch is the largest int64: no epoch can follow it.
const maxEpoch = math.MaxInt64

// TestP1ForgedMaxEpochIsUnknown: a well-formed record at epoch MaxInt64 is
// outside the incarnation's range (I1): unknown. Nobody's epoch jumps to
// it, nobody stops, and the next leader's epoch counts from the revision
// it replaced, above every epoch before.
func TestP1ForgedMaxEpochIsUnknown(t *testing.T) {
	t.Parallel()
	cases := map[string]string{
		"held by ghost": fmt.Sprintf(`{"v":3,"node_id":"ghost","epoch":%d,"expires_at":"2030-01-01T00:00:00Z","acquired_at":"2024-01-01T00:00:00Z","ttl_ms":1000}`, int64(maxEpoch)),
		"released":      fmt.Sprintf(`{"v":3,"node_id":"","epoch":%d,"expires_at":"2024-01-01T00:00:00Z","acquired_at":"2024-01-01T00:00:00Z"}`, int64(maxEpoch)),
	}
	for name, forged := range cases {
		t.Run(name, func(t *testing.T) {
			srv, rec, id := setup(t)
			nodes := startNodes(t, srv, rec, id, "a", "b", "c")
			before := waitOneLeader(t, nodes, 5*time.Second).Epoch()
			kv := bindKV(t, srv.URL(), id)
			if _, err := kv.Put(ctx(t), wire.LeaseKey, []byte(forged)); err != nil {
				t.Fatal(err)
			}
			nodes = append(nodes, startNode(t, testConfig(id, "fresh", srv.URL()), rec, nil))
			if !safetyEventually(5*testTTL, func() bool { return safetyLeadsAbove(nodes, before) }) {
				t.Errorf("%v after a record with epoch MaxInt64 was written, no single node leads above %d:%v", 5*testTTL, before, safetyState(nodes))
			}
			for _, tr := range rec.tenuresSnapshot() {
				if tr.epoch <= 0 || tr.epoch == maxEpoch {
					t.Errorf("%s led at epoch %d", tr.node, tr.epoch)
				}
			}
			safetyNoneStopped(t, nodes)
			rec.check(t)
		})
	}
}

// safetyRaiseEpoch steps the leader down steps times, so that a later epoch
// of 1 shows as going back, and returns the leader after the last.
func safetyRaiseEpoch(t *testing.T, nodes []*Node, steps int) *Node {
	t.Helper()
	for range steps {
		l := waitOneLeader(t, nodes, 15*time.Second)
		epoch := l.Epoch()
		if err := l.StepDown(ctx(t)); err != nil {
			t.Fatal(err)
		}
		waitNewTenure(t, nodes, epoch)
	}
	return waitOneLeader(t, nodes, 15*time.Second)
}

// safetyRecreateBucket deletes the cluster's bucket and, in the same step,
// creates it again the way the library does (store.Create: first_seq from
// the clock), with the metadata it had.
func safetyRecreateBucket(t *testing.T, url, clusterID string, replicas int) {
	t.Helper()
	nc, err := nats.Connect(url)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	// Created again as go-cluster creates it (init, or a node with the
	// cluster's Config): with the cluster's LeaseTTL in its metadata (I2
	// in docs/design.md assumes no less).
	old, err := js.KeyValue(ctx(t), wire.BucketName(clusterID))
	if err != nil {
		t.Fatal(err)
	}
	status, err := old.Status(ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	meta := map[string]string{}
	for k, v := range status.Metadata() {
		if !strings.HasPrefix(k, "_nats.") {
			meta[k] = v
		}
	}
	if err := js.DeleteKeyValue(ctx(t), wire.BucketName(clusterID)); err != nil {
		t.Fatalf("delete bucket: %v", err)
	}
	// Right after a deletion the server can refuse for a moment ("error
	// creating store for stream", seen under load): ask again.
	ttl, err := bucketmeta.Parse(meta)
	if err != nil {
		t.Fatal(err)
	}
	var err2 error
	natstest.WaitFor(t, 5*time.Second, func() bool {
		_, _, err2 = store.Create(ctx(t), js, clusterID, store.Options{Replicas: replicas, LeaseTTL: ttl.LeaseTTL})
		return err2 == nil
	}, "recreate bucket: %v", err2)
}

// safetyLeadsAbove reports whether exactly one node leads, with an epoch
// above epoch.
func safetyLeadsAbove(nodes []*Node, epoch int64) bool {
	ls := leaders(nodes)
	return len(ls) == 1 && ls[0].Epoch() > epoch
}

func safetyNoneStopped(t *testing.T, nodes []*Node) {
	t.Helper()
	for _, n := range nodes {
		select {
		case <-n.Done():
			t.Errorf("node %s stopped: %v", n.Config().NodeID, n.Err())
		default:
		}
	}
}

// safetyEventually polls cond until it holds or d has passed, and reports
// whether it held: for conditions whose failure should not end the test
// before the recorder is checked.
func safetyEventually(d time.Duration, cond func() bool) bool {
	deadline := time.NewTimer(max(d, 0))
	defer deadline.Stop()
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for {
		if cond() {
			return true
		}
		select {
		case <-deadline.C:
			return cond()
		case <-tick.C:
		}
	}
}

// safetyState prints each node's view when formatted, so that a failure
// message shows the state at the deadline.
type safetyState []*Node

func (s safetyState) String() string {
	var b strings.Builder
	for _, n := range s {
		select {
		case <-n.Done():
			fmt.Fprintf(&b, "\n\t%s: stopped, Err=%v", n.Config().NodeID, n.Err())
			continue
		default:
		}
		fmt.Fprintf(&b, "\n\t%s: leader=%v epoch=%d sees leader %q", n.Config().NodeID, n.IsLeader(), n.Epoch(), n.Leader())
	}
	return b.String()
}

// highestEpoch is the largest epoch of any recorded tenure.
func (r *recorder) highestEpoch() int64 {
	var h int64
	for _, tr := range r.tenuresSnapshot() {
		h = max(h, tr.epoch)
	}
	return h
}

func (r *recorder) tenuresSnapshot() []tenureRecord {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]tenureRecord, 0, len(r.tenures))
	for _, tr := range r.tenures {
		out = append(out, *tr)
	}
	return out
}

// TestP4ForgedReleaseOutOfRangeWaitsTheCeiling: a released record written
// out of band (an operator's "reset") while the leader is cut off, with
// an epoch no write of this incarnation could carry: it is unknown (P1),
// so followers wait it out for the ceiling (P4) instead of leading beside
// the old leader. (A forged release in range is out of the threat model:
// docs/design.md says what it can do.)
func TestP4ForgedReleaseOutOfRangeWaitsTheCeiling(t *testing.T) {
	t.Parallel()
	srv, rec, id := setup(t)
	cfg := testConfig(id, "", srv.URL())
	cfg.LeaseTTL, cfg.RenewInterval = 2*time.Second, 500*time.Millisecond
	a, b, proxy := proxiedLeaderAndFollower(t, srv, cfg, rec)
	epoch := a.Epoch()
	kv := openKV(t, srv.URL(), id)
	proxy.Blackhole()
	forged := fmt.Sprintf(`{"v":3,"node_id":"","epoch":%d,"expires_at":"2024-01-01T00:00:00Z","acquired_at":"2024-01-01T00:00:00Z"}`, epoch+1000)
	if _, err := kv.Put(ctx(t), wire.LeaseKey, []byte(forged)); err != nil {
		t.Fatal(err)
	}
	natstest.WaitFor(t, 10*time.Second, b.IsLeader, "b never took over the forged release")
	rec.check(t) // b must not have become leader while a's tenure was live
	if b.Epoch() <= epoch {
		t.Errorf("b leads at epoch %d, want above a's %d", b.Epoch(), epoch)
	}
}

// TestP4FreshNodeWaitsOutADeletedHoldersTTL: like TestP4GarbageOverACutOffHolderWaitsTheCeiling, but the
// short-TTL node starts only after the long-TTL holder's record was
// deleted, so it never saw that TTL on the watch. The key's history still
// holds the record (found by the chaos run, seed 42): it waits that TTL out.
func TestP4FreshNodeWaitsOutADeletedHoldersTTL(t *testing.T) {
	t.Parallel()
	srv, rec, id := setup(t)
	acfg := testConfig(id, "a", srv.URL())
	acfg.LeaseTTL, acfg.RenewInterval = 5*time.Second, time.Second
	a, proxy := proxiedNode(t, srv, acfg, rec)
	waitOneLeader(t, []*Node{a}, 15*time.Second)
	kv := bindKV(t, srv.URL(), id) // binds; openKV would set History 1
	proxy.Blackhole()
	if err := kv.Delete(ctx(t), wire.LeaseKey); err != nil {
		t.Fatal(err)
	}
	b := startNode(t, testConfig(id, "b", srv.URL()), rec, nil) // LeaseTTL 1s
	natstest.WaitFor(t, 15*time.Second, b.IsLeader, "b never took over")
	rec.check(t) // b must not lead while a, cut off, still does
}

// TestP2CompactedUnderCutOffLeader: the lease key is compacted while
// its holder a (LeaseTTL 1s) is cut off, so only follower b (LeaseTTL 3s)
// remembers the epoch, and epochs run ahead of the stream's revisions (as
// after a recreated bucket). b saw a purge marker and waited 3s before
// touching it; a node c started meanwhile (LeaseTTL 1s, no memory) found
// the key absent, took the stream's last revision as its floor and led at
// epoch 4 after epoch 1001 (chaos, seed 42). A node that remembers an epoch
// writes it back at once over anything that is not a lease record.
func TestP2CompactedUnderCutOffLeader(t *testing.T) {
	t.Parallel()
	srv, rec, id := setup(t)
	kv := openKV(t, srv.URL(), id)
	a, b, proxy := highEpochLeaderAndSlowFollower(t, srv, kv, id, rec, 750*time.Millisecond)
	epoch := a.Epoch()

	proxy.Blackhole()
	if err := kv.Purge(ctx(t), wire.LeaseKey); err != nil {
		t.Fatal(err)
	}
	if err := kv.PurgeDeletes(ctx(t), jetstream.DeleteMarkersOlderThan(-1)); err != nil {
		t.Fatal(err)
	}
	c := startNode(t, testConfig(id, "c", srv.URL()), rec, nil)
	nodes := []*Node{b, c}
	leader := waitOneLeader(t, nodes, 15*time.Second)
	if leader.Epoch() <= epoch {
		t.Errorf("%s leads at epoch %d after the lease key was compacted; epoch %d was handed out before", leader.Config().NodeID, leader.Epoch(), epoch)
	}
	rec.check(t)
}

// TestP7RecreatedAfterTheProbe: the holder a (LeaseTTL 1s) is cut
// off; follower b (LeaseTTL 3s) reads the unchanged record back at half
// the TTL, finds it there, and then saw nothing more until its expiry,
// 3s after the last renewal. The bucket is deleted and created again in
// between, and a node c (LeaseTTL 1s, no memory) started on the new bucket
// led at epoch 1 before b noticed (chaos, seed 7). A follower keeps
// reading back a record whose renewals have stopped, every
// min(RenewInterval, TTL/4), until it expires.
func TestP7RecreatedAfterTheProbe(t *testing.T) {
	t.Parallel()
	srv, rec, id := setup(t)
	kv := openKV(t, srv.URL(), id)
	a, b, proxy := highEpochLeaderAndSlowFollower(t, srv, kv, id, rec, 250*time.Millisecond)
	epoch := a.Epoch()

	proxy.Blackhole()
	cut := time.Now()
	natstest.WaitFor(t, 5*time.Second, func() bool { return !a.IsLeader() }, "a did not demote")
	// Past b's read-back at half its TTL (1.5s after the last renewal).
	natstest.WaitFor(t, 5*time.Second, func() bool { return time.Since(cut) > 1700*time.Millisecond }, "")
	safetyRecreateBucket(t, srv.URL(), id, 1)
	c := startNode(t, testConfig(id, "c", srv.URL()), rec, nil)
	leader := waitOneLeader(t, []*Node{b, c}, 15*time.Second)
	if leader.Epoch() <= epoch {
		t.Errorf("%s leads at epoch %d in the recreated bucket; epoch %d was handed out before", leader.Config().NodeID, leader.Epoch(), epoch)
	}
	rec.check(t)
}

// TestP6RecreatedUnderLongTTLHolder: the holder a (LeaseTTL 3s) is
// cut off just as its bucket is deleted and created again; follower b
// (LeaseTTL 1s) and node c (LeaseTTL 1s), started on the new bucket,
// follow the bucket's TTL (I2): the new bucket's first election waits
// its ceiling less its age (P6), which covers a.
func TestP6RecreatedUnderLongTTLHolder(t *testing.T) {
	t.Parallel()
	srv, rec, id := setup(t)
	acfg := testConfig(id, "a", srv.URL())
	acfg.LeaseTTL, acfg.RenewInterval = 3*time.Second, 750*time.Millisecond
	a, proxy := proxiedNode(t, srv, acfg, rec)
	waitOneLeader(t, []*Node{a}, 10*time.Second)
	b := startNode(t, testConfig(id, "b", srv.URL()), rec, nil)
	natstest.WaitFor(t, 5*time.Second, func() bool { return b.Leader() == "a" }, "b did not see a")
	epoch := a.Epoch()

	proxy.Blackhole()
	safetyRecreateBucket(t, srv.URL(), id, 1)
	c := startNode(t, testConfig(id, "c", srv.URL()), rec, nil)
	leader := waitOneLeader(t, []*Node{b, c}, 15*time.Second)
	if leader.Epoch() <= epoch {
		t.Errorf("%s leads at epoch %d in the recreated bucket; epoch %d was handed out before", leader.Config().NodeID, leader.Epoch(), epoch)
	}
	rec.check(t) // nobody leads while a, cut off, still does
}

// TestP5ForgedReleaseSeenFirst: like TestP4ForgedReleaseOutOfRangeWaitsTheCeiling, but the node that
// meets the forged release starts after it was written, so the release is
// the first thing it sees. A release seen first was taken at once (a
// clean restart of the whole cluster finds its own release there), beside
// the holder it was forged over (found by the simulator, seed 648). Now
// the key's history must show the release handing back the record before
// it; anything else is waited out.
func TestP5ForgedReleaseSeenFirst(t *testing.T) {
	t.Parallel()
	srv, rec, id := setup(t)
	cfg := testConfig(id, "a", srv.URL())
	cfg.LeaseTTL, cfg.RenewInterval = 2*time.Second, 500*time.Millisecond
	a, proxy := proxiedNode(t, srv, cfg, rec)
	waitOneLeader(t, []*Node{a}, 10*time.Second)
	epoch := a.Epoch()
	kv := bindKV(t, srv.URL(), id)
	proxy.Blackhole()
	forged := fmt.Sprintf(`{"v":3,"node_id":"","epoch":%d,"expires_at":"2024-01-01T00:00:00Z","acquired_at":"2024-01-01T00:00:00Z"}`, epoch+1000)
	if _, err := kv.Put(ctx(t), wire.LeaseKey, []byte(forged)); err != nil {
		t.Fatal(err)
	}
	c := startNode(t, testConfig(id, "c", srv.URL()), rec, nil)
	natstest.WaitFor(t, 10*time.Second, c.IsLeader, "c never took over the forged release")
	rec.check(t) // c must not lead while a, cut off, still does
}

// TestP2BucketDeletedThenCreatedAgain: the bucket stays deleted for
// a moment before it is created again. Nodes that found it gone stopped at
// once with ErrBucketDeleted, taking their memory of the epoch with them,
// and the new bucket started again at epoch 1 (chaos, seed 7). They now
// wait for it (internal/election/gone.go) and carry the epoch into it.
func TestP2BucketDeletedThenCreatedAgain(t *testing.T) {
	t.Parallel()
	bucketGoneThenBack(t, 2*time.Second)
}

// bucketGoneThenBack deletes the bucket of three running nodes, creates it
// again after gone, and checks that no node stopped meanwhile and that the
// next leader's epoch is above the last one handed out before.
func bucketGoneThenBack(t *testing.T, gone time.Duration) {
	t.Helper()
	srv, rec, id := setup(t)
	nodes := startNodes(t, srv, rec, id, "a", "b", "c")
	leader := waitOneLeader(t, nodes, 5*time.Second)
	epoch := leader.Epoch()
	nc := srv.Connect(t)
	js, _ := jetstream.New(nc)
	if err := js.DeleteKeyValue(ctx(t), wire.BucketName(id)); err != nil {
		t.Fatal(err)
	}
	natstest.WaitFor(t, 3*time.Second, func() bool { return len(leaders(nodes)) == 0 }, "a node still leads with its bucket deleted")
	// Every node finds the bucket gone (the leader through its renewals,
	// followers when they read the stalled lease back) before it comes back.
	lost := time.Now()
	natstest.WaitFor(t, gone+3*time.Second, func() bool { return time.Since(lost) > gone }, "")
	safetyNoneStopped(t, nodes)
	if _, _, err := store.Create(ctx(t), js, id, store.Options{LeaseTTL: testTTL}); err != nil {
		t.Fatal(err)
	}
	l := waitOneLeader(t, nodes, 15*time.Second)
	if l.Epoch() <= epoch {
		t.Errorf("%s leads at epoch %d in the bucket created again; epoch %d was handed out before", l.Config().NodeID, l.Epoch(), epoch)
	}
	safetyNoneStopped(t, nodes)
	rec.check(t)
}

// highEpochLeaderAndSlowFollower starts leader a (LeaseTTL 1s, behind a
// fault proxy) at an epoch above 1000, well above the stream's revisions
// (as after a recreated bucket), and follower b with LeaseTTL 3s and
// bRenew, once b follows a.
func highEpochLeaderAndSlowFollower(t *testing.T, srv *natstest.Server, kv jetstream.KeyValue, id string, rec *recorder, bRenew time.Duration) (a, b *Node, proxy *faultproxy.Proxy) {
	t.Helper()
	now := time.Now().UTC()
	first := firstEpoch(t, srv.URL(), id) // a release at the bucket's first revision, its epoch the first
	if _, err := kv.Create(ctx(t), wire.LeaseKey, mustEncode(Lease{Version: wire.Protocol, Epoch: first, AcquiredAt: now, ExpiresAt: now})); err != nil {
		t.Fatal(err)
	}
	a, proxy = proxiedNode(t, srv, testConfig(id, "a", srv.URL()), rec)
	waitOneLeader(t, []*Node{a}, 5*time.Second)
	bcfg := testConfig(id, "b", srv.URL())
	bcfg.LeaseTTL, bcfg.RenewInterval = 3*time.Second, bRenew
	b = startNode(t, bcfg, rec, nil)
	natstest.WaitFor(t, 5*time.Second, func() bool { return b.Leader() == "a" }, "b did not see a")
	return a, b, proxy
}

// TestP2PurgedWhileTheLastLeaderIsCutOff: c remembers epoch 1
// and is cut off; b takes epoch 2 and is cut off with a; the lease key is
// compacted. c comes back, finds the key absent, writes its floor at epoch
// 1 and took that over at epoch 2: b's epoch again (simulator, seeds 19
// and 20). A floor record's revision is above every record written
// before it, whose epochs are at most their revisions: taking over a
// floor counts from its revision too.
func TestP2PurgedWhileTheLastLeaderIsCutOff(t *testing.T) {
	t.Parallel()
	srv, rec, id := setup(t)
	kv := openKV(t, srv.URL(), id)
	a, pa := proxiedNode(t, srv, testConfig(id, "a", srv.URL()), rec)
	waitOneLeader(t, []*Node{a}, 5*time.Second)
	c, pc := proxiedNode(t, srv, testConfig(id, "c", srv.URL()), rec)
	natstest.WaitFor(t, 5*time.Second, func() bool { return c.Leader() == "a" }, "c did not see a")
	pc.Blackhole()

	b, pb := proxiedNode(t, srv, testConfig(id, "b", srv.URL()), rec)
	natstest.WaitFor(t, 5*time.Second, func() bool { return b.Leader() == "a" }, "b did not see a")
	if err := a.StepDownTo(ctx(t), "b"); err != nil {
		t.Fatal(err)
	}
	natstest.WaitFor(t, 5*time.Second, func() bool { return b.IsLeader() }, "b did not lead")
	highest := b.Epoch()
	pa.Blackhole()
	pb.Blackhole()
	natstest.WaitFor(t, 5*time.Second, func() bool { return !b.IsLeader() }, "b did not demote")
	if err := kv.Purge(ctx(t), wire.LeaseKey); err != nil {
		t.Fatal(err)
	}
	if err := kv.PurgeDeletes(ctx(t), jetstream.DeleteMarkersOlderThan(-1)); err != nil {
		t.Fatal(err)
	}

	pc.Restore()
	natstest.WaitFor(t, 15*time.Second, func() bool { return c.IsLeader() }, "c did not lead")
	if got := c.Epoch(); got <= highest {
		t.Errorf("c leads at epoch %d after the lease key was compacted; epoch %d was handed out before", got, highest)
	}
	rec.check(t)
}

// TestP2BucketGoneLongerThanAGrace: the bucket stays deleted for 8s
// (the JetStream cluster could not place it again: chaos, seed 42, one
// hour, 23s gone). Every node stopped with ErrBucketDeleted after a grace
// of 5s, their supervisor started them again with no memory, and the
// bucket they created began again at epoch 1, below fencing tokens already
// handed out. A node waits for its bucket for as long as it runs.
func TestP2BucketGoneLongerThanAGrace(t *testing.T) {
	t.Parallel()
	bucketGoneThenBack(t, 8*time.Second)
}
