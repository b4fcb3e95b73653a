package cluster

import (
	"errors"
	"testing"
	"time"

	"github.com/ozanturksever/go-cluster/internal/natstest"
)

// TestSetPriorityMovesLeadershipByThePriorityNow: the leader's record and
// its answers to priority requests follow SetPriority, not only
// Config.Priority. Leader a (100) lowered to 80 hands over to b (90),
// and does not ask for it back while it stays at 80; back at 100 it
// takes over again (keepalived's weighted checks, issue 33).
func TestSetPriorityMovesLeadershipByThePriorityNow(t *testing.T) {
	t.Parallel()
	srv, rec, id := setup(t)
	// Stable leases: the tenures are counted, and a lapse would add one.
	acfg, bcfg := stableConfig(id, "a", srv.URL()), stableConfig(id, "b", srv.URL())
	acfg.Priority, bcfg.Priority = 100, 90
	a := startNode(t, acfg, rec, nil)
	waitOneLeader(t, []*Node{a}, 15*time.Second)
	b := startNode(t, bcfg, rec, nil)
	natstest.WaitFor(t, 5*time.Second, func() bool { return b.Leader() == "a" }, "b did not see a")

	if err := a.SetPriority(80); err != nil {
		t.Fatal(err)
	}
	if got := int(a.eng.Snapshot().Priority); got != 80 {
		t.Fatalf("Priority() = %d after SetPriority(80)", got)
	}
	natstest.WaitFor(t, 10*time.Second, b.IsLeader, "b (90) never took over from a lowered to 80")
	natstest.WaitFor(t, 5*time.Second, func() bool { l, ok := a.Lease(); return ok && l.NodeID == "b" && l.Priority == 90 }, "a never saw b's record")
	// a's Config.Priority (100) is above b's 90, but it is 80 now: it
	// must not ask b to hand back (b would: 100 > 90).
	holdFor(t, 3*testTTL, func() bool { return b.IsLeader() }, "b leads while a is lowered")

	if err := a.SetPriority(100); err != nil {
		t.Fatal(err)
	}
	natstest.WaitFor(t, 10*time.Second, a.IsLeader, "a never took over again at 100")
	rec.waitTenures(t, 3) // a leads before its OnBecomeLeader runs (E3)
	if n := rec.tenureCount(); n != 3 {
		t.Errorf("tenures = %d, want 3 (a, b, a)", n)
	}
	rec.check(t)
}

// TestSetPriorityKeepsTheLeaderAboveTheOthers: a leader lowered to 80
// stays leader over a follower of 70, whose requests it refuses.
func TestSetPriorityKeepsTheLeaderAboveTheOthers(t *testing.T) {
	t.Parallel()
	srv, rec, id := setup(t)
	acfg, bcfg := testConfig(id, "a", srv.URL()), testConfig(id, "b", srv.URL())
	acfg.Priority, bcfg.Priority = 100, 70
	a := startNode(t, acfg, rec, nil)
	waitOneLeader(t, []*Node{a}, 15*time.Second)
	b := startNode(t, bcfg, rec, nil)
	natstest.WaitFor(t, 5*time.Second, func() bool { return b.Leader() == "a" }, "b did not see a")
	if err := a.SetPriority(80); err != nil {
		t.Fatal(err)
	}
	natstest.WaitFor(t, 5*time.Second, func() bool { l, ok := b.Lease(); return ok && l.NodeID == "a" && l.Priority == 80 }, "a's record never carried 80")
	holdFor(t, 3*testTTL, a.IsLeader, "a (80) leads over b (70)")
	if n := rec.tenureCount(); n != 1 {
		t.Errorf("tenures = %d, want 1", n)
	}
	rec.check(t)
}

// TestSetPriorityRefusesWhatConfigWouldNot: between 0 and Config.Priority.
func TestSetPriorityRefusesWhatConfigWouldNot(t *testing.T) {
	t.Parallel()
	cfg := testConfig("c", "a", "nats://127.0.0.1:1")
	cfg.Priority = 50
	n, err := NewNode(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []int{-1, 51} {
		if err := n.SetPriority(p); !errors.Is(err, ErrInvalidConfig) {
			t.Errorf("SetPriority(%d) = %v, want ErrInvalidConfig", p, err)
		}
	}
	for _, p := range []int{0, 50, 7} {
		if err := n.SetPriority(p); err != nil {
			t.Errorf("SetPriority(%d) = %v", p, err)
		}
	}
	if got := int(n.eng.Snapshot().Priority); got != 7 {
		t.Errorf("Priority() = %d, want 7", got)
	}
}
