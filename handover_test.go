package cluster

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ozanturksever/go-cluster/internal/election"
	"github.com/ozanturksever/go-cluster/internal/natstest"
)

func TestSingleLeaderAmongThree(t *testing.T) {
	t.Parallel()
	srv, rec, id := setup(t)
	var nodes []*Node
	for i := range 3 {
		nodes = append(nodes, startNode(t, stableConfig(id, fmt.Sprintf("n%d", i), srv.URL()), rec, nil))
	}
	leader := waitOneLeader(t, nodes, 5*time.Second)
	if first := firstEpoch(t, srv.URL(), id); leader.Epoch() != first {
		t.Errorf("first leader epoch = %d, want the bucket's first, %d", leader.Epoch(), first)
	}
	// Steady state for several TTLs: no transition.
	deadline := time.Now().Add(6 * time.Second)
	natstest.WaitFor(t, 10*time.Second, func() bool {
		if len(leaders(nodes)) != 1 || !leader.IsLeader() {
			t.Fatalf("leadership moved in steady state")
		}
		return time.Now().After(deadline)
	}, "steady state")
	if got := rec.tenureCount(); got != 1 {
		t.Errorf("tenures = %d, want 1", got)
	}
	rec.check(t)
}

func TestSingleLeaderAmongTwenty(t *testing.T) {
	t.Parallel()
	srv, rec, id := setup(t)
	var nodes []*Node
	for i := range 20 {
		nodes = append(nodes, startNode(t, testConfig(id, fmt.Sprintf("n%02d", i), srv.URL()), rec, nil))
	}
	waitOneLeader(t, nodes, 10*time.Second)
	rec.waitTenures(t, 1) // the leader leads before its OnBecomeLeader runs (E3)
	if got := rec.tenureCount(); got != 1 {
		t.Errorf("tenures = %d, want 1 (a race was won twice)", got)
	}
	rec.check(t)
}

func TestStepDownHandsOverFastWithCooldown(t *testing.T) {
	t.Parallel()
	srv, rec, id := setup(t)
	// A long TTL: a handover inside it proves the release path, not expiry.
	mk := func(name string) Config {
		c := testConfig(id, name, srv.URL())
		c.LeaseTTL, c.RenewInterval, c.Cooldown = 10*time.Second, 2*time.Second, 3*time.Second
		return c
	}
	a := startNode(t, mk("a"), rec, nil)
	waitOneLeader(t, []*Node{a}, 15*time.Second)
	b := startNode(t, mk("b"), rec, nil)
	natstest.WaitFor(t, 5*time.Second, func() bool { return b.Leader() == "a" }, "b never saw a lead")

	start := time.Now()
	if err := a.StepDown(ctx(t)); err != nil {
		t.Fatalf("StepDown: %v", err)
	}
	leader := waitOneLeader(t, []*Node{a, b}, 5*time.Second)
	took := time.Since(start)
	if leader != b {
		t.Fatalf("leader after StepDown = %s, want b", leader.Config().NodeID)
	}
	if took >= 10*time.Second {
		t.Errorf("handover took %v: that is expiry, not release", took)
	}
	first := firstEpoch(t, srv.URL(), id)
	if b.Epoch() != first+1 {
		t.Errorf("epoch after handover = %d, want %d", b.Epoch(), first+1)
	}
	if err := a.StepDown(ctx(t)); !errors.Is(err, ErrNotLeader) {
		t.Errorf("StepDown on follower = %v, want ErrNotLeader", err)
	}
	// b leads on while a is in cooldown and steps down a second after a
	// did: a must wait its cooldown out, which ends a second before b's.
	// Stepped down at once, the two cooldowns would begin about 14ms
	// apart, less than a's campaign can take under load.
	holdFor(t, time.Second, b.IsLeader, "b leading while a is in cooldown")
	if err := b.StepDown(ctx(t)); err != nil {
		t.Fatalf("StepDown b: %v", err)
	}
	// a's cooldown (3s) began inside its StepDown call; b's just now. a
	// comes back first, and not before its cooldown is over.
	natstest.WaitFor(t, 10*time.Second, func() bool { return a.IsLeader() || b.IsLeader() }, "nobody re-acquired after cooldowns")
	if !a.IsLeader() {
		t.Fatalf("b led again first, inside its own cooldown")
	}
	if since := time.Since(start); since < 3*time.Second {
		t.Errorf("a led again %v after its StepDown, inside its 3s cooldown", since)
	}
	if a.Epoch() != first+2 {
		t.Errorf("epoch after second handover = %d, want %d", a.Epoch(), first+2)
	}
	rec.check(t)
}

func TestStopOnLeaderReleasesAfterLoseHook(t *testing.T) {
	t.Parallel()
	srv, rec, id := setup(t)
	mk := func(name string) Config {
		c := testConfig(id, name, srv.URL())
		c.LeaseTTL, c.RenewInterval = 10*time.Second, 2*time.Second
		return c
	}
	var b *Node
	var successorLedDuringDrain atomic.Bool
	drain := HookFuncs{LoseLeadership: func(context.Context) error {
		// The application drains here; nobody may lead yet.
		if b != nil && b.IsLeader() {
			successorLedDuringDrain.Store(true)
		}
		return nil
	}}
	a, err := NewNode(mk("a"), rec.hooks("a", func() int64 { return 1 }, drain))
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Start(ctx(t)); err != nil {
		t.Fatal(err)
	}
	waitOneLeader(t, []*Node{a}, 15*time.Second)
	b = startNode(t, mk("b"), rec, nil)
	natstest.WaitFor(t, 5*time.Second, func() bool { return b.Leader() == "a" }, "b never saw a lead")

	start := time.Now()
	if err := a.Stop(ctx(t)); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	if a.IsLeader() {
		t.Fatal("a still leader after Stop")
	}
	if rec.count("a", "lose") != 1 {
		t.Fatalf("OnLoseLeadership ran %d times before Stop returned, want 1", rec.count("a", "lose"))
	}
	natstest.WaitFor(t, 5*time.Second, b.IsLeader, "b did not take over after Stop")
	if took := time.Since(start); took >= 10*time.Second {
		t.Errorf("handover after Stop took %v: expiry, not release", took)
	}
	if successorLedDuringDrain.Load() {
		t.Error("b led while a was still in OnLoseLeadership")
	}
	if want := firstEpoch(t, srv.URL(), id) + 1; b.Epoch() != want {
		t.Errorf("epoch = %d, want %d", b.Epoch(), want)
	}
	if err := a.Stop(ctx(t)); err != nil {
		t.Errorf("second Stop: %v", err)
	}
	if err := a.Start(ctx(t)); !errors.Is(err, ErrAlreadyStarted) {
		t.Errorf("Start after Stop = %v, want ErrAlreadyStarted", err)
	}
	rec.check(t)
}

func TestSlowHookDoesNotCostTheLease(t *testing.T) {
	t.Parallel()
	srv, rec, id := setup(t)
	release := make(chan struct{})
	slow := HookFuncs{BecomeLeader: func(ctx context.Context) error {
		select { // blocks for many TTLs
		case <-release:
		case <-time.After(20 * time.Second):
		}
		return nil
	}}
	a := startNode(t, stableConfig(id, "a", srv.URL()), rec, slow)
	t.Cleanup(func() { close(release) }) // runs before a's Stop
	waitOneLeader(t, []*Node{a}, 15*time.Second)
	b := startNode(t, stableConfig(id, "b", srv.URL()), rec, nil)
	hold := time.Now().Add(2 * 3 * time.Second) // two TTLs with the hook blocked
	natstest.WaitFor(t, 10*time.Second, func() bool {
		if !a.IsLeader() || b.IsLeader() {
			t.Fatalf("a lost the lease while its hook was blocked (a=%v b=%v)", a.IsLeader(), b.IsLeader())
		}
		return time.Now().After(hold)
	}, "hold")
	if a.Epoch() != firstEpoch(t, srv.URL(), id) {
		t.Errorf("epoch moved to %d while the hook blocked", a.Epoch())
	}
	rec.check(t)
}

func TestGarbageLeaseDemotesAndEpochKeepsGrowing(t *testing.T) {
	t.Parallel()
	srv, rec, id := setup(t)
	nodes := startNodes(t, srv, rec, id, "a", "b")
	waitOneLeader(t, nodes, 5*time.Second)
	// Move the epoch up a few times so that "back to 1" would show. With
	// both nodes in cooldown the one that stepped down may win again (the
	// design allows it: a cooldown ends), so a new tenure is what counts,
	// not a new leader.
	for range 3 {
		l := waitOneLeader(t, nodes, 5*time.Second)
		stepped := l.Epoch()
		if err := l.StepDown(ctx(t)); err != nil {
			t.Fatal(err)
		}
		natstest.WaitFor(t, 5*time.Second, func() bool {
			ls := leaders(nodes)
			return len(ls) == 1 && ls[0].Epoch() > stepped
		}, "no new tenure after %s stepped down at epoch %d", l.Config().NodeID, stepped)
	}
	before := waitOneLeader(t, nodes, 5*time.Second)
	beforeEpoch := before.Epoch()
	// IsLeader turns true before OnBecomeLeader runs (hooks run on their
	// own goroutine): wait for before's hook, so that the tenure counted
	// below is the successor's, not before's (this raced under load).
	natstest.WaitFor(t, 5*time.Second, func() bool {
		return rec.count(before.Config().NodeID, "become") > 0 && rec.lastTenure().epoch == beforeEpoch
	}, "OnBecomeLeader of %s not called", before.Config().NodeID)
	tenures := rec.tenureCount()

	kv := openKV(t, srv.URL(), id)
	written := time.Now()
	if _, err := kv.Put(ctx(t), "lease", []byte("{not json")); err != nil {
		t.Fatal(err)
	}
	natstest.WaitFor(t, 2*time.Second, func() bool { return !before.IsLeader() }, "leader kept leading after its lease was overwritten")
	// Nobody may take over before a full TTL of the garbage staying put.
	leader := waitOneLeader(t, nodes, 10*time.Second)
	natstest.WaitFor(t, 5*time.Second, func() bool { return rec.tenureCount() > tenures }, "the successor's OnBecomeLeader was not called")
	if waited := rec.lastTenure().start.Sub(written); waited < testTTL {
		t.Errorf("took over %v after the garbage appeared, before a full LeaseTTL", waited)
	}
	if leader.Epoch() <= beforeEpoch {
		t.Errorf("epoch after garbage = %d, want > %d", leader.Epoch(), beforeEpoch)
	}
	rec.check(t)
}

func TestLeaseChangedByOperatorDemotesLeader(t *testing.T) {
	t.Parallel()
	srv, rec, id := setup(t)
	a := startNode(t, testConfig(id, "a", srv.URL()), rec, nil)
	waitOneLeader(t, []*Node{a}, 15*time.Second)
	kv := openKV(t, srv.URL(), id)
	intruder := a.Epoch() + 1 // the next epoch, as a successor writes it
	forged := fmt.Sprintf(`{"v":3,"node_id":"intruder","epoch":%d,"expires_at":%q,"acquired_at":%q}`,
		intruder, time.Now().Add(time.Hour).UTC().Format(time.RFC3339), time.Now().UTC().Format(time.RFC3339))
	if _, err := kv.Put(ctx(t), "lease", []byte(forged)); err != nil {
		t.Fatal(err)
	}
	natstest.WaitFor(t, 2*time.Second, func() bool { return !a.IsLeader() && a.Leader() == "intruder" }, "leader did not see the forged lease")
	// "intruder" never renews: a takes over after a TTL, whatever expires_at says.
	natstest.WaitFor(t, 5*time.Second, a.IsLeader, "a did not take over the abandoned lease")
	if a.Epoch() != intruder+1 {
		t.Errorf("epoch = %d, want %d", a.Epoch(), intruder+1)
	}
	rec.check(t)
}

func TestClockIndependence(t *testing.T) {
	t.Parallel()
	srv, rec, id := setup(t)
	kv := openKV(t, srv.URL(), id)
	// A held lease whose writer's clock is an hour behind: expires_at is long
	// past on ours. Followers must still wait a full TTL of seeing it unchanged.
	old := time.Now().Add(-time.Hour).UTC().Format(time.RFC3339)
	skewed := firstEpoch(t, srv.URL(), id) // the first epoch, at revision 1
	if _, err := kv.Create(ctx(t), "lease", []byte(fmt.Sprintf(`{"v":3,"node_id":"skewed","epoch":%d,"expires_at":%q,"acquired_at":%q}`, skewed, old, old))); err != nil {
		t.Fatal(err)
	}
	started := time.Now()
	a := startNode(t, testConfig(id, "a", srv.URL()), rec, nil)
	natstest.WaitFor(t, 5*time.Second, a.IsLeader, "a never took over")
	if waited := time.Since(started); waited < testTTL {
		t.Errorf("took over after %v, before a full LeaseTTL (%v) on its own clock", waited, testTTL)
	}
	if a.Epoch() != skewed+1 {
		t.Errorf("epoch = %d, want %d", a.Epoch(), skewed+1)
	}
	rec.check(t)
}

// A follower configured with a shorter LeaseTTL than the leader's must
// still wait out the leader's: the record carries it.
func TestFollowerWaitsForTheLeadersLongerTTL(t *testing.T) {
	t.Parallel()
	srv, rec, id := setup(t)
	acfg := testConfig(id, "a")
	acfg.LeaseTTL, acfg.RenewInterval = 3*time.Second, 750*time.Millisecond
	nc := srv.Connect(t)
	acfg.Conn = nc
	a := startNode(t, acfg, rec, nil)
	waitOneLeader(t, []*Node{a}, 15*time.Second)
	b := startNode(t, testConfig(id, "b", srv.URL()), rec, nil) // LeaseTTL 1s
	natstest.WaitFor(t, 2*time.Second, func() bool { return b.Leader() == "a" }, "b did not see a")
	crashed := time.Now()
	nc.Close()
	natstest.WaitFor(t, 10*time.Second, b.IsLeader, "b never took over")
	if waited := time.Since(crashed); waited < 3*time.Second-750*time.Millisecond {
		t.Errorf("b took over %v after the crash: it used its own 1s TTL, not the leader's 3s", waited)
	}
	rec.check(t)
}

// P7, §4.11: a hand-back is one request, the successor's write, whose
// acknowledgement proves its landing: from that write to its
// OnBecomeLeader the loop sends no other request.
func TestAHandBackIsOneRequestOfTheLoop(t *testing.T) {
	t.Parallel()
	srv, rec, id := setup(t)
	a := startNode(t, testConfig(id, "a", srv.URL()), rec, nil)
	waitOneLeader(t, []*Node{a}, 10*time.Second)
	var b *Node
	b, err := NewNode(testConfig(id, "b", srv.URL()), rec.hooks("b", func() int64 { return b.Epoch() }, nil))
	if err != nil {
		t.Fatal(err)
	}
	// Only the loop's goroutine appends; read after Stop.
	var requests []string
	b.beforeAction = func(a any) {
		switch a := a.(type) {
		case election.Write:
			requests = append(requests, fmt.Sprintf("Write %v", a.Purpose))
		case election.Confirm:
			requests = append(requests, "Confirm")
		case election.Become:
			requests = append(requests, "Become")
		}
	}
	if err := b.Start(ctx(t)); err != nil {
		t.Fatal(err)
	}
	natstest.WaitFor(t, 5*time.Second, func() bool { return b.Leader() == "a" }, "b never saw a lead")
	if err := a.StepDown(ctx(t)); err != nil {
		t.Fatal(err)
	}
	natstest.WaitFor(t, 5*time.Second, b.IsLeader, "b never took the hand-back")
	stopNode(t, b)
	last := len(requests) - 1
	for last >= 0 && requests[last] != "Become" {
		last--
	}
	t.Logf("requests up to Become: %q", requests[:last+1])
	if last < 1 || requests[last-1] != "Write acquire" {
		t.Fatalf("requests of b's loop up to its Become: %q; want the acquisition's write right before it", requests[:last+1])
	}
}
