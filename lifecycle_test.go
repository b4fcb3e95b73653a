package cluster

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/ozanturksever/go-cluster/internal/natstest"
	"github.com/ozanturksever/go-cluster/internal/wire"
)

func TestObserverFollowsAndNeverCampaigns(t *testing.T) {
	t.Parallel()
	srv, rec, id := setup(t)
	obs, err := NewObserver(testConfig(id, "watcher", srv.URL()), rec.hooks("watcher", func() int64 { return 0 }, nil))
	if err != nil {
		t.Fatal(err)
	}
	if err := obs.Start(ctx(t)); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stopNode(t, obs) })

	// Alone, it never leads, even with the lease free for many TTLs.
	hold := time.Now().Add(3 * testTTL)
	natstest.WaitFor(t, 3*testTTL+5*time.Second, func() bool {
		if obs.IsLeader() || obs.Leader() != "" {
			t.Fatalf("observer led or saw a leader: %q", obs.Leader())
		}
		return time.Now().After(hold)
	}, "hold")

	wait := make(chan string, 1)
	go func() {
		c, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		l, _ := obs.WaitForLeader(c)
		wait <- l
	}()
	a := startNode(t, testConfig(id, "a", srv.URL()), rec, nil)
	if got := <-wait; got != "a" {
		t.Fatalf("WaitForLeader = %q, want a", got)
	}
	natstest.WaitFor(t, 2*time.Second, func() bool { return rec.count("watcher", "leader:a") == 1 }, "observer's OnLeaderChange(a) not called")
	if err := obs.StepDown(ctx(t)); !errors.Is(err, ErrNotLeader) {
		t.Errorf("observer StepDown = %v, want ErrNotLeader", err)
	}
	if _, err := obs.ValidateLeadership(ctx(t)); !errors.Is(err, ErrNotLeader) {
		t.Errorf("observer ValidateLeadership = %v, want ErrNotLeader", err)
	}
	// The leader crashes (its connection closes without release): the
	// observer reports the expiry.
	_ = a
	if rec.count("watcher", "become") != 0 {
		t.Error("observer got OnBecomeLeader")
	}
	rec.check(t)
}

func TestValidateLeadershipFencing(t *testing.T) {
	t.Parallel()
	srv, rec, id := setup(t)
	a := startNode(t, testConfig(id, "a", srv.URL()), rec, nil)
	waitOneLeader(t, []*Node{a}, 15*time.Second)
	b := startNode(t, testConfig(id, "b", srv.URL()), rec, nil)
	natstest.WaitFor(t, 2*time.Second, func() bool { return b.Leader() == "a" }, "b did not see a")

	first := firstEpoch(t, srv.URL(), id)
	epoch, err := a.ValidateLeadership(ctx(t))
	if err != nil || epoch != first {
		t.Fatalf("leader ValidateLeadership = %d, %v; want %d, nil", epoch, err, first)
	}
	if _, err := b.ValidateLeadership(ctx(t)); !errors.Is(err, ErrNotLeader) {
		t.Fatalf("follower ValidateLeadership = %v, want ErrNotLeader", err)
	}
	if err := a.StepDown(ctx(t)); err != nil {
		t.Fatal(err)
	}
	natstest.WaitFor(t, 5*time.Second, b.IsLeader, "b did not take over")
	if _, err := a.ValidateLeadership(ctx(t)); !errors.Is(err, ErrNotLeader) {
		t.Fatalf("old leader ValidateLeadership = %v, want ErrNotLeader", err)
	}
	if e, err := b.ValidateLeadership(ctx(t)); err != nil || e != first+1 {
		t.Fatalf("new leader ValidateLeadership = %d, %v; want %d, nil", e, err, first+1)
	}
	rec.check(t)
}

func TestLeaderCrashFollowerTakesOverAfterTTL(t *testing.T) {
	t.Parallel()
	srv, rec, id := setup(t)
	// a's connection is the test's to close: a crash without release.
	nc := srv.Connect(t)
	cfg := testConfig(id, "a")
	cfg.Conn = nc
	a := startNode(t, cfg, rec, nil)
	waitOneLeader(t, []*Node{a}, 15*time.Second)
	b := startNode(t, testConfig(id, "b", srv.URL()), rec, nil)
	c := startNode(t, testConfig(id, "c", srv.URL()), rec, nil)
	natstest.WaitFor(t, 2*time.Second, func() bool { return b.Leader() == "a" && c.Leader() == "a" }, "followers did not see a")

	crashed := time.Now()
	nc.Close()
	select {
	case <-a.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("a did not stop after its connection closed")
	}
	if a.IsLeader() {
		t.Fatal("a still leader after crash")
	}
	if !errors.Is(a.Err(), nats.ErrConnectionClosed) {
		t.Errorf("a.Err() = %v, want connection closed", a.Err())
	}
	l := waitOneLeader(t, []*Node{b, c}, 5*time.Second)
	// The followers' clocks started at the last renewal they saw, at most
	// one RenewInterval before the crash.
	if waited := time.Since(crashed); waited < testTTL-testRenew {
		t.Errorf("successor %v after the crash, before LeaseTTL-RenewInterval: the lease was not left to expire", waited)
	}
	if want := firstEpoch(t, srv.URL(), id) + rec.tenuresBelow(l.Epoch()); l.Epoch() != want {
		t.Errorf("epoch = %d, want %d (the bucket's first plus one per tenure before)", l.Epoch(), want)
	}
	rec.check(t)
}

// TestBucketDeletedStopsAfterGrace: the leader stops leading at once; every
// node stops with ErrBucketDeleted once the bucket has stayed deleted for
// the grace (5s here).
// A node whose bucket is deleted leads nothing and waits for it, for as
// long as it runs (rule 29); Stop ends the wait at once.
func TestBucketDeletedIsWaitedForUntilStop(t *testing.T) {
	t.Parallel()
	srv, rec, id := setup(t)
	nodes := startNodes(t, srv, rec, id, "a", "b")
	leader := waitOneLeader(t, nodes, 5*time.Second)
	nc := srv.Connect(t)
	js, _ := jetstream.New(nc)
	if err := js.DeleteKeyValue(ctx(t), wire.BucketName(id)); err != nil {
		t.Fatal(err)
	}
	natstest.WaitFor(t, 3*time.Second, func() bool { return !leader.IsLeader() }, "the leader still leads 3s after its bucket was deleted")
	if _, err := leader.ValidateLeadership(ctx(t)); !errors.Is(err, ErrNotLeader) {
		t.Errorf("ValidateLeadership with the bucket gone = %v, want ErrNotLeader", err)
	}
	for _, n := range nodes {
		select {
		case <-n.Done():
			t.Fatalf("%s stopped: %v", n.Config().NodeID, n.Err())
		default:
		}
		stopCtx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		err := n.Stop(stopCtx)
		cancel()
		if err != nil {
			t.Errorf("Stop of %s while it waits for its bucket = %v", n.Config().NodeID, err)
		}
		if n.Err() != nil {
			t.Errorf("%s: Err() = %v after Stop, want nil", n.Config().NodeID, n.Err())
		}
	}
	rec.check(t)
}

func TestServerRestartKeepsOneLeader(t *testing.T) {
	t.Parallel()
	srv, rec, id := setup(t)
	nodes := startNodes(t, srv, rec, id, "a", "b", "c")
	before := waitOneLeader(t, nodes, 5*time.Second)
	srv.Restart(t)
	after := waitOneLeader(t, nodes, 15*time.Second)
	if after.Epoch() < before.Epoch() {
		t.Errorf("epoch went back across a restart: %d -> %d", before.Epoch(), after.Epoch())
	}
	rec.check(t)
}

func TestStartContextBoundsStartupOnly(t *testing.T) {
	t.Parallel()
	srv, rec, id := setup(t)
	startCtx, cancel := context.WithCancel(context.Background())
	n, err := NewNode(stableConfig(id, "a", srv.URL()), rec.hooks("a", func() int64 { return 0 }, nil))
	if err != nil {
		t.Fatal(err)
	}
	if err := n.Start(startCtx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stopNode(t, n) })
	cancel() // must not end later KV calls
	natstest.WaitFor(t, 5*time.Second, n.IsLeader, "never led")
	hold := time.Now().Add(2 * 3 * time.Second)
	natstest.WaitFor(t, 10*time.Second, func() bool {
		if !n.IsLeader() {
			t.Fatal("lost leadership after Start's ctx was cancelled")
		}
		return time.Now().After(hold)
	}, "hold")
}

func TestStartFailsClearly(t *testing.T) {
	t.Parallel()
	natstest.CheckLeaks(t)
	n, err := NewNode(Config{ClusterID: "x", NodeID: "a", NATSURLs: []string{"nats://127.0.0.1:1"}, Logger: testLogger()}, nil)
	if err != nil {
		t.Fatal(err)
	}
	c, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if err := n.Start(c); err == nil {
		t.Fatal("Start against a closed port succeeded")
	}
	if err := n.Stop(ctx(t)); err != nil {
		t.Errorf("Stop after failed Start: %v", err)
	}
	if err := (&Node{}).Stop(ctx(t)); !errors.Is(err, ErrNotStarted) {
		t.Errorf("Stop before Start = %v, want ErrNotStarted", err)
	}
}

func TestEveryURLIsUsed(t *testing.T) {
	t.Parallel()
	natstest.CheckLeaks(t)
	srv := natstest.RunServer(t)
	rec := newRecorder()
	// The first URL refuses connections; the node must use the second.
	cfg := testConfig(uniqueClusterID(t), "a", "nats://127.0.0.1:1", srv.URL())
	cfg.NATSOptions = []nats.Option{nats.DontRandomize()}
	a := startNode(t, cfg, rec, nil)
	natstest.WaitFor(t, 5*time.Second, a.IsLeader, "node with a dead first URL never led")
	if got := a.Conn().ConnectedUrl(); got != srv.URL() {
		t.Errorf("connected to %q, want %q", got, srv.URL())
	}
}

// Stop with a ctx that is already done skips the graceful handover but
// still returns, with ctx's error, and leaves nothing running.
func TestStopWithExpiredContextReturns(t *testing.T) {
	t.Parallel()
	srv, rec, id := setup(t)
	a := startNode(t, stableConfig(id, "a", srv.URL()), rec, nil)
	waitOneLeader(t, []*Node{a}, 15*time.Second)
	b := startNode(t, stableConfig(id, "b", srv.URL()), rec, nil)
	natstest.WaitFor(t, 2*time.Second, func() bool { return b.Leader() == "a" }, "b did not see a")

	done, cancel := context.WithCancel(context.Background())
	cancel()
	stopped := make(chan error, 1)
	go func() { stopped <- a.Stop(done) }()
	select {
	case err := <-stopped:
		if err != nil && !errors.Is(err, context.Canceled) {
			t.Fatalf("Stop = %v, want nil or context.Canceled", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Stop with a cancelled ctx did not return")
	}
	if a.IsLeader() {
		t.Fatal("a still leads after Stop")
	}
	natstest.WaitFor(t, 10*time.Second, b.IsLeader, "b did not take over from a stopped leader")
	rec.check(t)
}
