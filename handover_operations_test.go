package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/ozanturksever/go-cluster/internal/natstest"
	"github.com/ozanturksever/go-cluster/internal/wire"
)

func TestPriorityHandoverWithoutFlapping(t *testing.T) {
	t.Parallel()
	srv, rec, id := setup(t)
	a := startNode(t, testConfig(id, "a", srv.URL()), rec, nil)
	waitOneLeader(t, []*Node{a}, 15*time.Second)
	bcfg := testConfig(id, "b", srv.URL())
	bcfg.Priority = 10
	b := startNode(t, bcfg, rec, nil)
	// b is preferred: once it has followed for a LeaseTTL it asks, and a
	// hands over through the normal release.
	natstest.WaitFor(t, 10*time.Second, b.IsLeader, "preferred node never became leader")
	if rec.count("a", "lose") != 1 {
		t.Errorf("a lost leadership %d times, want 1", rec.count("a", "lose"))
	}
	ccfg := testConfig(id, "c", srv.URL())
	ccfg.Priority = 10 // a tie: never hands over
	c := startNode(t, ccfg, rec, nil)
	holdFor(t, 4*testTTL, func() bool { return b.IsLeader() && !c.IsLeader() && !a.IsLeader() }, "b keeps leading against an equal priority")
	if n := rec.tenureCount(); n != 2 {
		t.Errorf("tenures = %d, want 2 (a, then b)", n)
	}
	rec.check(t)
}

func TestUnstablePreferredNodeDoesNotTakeOver(t *testing.T) {
	t.Parallel()
	srv, rec, id := setup(t)
	// Stable leases: b's reconnects, which take longer under load, stay
	// well inside a LeaseTTL, and a's tenure does not lapse.
	a := startNode(t, stableConfig(id, "a", srv.URL()), rec, nil)
	waitOneLeader(t, []*Node{a}, 15*time.Second)
	bcfg := stableConfig(id, "b", srv.URL())
	bcfg.Priority = 10
	b, proxy := proxiedNode(t, srv, bcfg, rec)
	// b's connection drops more often than every LeaseTTL: it never counts as
	// stable, so it never asks a to yield.
	until := time.Now().Add(2 * bcfg.LeaseTTL)
	for time.Now().Before(until) {
		natstest.WaitFor(t, 5*time.Second, func() bool { return b.Conn().IsConnected() }, "b did not reconnect")
		reconnects := b.Conn().Stats().Reconnects
		proxy.Cut()
		proxy.Restore()
		natstest.WaitFor(t, 5*time.Second, func() bool { return b.Conn().Stats().Reconnects > reconnects }, "b did not reconnect")
		natstest.WaitFor(t, testTTL, func() bool { return a.IsLeader() && !b.IsLeader() }, "a leads")
	}
	if rec.count("a", "lose") != 0 {
		t.Errorf("a handed over to an unstable preferred node")
	}
	rec.check(t)
}

func TestFailingHealthCheckStepsLeaderDown(t *testing.T) {
	t.Parallel()
	srv, rec, id := setup(t)
	var sick atomic.Bool
	acfg := testConfig(id, "a", srv.URL())
	acfg.ReadinessInterval, acfg.ReadinessThreshold = 50*time.Millisecond, 3
	var checks atomic.Int64
	acfg.ReadinessCheck = func(ctx context.Context) error {
		checks.Add(1)
		if sick.Load() {
			return errors.New("disk full")
		}
		return nil
	}
	a := startNode(t, acfg, rec, nil)
	waitOneLeader(t, []*Node{a}, 15*time.Second)
	bcfg := testConfig(id, "b", srv.URL())
	bcfg.Cooldown = time.Minute // once b steps down, only a can take the lease
	b := startNode(t, bcfg, rec, nil)
	natstest.WaitFor(t, 2*time.Second, func() bool { return b.Leader() == "a" }, "b did not see a")

	sick.Store(true)
	start := checks.Load()
	natstest.WaitFor(t, 5*time.Second, b.IsLeader, "b did not take over from an unhealthy leader")
	if n := checks.Load() - start; n < 3 {
		t.Errorf("a stepped down after %d failed checks, want 3", n)
	}
	// b gives up the lease; a is unhealthy and must not campaign.
	if err := b.StepDown(ctx(t)); err != nil {
		t.Fatal(err)
	}
	holdFor(t, 2*testTTL, func() bool { return !a.IsLeader() }, "unhealthy a stays out")
	sick.Store(false)
	natstest.WaitFor(t, 5*time.Second, a.IsLeader, "a did not campaign again once healthy")
	rec.check(t)
}

func TestRemoteStepDownToNamedNode(t *testing.T) {
	t.Parallel()
	srv, rec, id := setup(t)
	nodes := []*Node{
		startNode(t, stableConfig(id, "a", srv.URL()), rec, nil),
		startNode(t, stableConfig(id, "b", srv.URL()), rec, nil),
		startNode(t, stableConfig(id, "c", srv.URL()), rec, nil),
	}
	nc := srv.Connect(t)
	ask := func(subject string, req any) wire.StepDownReply {
		t.Helper()
		var data []byte
		switch r := req.(type) {
		case []byte:
			data = r
		default:
			data, _ = json.Marshal(r)
		}
		msg, err := nc.Request(subject, data, 5*time.Second)
		if err != nil {
			t.Fatalf("request %s: %v", subject, err)
		}
		var reply wire.StepDownReply
		if err := json.Unmarshal(msg.Data, &reply); err != nil {
			t.Fatalf("reply %q: %v", msg.Data, err)
		}
		return reply
	}
	for round, want := range []string{"c", "b", "a", "c"} {
		leader := waitOneLeader(t, nodes, 10*time.Second)
		if leader.Config().NodeID == want {
			continue
		}
		epoch := leader.Epoch()
		reply := ask(wire.ControlSubject(id), wire.StepDownRequest{To: want})
		if !reply.OK || reply.Node != leader.Config().NodeID || reply.To != want || reply.Epoch != epoch {
			t.Fatalf("round %d: reply %+v", round, reply)
		}
		natstest.WaitFor(t, 5*time.Second, func() bool {
			ls := leaders(nodes)
			return len(ls) == 1 && ls[0].Config().NodeID == want
		}, "round %d: %s did not become leader", round, want)
	}
	leader := waitOneLeader(t, nodes, 5*time.Second)
	var follower *Node
	for _, n := range nodes {
		if n != leader {
			follower = n
		}
	}
	if r := ask(wire.NodeControlSubject(id, follower.Config().NodeID), nil); r.OK || r.Leader != leader.Config().NodeID {
		t.Errorf("follower's reply %+v, want an error naming %s", r, leader.Config().NodeID)
	}
	if r := ask(wire.NodeControlSubject(id, leader.Config().NodeID), []byte("{garbage")); r.OK || r.Error == "" {
		t.Errorf("malformed request reply %+v, want an error", r)
	}
	if r := ask(wire.NodeControlSubject(id, leader.Config().NodeID), wire.StepDownRequest{To: "no such"}); r.OK {
		t.Errorf("invalid successor accepted: %+v", r)
	}
	if !leader.IsLeader() {
		t.Error("a refused request moved leadership")
	}
	if err := leader.StepDownTo(ctx(t), leader.Config().NodeID); !errors.Is(err, ErrAlreadyLeader) {
		t.Errorf("StepDownTo(self) = %v, want ErrAlreadyLeader", err)
	}
	if r := ask(wire.NodeControlSubject(id, leader.Config().NodeID), wire.StepDownRequest{To: leader.Config().NodeID}); r.OK || !strings.HasPrefix(r.Error, ErrAlreadyLeader.Error()) {
		t.Errorf("handover to the leader itself: reply %+v, want %q", r, ErrAlreadyLeader)
	}
	rec.check(t)
}

// eventObserver records Observer calls.
type eventObserver struct {
	mu       sync.Mutex
	renewals map[string]int
	leading  []bool
	leaders  []string
	hooks    map[string]int
	fencing  []error
	wins     []time.Duration
}

// renewalCounts prints the renewals by outcome.
func (o *eventObserver) renewalCounts() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return fmt.Sprint(o.renewals)
}

func (o *eventObserver) ObserveRenewal(out RenewalOutcome, _ time.Duration) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.renewals[string(out)]++
}
func (o *eventObserver) ObserveLeadership(l bool, _ int64) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.leading = append(o.leading, l)
}
func (o *eventObserver) ObserveElection(_ ElectionCause, w time.Duration) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.wins = append(o.wins, w)
}
func (o *eventObserver) ObserveLeader(id string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.leaders = append(o.leaders, id)
}
func (o *eventObserver) ObserveHook(name string, _ time.Duration, _ error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.hooks[name]++
}
func (o *eventObserver) ObserveFencing(err error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.fencing = append(o.fencing, err)
}

func TestObserverSeesWhatMetricsNeed(t *testing.T) {
	t.Parallel()
	srv, rec, id := setup(t)
	obs := &eventObserver{renewals: map[string]int{}, hooks: map[string]int{}}
	acfg := stableConfig(id, "a", srv.URL()) // a must lead without a lapse: its events are counted
	acfg.Metrics = obs
	a := startNode(t, acfg, rec, nil)
	waitOneLeader(t, []*Node{a}, 15*time.Second)
	b := startNode(t, stableConfig(id, "b", srv.URL()), rec, nil)
	natstest.WaitFor(t, 5*time.Second, func() bool {
		obs.mu.Lock()
		defer obs.mu.Unlock()
		return obs.renewals["ok"] >= 2
	}, "no successful renewals observed")
	if _, err := a.ValidateLeadership(ctx(t)); err != nil {
		t.Fatal(err)
	}
	if err := a.StepDown(ctx(t)); err != nil {
		t.Fatal(err)
	}
	natstest.WaitFor(t, 5*time.Second, b.IsLeader, "b did not take over")
	if _, err := a.ValidateLeadership(ctx(t)); !errors.Is(err, ErrNotLeader) {
		t.Fatal(err)
	}
	natstest.WaitFor(t, 2*time.Second, func() bool {
		obs.mu.Lock()
		defer obs.mu.Unlock()
		// ObserveLeader is told when the view changes, ObserveHook once
		// the hook has returned: b's OnLeaderChange may come after.
		return len(obs.leaders) >= 3 && obs.hooks["OnLoseLeadership"] == 1 && obs.hooks["OnLeaderChange"] >= 2
	}, "observer missed leader changes or hooks")
	obs.mu.Lock()
	defer obs.mu.Unlock()
	if len(obs.leading) != 2 || !obs.leading[0] || obs.leading[1] {
		t.Errorf("leadership events %v, want [true false]", obs.leading)
	}
	if len(obs.wins) != 1 || obs.wins[0] != 0 {
		t.Errorf("election waits %v, want one 0 (created the key)", obs.wins)
	}
	if len(obs.fencing) != 2 || obs.fencing[0] != nil || !errors.Is(obs.fencing[1], ErrNotLeader) {
		t.Errorf("fencing events %v", obs.fencing)
	}
	if obs.hooks["OnBecomeLeader"] != 1 || obs.hooks["OnLeaderChange"] < 2 {
		t.Errorf("hook events %v", obs.hooks)
	}
	want := []string{"a", "", "b"}
	for i, w := range want {
		if i >= len(obs.leaders) || obs.leaders[i] != w {
			t.Errorf("leaders seen %q, want prefix %q", obs.leaders, want)
			break
		}
	}
	_ = nats.ErrTimeout
}

func TestNamedSuccessorInCooldownStillTakesOver(t *testing.T) {
	t.Parallel()
	srv, rec, id := setup(t)
	mk := func(name string) Config {
		c := stableConfig(id, name, srv.URL())
		c.Cooldown = time.Minute
		return c
	}
	a := startNode(t, mk("a"), rec, nil)
	waitOneLeader(t, []*Node{a}, 15*time.Second)
	b := startNode(t, mk("b"), rec, nil)
	c := startNode(t, mk("c"), rec, nil)
	nodes := []*Node{a, b, c}
	natstest.WaitFor(t, 2*time.Second, func() bool { return b.Leader() == "a" && c.Leader() == "a" }, "followers did not see a")
	if err := a.StepDownTo(ctx(t), "b"); err != nil {
		t.Fatal(err)
	}
	natstest.WaitFor(t, 5*time.Second, b.IsLeader, "b did not take over")
	// a is in a one-minute cooldown, but an explicit handover names it.
	if err := b.StepDownTo(ctx(t), "a"); err != nil {
		t.Fatal(err)
	}
	natstest.WaitFor(t, 5*time.Second, func() bool { return a.IsLeader() && len(leaders(nodes)) == 1 }, "a, named and cooling down, did not take over")
	if want := firstEpoch(t, srv.URL(), id) + 2; a.Epoch() != want {
		t.Errorf("epoch = %d, want %d", a.Epoch(), want)
	}
	rec.check(t)
}

func TestStepDownRequestWithWrongEpochIsRefused(t *testing.T) {
	t.Parallel()
	srv, rec, id := setup(t)
	nodes := []*Node{
		startNode(t, stableConfig(id, "a", srv.URL()), rec, nil),
		startNode(t, stableConfig(id, "b", srv.URL()), rec, nil),
	}
	leader := waitOneLeader(t, nodes, 5*time.Second)
	nc := srv.Connect(t)
	data, _ := json.Marshal(wire.StepDownRequest{Epoch: leader.Epoch() + 1})
	msg, err := nc.Request(wire.ControlSubject(id), data, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	var reply wire.StepDownReply
	if err := json.Unmarshal(msg.Data, &reply); err != nil || reply.OK || reply.Error == "" {
		t.Fatalf("reply %s (%v), want a refusal", msg.Data, err)
	}
	holdFor(t, time.Second, leader.IsLeader, "the leader keeps leading after a refused request")
	data, _ = json.Marshal(wire.StepDownRequest{Epoch: leader.Epoch()})
	if msg, err = nc.Request(wire.ControlSubject(id), data, 5*time.Second); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(msg.Data, &reply); err != nil || !reply.OK {
		// Seen once in CI (the leader's epoch 2, the request's 1), not
		// reproduced in 40 runs: say who led at which epoch.
		for _, n := range nodes {
			t.Logf("%s: IsLeader %v, Epoch %d", n.cfg.NodeID, n.IsLeader(), n.Epoch())
		}
		t.Fatalf("reply %s (%v), want ok (asked %s at epoch %d)", msg.Data, err, leader.cfg.NodeID, leader.Epoch())
	}
	natstest.WaitFor(t, 5*time.Second, func() bool { return !leader.IsLeader() && len(leaders(nodes)) == 1 }, "no handover")
	rec.check(t)
}
