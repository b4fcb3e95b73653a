package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	cluster "github.com/ozanturksever/go-cluster"
	"github.com/ozanturksever/go-cluster/internal/bucketmeta"
	"github.com/ozanturksever/go-cluster/internal/natstest"
	"github.com/ozanturksever/go-cluster/internal/store"
	"github.com/ozanturksever/go-cluster/internal/wire"
)

// initCLI runs the CLI against srv; initJSON runs it with --json and
// decodes the report, failing the test unless it exits 0.
type initCLI struct {
	t   *testing.T
	bin string
	srv *natstest.Server
}

func (c initCLI) run(args ...string) result {
	c.t.Helper()
	return runCLI(c.t, c.bin, nil, append([]string{"-s", c.srv.URL()}, args...)...)
}

func (c initCLI) json(args ...string) initReport {
	c.t.Helper()
	r := c.run(append(args, "--json")...)
	var rep initReport
	if r.code != 0 || json.Unmarshal([]byte(r.stdout), &rep) != nil {
		c.t.Fatalf("%v: exit %d, %q %q", args, r.code, r.stdout, r.stderr)
	}
	return rep
}

// bucketMeta is the parsed metadata of the bucket of cluster id.
func bucketMeta(ctx context.Context, t *testing.T, js jetstream.JetStream, id string) bucketmeta.Meta {
	t.Helper()
	s, err := js.Stream(ctx, "KV_"+wire.BucketName(id))
	if err != nil {
		t.Fatal(err)
	}
	m, err := bucketmeta.Parse(s.CachedInfo().Config.Metadata)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// init --lease-ttl gives a new bucket its TTL and changes that of an
// existing one, the ceiling never going down; out of range, it is a usage
// error.
func TestCLIInitLeaseTTL(t *testing.T) {
	t.Parallel()
	natstest.CheckLeaks(t)
	srv := natstest.RunServer(t)
	js, err := jetstream.New(srv.Connect(t))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cli := initCLI{t, buildCLI(t), srv}

	rep := cli.json("init", "--cluster", "ttl", "--lease-ttl", "2s")
	if !rep.Created || rep.Election.LeaseTTLMs != 2000 || rep.Election.LeaseTTLMaxMs != 2000 || rep.Election.Protocol != wire.BucketProtocol || rep.Before != nil {
		t.Errorf("init --lease-ttl 2s of a new bucket: %+v", rep)
	}

	r := cli.run("init", "--cluster", "ttl", "--lease-ttl", "4s")
	if r.code != 0 || !strings.Contains(r.stdout, "changed the lease TTL from 2s to 4s, the ceiling from 2s to 4s") ||
		!strings.Contains(r.stdout, fmt.Sprintf("election: lease TTL 4s, ceiling 4s, protocol %d", wire.BucketProtocol)) {
		t.Errorf("init --lease-ttl 4s: exit %d, %q %q", r.code, r.stdout, r.stderr)
	}

	rep = cli.json("init", "--cluster", "ttl", "--lease-ttl", "1s")
	if rep.Created || rep.Before == nil || rep.Before.LeaseTTLMs != 4000 || rep.Election.LeaseTTLMs != 1000 || rep.Election.LeaseTTLMaxMs != 4000 {
		t.Errorf("init --lease-ttl 1s, lowering: %+v (before %+v)", rep, rep.Before)
	}
	if m := bucketMeta(ctx, t, js, "ttl"); m.LeaseTTL != time.Second || m.MaxTTL != 4*time.Second {
		t.Errorf("the bucket after lowering the TTL: %+v; want 1s, ceiling 4s", m)
	}
	if rep := cli.json("init", "--cluster", "ttl", "--lease-ttl", "1s"); rep.Before != nil {
		t.Errorf("init with the TTL the bucket has reported a change: before %+v", rep.Before)
	}

	for _, args := range [][]string{
		{"--lease-ttl", "100ms"}, {"--lease-ttl", "25h"}, {"--lease-ttl", "1500500us"}, {"--wait"},
	} {
		if r := cli.run(append([]string{"init", "--cluster", "ttl"}, args...)...); r.code != 2 {
			t.Errorf("init %v: exit %d, %q; want 2", args, r.code, r.stderr)
		}
	}
	if m := bucketMeta(ctx, t, js, "ttl"); m.LeaseTTL != time.Second {
		t.Errorf("a refused init changed the TTL: %+v", m)
	}
}

// A TTL changed on a live cluster reaches it at the next acquisition of a
// node that has read it, with no restart: the tenure running keeps its
// own; the leader, which reads the bucket's metadata again once it has
// stepped down, uses the new TTL in its next tenure.
func TestCLIInitLeaseTTLReachesTheNextTenure(t *testing.T) {
	t.Parallel()
	natstest.CheckLeaks(t)
	srv := natstest.RunServer(t)
	cli := initCLI{t, buildCLI(t), srv}
	cli.json("init", "--cluster", "live", "--lease-ttl", "3s")
	a := startMember(t, srv, "live", "a", func(c *cluster.Config) { c.Cooldown = 100 * time.Millisecond })
	natstest.WaitFor(t, 15*time.Second, a.node.IsLeader, "a did not lead")
	kv := bindBucket(t, srv, "live")
	first := currentLease(t, kv)
	if first.TTLMillis != 3000 {
		t.Fatalf("the first tenure's record carries ttl_ms %d, want 3000", first.TTLMillis)
	}

	cli.json("init", "--cluster", "live", "--lease-ttl", "4s")
	changed := time.Now()
	// Two TTLs and renewals later, the tenure still says its own TTL.
	natstest.WaitFor(t, 15*time.Second, func() bool {
		return time.Since(changed) > 2*3*time.Second && currentLease(t, kv).Revision >= first.Revision+2
	}, "a did not renew")
	if l := currentLease(t, kv); l.TTLMillis != 3000 || l.Epoch != first.Epoch {
		t.Errorf("the tenure running changed: %+v; want epoch %d, ttl_ms 3000", l, first.Epoch)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := a.node.StepDown(ctx); err != nil {
		t.Fatal(err)
	}
	natstest.WaitFor(t, 20*time.Second, func() bool { return a.node.IsLeader() && a.node.Epoch() > first.Epoch }, "a did not lead again after its cooldown")
	if l := currentLease(t, kv); l.TTLMillis != 4000 {
		t.Errorf("the next tenure's record: %+v; want ttl_ms 4000", l)
	}
}

// init --rebase gives a running cluster's bucket a new epoch base: the
// nodes start over, and the next leader's epoch is above the new base.
func TestCLIInitRebase(t *testing.T) {
	t.Parallel()
	natstest.CheckLeaks(t)
	srv := natstest.RunServer(t)
	cli := initCLI{t, buildCLI(t), srv}
	cli.json("init", "--cluster", "rb", "--lease-ttl", "2s")
	a := startMember(t, srv, "rb", "a", func(c *cluster.Config) { c.LeaseTTL, c.RenewInterval = 2*time.Second, 500*time.Millisecond })
	natstest.WaitFor(t, 10*time.Second, a.node.IsLeader, "a did not lead")
	first := a.node.Epoch()

	rep := cli.json("init", "--cluster", "rb", "--rebase")
	if rep.Before == nil || !rep.Election.Rebased || rep.Election.EpochBase <= rep.Before.EpochBase || rep.Election.EpochBase <= first ||
		rep.Election.LeaseTTLMs != 2000 {
		t.Fatalf("init --rebase: %+v (before %+v)", rep, rep.Before)
	}
	natstest.WaitFor(t, 15*time.Second, func() bool { return a.node.IsLeader() && a.node.Epoch() > rep.Election.EpochBase },
		"no leader above the new base %d (epoch %d)", rep.Election.EpochBase, a.node.Epoch())

	r := cli.run("init", "--cluster", "rb", "--rebase")
	if r.code != 0 || !strings.Contains(r.stdout, "rebased: epoch base ") || !strings.Contains(r.stdout, "(rebased)") {
		t.Errorf("init --rebase again: exit %d, %q %q", r.code, r.stdout, r.stderr)
	}
}

// init --upgrade moves a bucket of protocol 1 whose nodes are stopped:
// it refuses while the key names a holder whose lease runs, waits it out
// with --wait, and leaves a released record the first new node takes at
// once. A bucket of protocol 1 is refused without --upgrade.
func TestCLIInitUpgrade(t *testing.T) {
	t.Parallel()
	natstest.CheckLeaks(t)
	srv := natstest.RunServer(t)
	js, err := jetstream.New(srv.Connect(t))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cli := initCLI{t, buildCLI(t), srv}
	old := func(id string) jetstream.KeyValue { // a bucket as protocol 1 made it: no metadata
		kv, err := js.CreateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: wire.BucketName(id), History: 8, LimitMarkerTTL: time.Second})
		if err != nil {
			t.Fatal(err)
		}
		return kv
	}
	v1 := func(node string, expires time.Time, ttl time.Duration) []byte {
		return []byte(fmt.Sprintf(`{"node_id":%q,"epoch":%d,"expires_at":%q,"acquired_at":%q,"ttl_ms":%d}`,
			node, time.Now().UnixMicro()-int64(time.Hour/time.Microsecond), expires.UTC().Format(time.RFC3339Nano),
			expires.Add(-time.Hour).UTC().Format(time.RFC3339Nano), ttl.Milliseconds()))
	}

	kv := old("up")
	if _, err := kv.Put(ctx, wire.LeaseKey, v1("old-1", time.Now().Add(time.Hour), 10*time.Second)); err != nil {
		t.Fatal(err)
	}
	if r := cli.run("init", "--cluster", "up"); r.code != 1 || !strings.Contains(r.stderr, "no go-cluster.lease_ttl metadata") || !strings.Contains(r.stderr, "init --upgrade") {
		t.Errorf("init of a bucket of protocol 1: exit %d, %q", r.code, r.stderr)
	}
	if r := cli.run("init", "--cluster", "up", "--upgrade"); r.code != 1 || !strings.Contains(r.stderr, "upgrade refused") || !strings.Contains(r.stderr, "held by old-1") {
		t.Errorf("init --upgrade over a running lease: exit %d, %q", r.code, r.stderr)
	}
	if m := bucketMeta(ctx, t, js, "up"); m != (bucketmeta.Meta{}) {
		t.Errorf("the refused upgrade wrote metadata %+v", m)
	}

	// The old nodes stop: the last one releases.
	rev, err := kv.Put(ctx, wire.LeaseKey, v1("", time.Now(), 10*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	rep := cli.json("init", "--cluster", "up", "--upgrade", "--lease-ttl", "3s")
	// The epoch base: the server's time at the upgrade, above every epoch
	// of protocol 1 (from the creation in µs, one more per tenure).
	base := rep.Election.EpochBase
	if u := rep.Upgrade; u == nil || !u.Rewritten || u.Epoch != base+int64(rev)+1 || base <= bucketCreated(ctx, t, js, "up").UnixMicro() || !strings.Contains(u.Found, "released record of protocol 1") {
		t.Fatalf("init --upgrade: %+v, base %d", rep.Upgrade, base)
	}
	if rep.Before == nil || rep.Before.Protocol != 0 || rep.Before.LeaseTTLMs != 0 ||
		rep.Election != (electionMeta{LeaseTTLMs: 3000, LeaseTTLMaxMs: 3000, Protocol: wire.BucketProtocol, EpochBase: base, Rebased: true}) {
		t.Errorf("init --upgrade's metadata: %+v, before %+v", rep.Election, rep.Before)
	}
	start := time.Now()
	n := startMember(t, srv, "up", "n")
	natstest.WaitFor(t, 2*time.Second, n.node.IsLeader, "the first new node did not take the released record at once")
	if e := n.node.Epoch(); e != rep.Upgrade.Epoch+1 {
		t.Errorf("the first new leader's epoch %d, want the upgrade's %d + 1", e, rep.Upgrade.Epoch)
	}
	t.Logf("the first new node led %v after its start", time.Since(start))

	r := cli.run("init", "--cluster", "up", "--upgrade")
	if r.code != 0 || !strings.Contains(r.stdout, fmt.Sprintf("upgrade: the lease key held a record of protocol %d", wire.Protocol)) || !strings.Contains(r.stdout, "left as it is") {
		t.Errorf("init --upgrade of a moved bucket: exit %d, %q %q", r.code, r.stdout, r.stderr)
	}

	// --wait: a holder that stopped without releasing, whose record says
	// it runs for an hour more by its clock, is waited out for its ttl_ms.
	kv = old("waited")
	if _, err := kv.Put(ctx, wire.LeaseKey, v1("old-2", time.Now().Add(time.Hour), 500*time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	r = cli.run("init", "--cluster", "waited", "--upgrade", "--wait")
	if r.code != 0 || !strings.Contains(r.stdout, fmt.Sprintf("marked for protocol %d, was unmarked", wire.BucketProtocol)) ||
		!strings.Contains(r.stdout, "held by old-2") || !strings.Contains(r.stdout, "waited 500ms for it to run out, then rewrote it") ||
		!strings.Contains(r.stdout, fmt.Sprintf("election: lease TTL 10s, ceiling 10s, protocol %d", wire.BucketProtocol)) {
		t.Errorf("init --upgrade --wait: exit %d, %q %q", r.code, r.stdout, r.stderr)
	}
}

// bindBucket binds to the bucket of cluster id on a connection of its own.
func bindBucket(t *testing.T, srv *natstest.Server, id string) jetstream.KeyValue {
	t.Helper()
	js, err := jetstream.New(srv.Connect(t))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	kv, err := js.KeyValue(ctx, wire.BucketName(id))
	if err != nil {
		t.Fatal(err)
	}
	return kv
}

// currentLease is the record the lease key holds.
func currentLease(t *testing.T, kv jetstream.KeyValue) wire.Lease {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	e, err := kv.Get(ctx, wire.LeaseKey)
	if err != nil {
		t.Fatal(err)
	}
	l, err := wire.DecodeLease(e.Value(), e.Revision())
	if err != nil {
		t.Fatalf("the lease key holds %s: %v", e.Value(), err)
	}
	return l
}

// init --upgrade moves a cluster whose bucket is marked protocol 3 to 4
// while its nodes run: the cluster's ceiling into the account's bucket,
// raised to the largest of the members bucket's (5s) and the bucket's
// (3s), then the mark, then the members bucket deleted. The node leading
// leads on, a node started after follows it, and init again changes
// nothing. A cluster costs one stream afterwards.
func TestCLIInitUpgradeMovesTheCeiling(t *testing.T) {
	t.Parallel()
	natstest.CheckLeaks(t)
	srv := natstest.RunServer(t)
	js, err := jetstream.New(srv.Connect(t))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cli := initCLI{t, buildCLI(t), srv}
	const id = "legacy"
	if _, _, err := store.Create(ctx, js, id, store.Options{LeaseTTL: 3 * time.Second}); err != nil {
		t.Fatal(err)
	}
	if _, err := bucketmeta.MarkProtocol(ctx, js, wire.KVStream(wire.BucketName(id)), wire.Protocol); err != nil {
		t.Fatal(err)
	}
	if _, _, err := store.EnsureMembers(ctx, js, id, store.Options{LeaseTTL: 5 * time.Second}); err != nil {
		t.Fatal(err)
	}
	a := startMember(t, srv, id, "a")
	natstest.WaitFor(t, 10*time.Second, a.node.IsLeader, "a did not lead the cluster of protocol 3")

	rep := cli.json("init", "--cluster", id, "--upgrade")
	if rep.Before == nil || rep.Before.Protocol != wire.Protocol || rep.Election.Protocol != wire.BucketProtocol ||
		rep.Ceiling == nil || *rep.Ceiling != (ceilingReport{Bucket: wire.AccountBucketName, Created: true, CeilingMs: 5000, Moved: wire.MembersBucketName(id)}) {
		t.Fatalf("init --upgrade of a bucket of protocol 3: %+v, before %+v, ceiling %+v", rep.Election, rep.Before, rep.Ceiling)
	}
	if _, err := js.Stream(ctx, wire.KVStream(wire.MembersBucketName(id))); !errors.Is(err, jetstream.ErrStreamNotFound) {
		t.Errorf("the members bucket after the move: %v, want it deleted", err)
	}
	account, err := js.KeyValue(ctx, wire.AccountBucketName)
	if err != nil {
		t.Fatal(err)
	}
	if e, err := account.Get(ctx, wire.CeilingKey(id)); err != nil || string(e.Value()) != "5000" {
		t.Errorf("the ceiling in the account's bucket: %v, %v; want 5000 (ms)", e, err)
	}
	b := startMember(t, srv, id, "b")
	natstest.WaitFor(t, 10*time.Second, func() bool { return b.node.Leader() == "a" }, "b did not follow a after the move")
	if !a.node.IsLeader() || a.node.Err() != nil {
		t.Errorf("a after the move: leader %v, error %v", a.node.IsLeader(), a.node.Err())
	}
	if _, err := account.Get(ctx, wire.AccountMemberKey(id, "b")); err != nil {
		t.Errorf("b's member record in the account's bucket: %v", err)
	}
	r := cli.run("init", "--cluster", id, "--upgrade")
	if r.code != 0 || strings.Contains(r.stdout, "moved") || strings.Contains(r.stdout, "marked for protocol") ||
		!strings.Contains(r.stdout, "kept the cluster's TTL ceiling, 5s, in bucket go-cluster") {
		t.Errorf("init --upgrade again: exit %d, %q %q", r.code, r.stdout, r.stderr)
	}

	// A members bucket left beside a bucket marked 4 (the bucket made
	// again by this build over a cluster of protocol 3): init folds its
	// ceiling in, and warns; --upgrade deletes it.
	if _, _, err := store.EnsureMembers(ctx, js, id, store.Options{LeaseTTL: 7 * time.Second}); err != nil {
		t.Fatal(err)
	}
	r = cli.run("init", "--cluster", id)
	if r.code != 0 || !strings.Contains(r.stdout, "kept the cluster's TTL ceiling, 7s, in bucket go-cluster") ||
		!strings.Contains(r.stderr, "members-legacy of protocol 3 is still there") {
		t.Errorf("init beside a members bucket left: exit %d, %q %q", r.code, r.stdout, r.stderr)
	}
	rep = cli.json("init", "--cluster", id, "--upgrade")
	if rep.Ceiling == nil || rep.Ceiling.Moved != wire.MembersBucketName(id) || rep.Ceiling.CeilingMs != 7000 {
		t.Errorf("init --upgrade beside a members bucket left: ceiling %+v", rep.Ceiling)
	}
	if _, err := js.Stream(ctx, wire.KVStream(wire.MembersBucketName(id))); !errors.Is(err, jetstream.ErrStreamNotFound) {
		t.Errorf("the members bucket left after --upgrade: %v, want it deleted", err)
	}
}
