package cluster

import (
	"testing"
	"time"

	"github.com/ozanturksever/go-cluster/internal/faultproxy"
	"github.com/ozanturksever/go-cluster/internal/natstest"
)

// proxiedNode starts a node whose connection goes through a fault proxy.
func proxiedNode(t *testing.T, srv *natstest.Server, cfg Config, rec *recorder) (*Node, *faultproxy.Proxy) {
	t.Helper()
	p := faultproxy.New(t, srv.Addr())
	cfg.NATSURLs = []string{p.URL()}
	return startNode(t, cfg, rec, nil), p
}

// proxiedLeaderAndFollower starts leader "a" with cfg behind a fault proxy,
// then follower "b" with the same timings, connected directly.
func proxiedLeaderAndFollower(t *testing.T, srv *natstest.Server, cfg Config, rec *recorder) (a, b *Node, proxy *faultproxy.Proxy) {
	t.Helper()
	cfg.NodeID = "a"
	a, proxy = proxiedNode(t, srv, cfg, rec)
	waitOneLeader(t, []*Node{a}, 15*time.Second)
	cfg.NodeID, cfg.NATSURLs = "b", []string{srv.URL()}
	b = startNode(t, cfg, rec, nil)
	natstest.WaitFor(t, 2*time.Second, func() bool { return b.Leader() == "a" }, "b did not see a")
	return a, b, proxy
}

// holdFor waits d while cond stays true, failing as soon as it does not.
func holdFor(t *testing.T, d time.Duration, cond func() bool, what string) {
	t.Helper()
	until := time.Now().Add(d)
	natstest.WaitFor(t, d+5*time.Second, func() bool {
		if !cond() {
			t.Fatalf("%s stopped holding", what)
		}
		return time.Now().After(until)
	}, "%s", what)
}

func TestPartitionedLeaderDemotesBeforeTakeover(t *testing.T) {
	t.Parallel()
	srv, rec, id := setup(t)
	a, proxy := proxiedNode(t, srv, testConfig(id, "a", srv.URL()), rec)
	waitOneLeader(t, []*Node{a}, 15*time.Second)
	b := startNode(t, stableConfig(id, "b", srv.URL()), rec, nil)
	c := startNode(t, stableConfig(id, "c", srv.URL()), rec, nil)
	natstest.WaitFor(t, 2*time.Second, func() bool { return b.Leader() == "a" && c.Leader() == "a" }, "followers did not see a")

	proxy.Blackhole()
	natstest.WaitFor(t, 5*time.Second, func() bool { return !a.IsLeader() }, "partitioned leader never demoted itself")
	successor := waitOneLeader(t, []*Node{b, c}, 5*time.Second)
	// The check that matters: a's tenure ended before the successor's began.
	rec.check(t)

	proxy.Restore()
	natstest.WaitFor(t, 10*time.Second, func() bool { return a.Leader() == successor.Config().NodeID }, "a did not rejoin as a follower")
	holdFor(t, 3*testTTL, func() bool { return !a.IsLeader() && successor.IsLeader() }, "successor keeps leading after the partition heals")
	if want := firstEpoch(t, srv.URL(), id) + 1; successor.Epoch() != want {
		t.Errorf("successor epoch = %d, want %d", successor.Epoch(), want)
	}
	rec.check(t)
}

// A cut-off leader's OnLoseLeadership must start by its deadline, not when
// its election loop gets out of a blocked request: an application that
// releases a VIP there would otherwise hold it while the successor does.
// RequestTimeout is long here, as it is with the defaults (RenewInterval),
// so a renewal that times out at the deadline leaves the loop busy.
func TestCutOffLeaderLosesBeforeSuccessorLeads(t *testing.T) {
	t.Parallel()
	srv, rec, id := setup(t)
	cfg := testConfig(id, "a", srv.URL())
	cfg.LeaseTTL, cfg.RenewInterval, cfg.RequestTimeout, cfg.SafetyMargin = 2*time.Second, 500*time.Millisecond, 1500*time.Millisecond, 200*time.Millisecond
	a, b, proxy := proxiedLeaderAndFollower(t, srv, cfg, rec)

	proxy.Blackhole()
	natstest.WaitFor(t, 10*time.Second, b.IsLeader, "b did not take over from the cut-off leader")
	if a.IsLeader() {
		t.Fatal("a still believes it leads while b does")
	}
	natstest.WaitFor(t, 5*time.Second, func() bool { return rec.count("a", "lose") == 1 }, "a never ran OnLoseLeadership")
	rec.check(t)
	proxy.Restore()
}

func TestStalledRenewalsWithinDeadlineKeepLeadership(t *testing.T) {
	t.Parallel()
	srv, rec, id := setup(t)
	cfg := testConfig(id, "a", srv.URL())
	cfg.LeaseTTL, cfg.RenewInterval = 4*time.Second, time.Second
	a, b, proxy := proxiedLeaderAndFollower(t, srv, cfg, rec)

	// The network stops for ~1.5 renewals and comes back: the held renewal
	// lands late (its outcome was unknown to a), which a must accept.
	proxy.Stall()
	holdFor(t, 1500*time.Millisecond, a.IsLeader, "a leads while stalled")
	proxy.Restore()
	holdFor(t, 3*time.Second, func() bool { return a.IsLeader() && b.Leader() == "a" }, "a keeps leading after the stall")
	if got := rec.count("a", "lose"); got != 0 {
		t.Errorf("a lost leadership %d times during a stall shorter than its deadline", got)
	}
	if want := firstEpoch(t, srv.URL(), id); a.Epoch() != want {
		t.Errorf("epoch = %d, want %d", a.Epoch(), want)
	}
	rec.check(t)
}

// Writes dropped for a while (a blackhole; on a JetStream cluster, a stream
// whose leader is being re-elected drops writes the same way) cost the
// lease only if the outage outlasts the deadline: renewal attempts get at
// most half the time left, so one is sent after the outage ends. With
// RequestTimeout close to the deadline, one attempt waiting its whole
// timeout would have run out the tenure.
func TestDroppedRenewalsRetriedBeforeDeadline(t *testing.T) {
	t.Parallel()
	srv, rec, id := setup(t)
	cfg := testConfig(id, "a", srv.URL())
	cfg.LeaseTTL, cfg.RenewInterval, cfg.RequestTimeout, cfg.SafetyMargin = 4*time.Second, time.Second, 3*time.Second, 400*time.Millisecond
	a, b, proxy := proxiedLeaderAndFollower(t, srv, cfg, rec)

	proxy.Blackhole()
	holdFor(t, 1500*time.Millisecond, a.IsLeader, "a leads while its writes are dropped")
	proxy.Restore() // closes the connection: a reconnects at once
	holdFor(t, 3*time.Second, func() bool { return a.IsLeader() && b.Leader() == "a" }, "a keeps leading after the outage")
	if got := rec.count("a", "lose"); got != 0 {
		t.Errorf("a lost leadership %d times in an outage shorter than its deadline", got)
	}
	if want := firstEpoch(t, srv.URL(), id); a.Epoch() != want {
		t.Errorf("epoch = %d, want %d", a.Epoch(), want)
	}
	rec.check(t)
}

func TestStalledLeaderPastDeadlineIsReplaced(t *testing.T) {
	t.Parallel()
	srv, rec, id := setup(t)
	a, proxy := proxiedNode(t, srv, testConfig(id, "a", srv.URL()), rec)
	waitOneLeader(t, []*Node{a}, 15*time.Second)
	b := startNode(t, stableConfig(id, "b", srv.URL()), rec, nil)
	natstest.WaitFor(t, 2*time.Second, func() bool { return b.Leader() == "a" }, "b did not see a")

	proxy.Stall()
	natstest.WaitFor(t, 5*time.Second, b.IsLeader, "b did not take over from a stalled leader")
	if a.IsLeader() {
		t.Fatal("a still believes it leads while b does")
	}
	proxy.Restore() // a's held renewals arrive now: every one is a CAS on a stale revision
	natstest.WaitFor(t, 10*time.Second, func() bool { return a.Leader() == "b" }, "a did not learn of b")
	holdFor(t, 3*testTTL, func() bool { return b.IsLeader() && !a.IsLeader() }, "b keeps leading")
	rec.check(t)
}

func TestBriefConnectionLossFiresNoHooks(t *testing.T) {
	t.Parallel()
	srv, rec, id := setup(t)
	cfg := testConfig(id, "a", srv.URL())
	cfg.LeaseTTL, cfg.RenewInterval = 4*time.Second, time.Second
	a, b, proxy := proxiedLeaderAndFollower(t, srv, cfg, rec)

	proxy.Cut()
	natstest.WaitFor(t, 5*time.Second, func() bool { return !a.Conn().IsConnected() }, "a never noticed the cut")
	proxy.Restore()
	natstest.WaitFor(t, 5*time.Second, func() bool { return a.Conn().IsConnected() }, "a never reconnected")
	holdFor(t, 2*time.Second, func() bool { return a.IsLeader() && b.Leader() == "a" }, "a keeps leading after reconnect")
	if got := rec.count("a", "lose") + rec.count("b", "become"); got != 0 {
		t.Errorf("a reconnect fired Lose/Become hooks %d times", got)
	}
	if got := len(rec.events["b"]); got != 1 {
		t.Errorf("follower saw leader changes %v, want only leader:a", rec.events["b"])
	}
	if want := firstEpoch(t, srv.URL(), id); a.Epoch() != want {
		t.Errorf("epoch = %d, want %d", a.Epoch(), want)
	}
}

func TestDisconnectedFollowerDoesNotReportExpiry(t *testing.T) {
	t.Parallel()
	srv, rec, id := setup(t)
	a := startNode(t, stableConfig(id, "a", srv.URL()), rec, nil)
	waitOneLeader(t, []*Node{a}, 15*time.Second)
	b, proxy := proxiedNode(t, srv, stableConfig(id, "b", srv.URL()), rec)
	natstest.WaitFor(t, 2*time.Second, func() bool { return b.Leader() == "a" }, "b did not see a")

	proxy.Cut()
	natstest.WaitFor(t, 5*time.Second, func() bool { return !b.Conn().IsConnected() }, "b never noticed the cut")
	holdFor(t, 3*testTTL, func() bool { return a.IsLeader() && !b.IsLeader() }, "b stays a follower while cut off")
	proxy.Restore()
	natstest.WaitFor(t, 5*time.Second, func() bool { return b.Conn().IsConnected() }, "b never reconnected")
	holdFor(t, 3*testTTL, func() bool { return b.Leader() == "a" && !b.IsLeader() }, "b follows a after reconnect")
	rec.mu.Lock()
	evs := append([]string(nil), rec.events["b"]...)
	rec.mu.Unlock()
	if len(evs) != 1 || evs[0] != "leader:a" {
		t.Errorf("cut-off follower reported %v, want only [leader:a]", evs)
	}
	rec.check(t)
}
