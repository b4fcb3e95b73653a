package cluster

import (
	"testing"
	"time"

	"github.com/ozanturksever/go-cluster/internal/natstest"
)

// TestPreemptDelayHoldsOffTheHandover: a node of higher Priority with a
// PreemptDelay longer than LeaseTTL lets the leader of lower priority lead
// for PreemptDelay after it started (not just LeaseTTL), then takes over
// through the normal hand-over (keepalived's preempt_delay, issue 23).
func TestPreemptDelayHoldsOffTheHandover(t *testing.T) {
	t.Parallel()
	srv, rec, id := setup(t)
	a := startNode(t, testConfig(id, "a", srv.URL()), rec, nil)
	waitOneLeader(t, []*Node{a}, 15*time.Second)
	const delay = 3 * time.Second
	bcfg := testConfig(id, "b", srv.URL())
	bcfg.Priority, bcfg.PreemptDelay = 10, delay
	started := time.Now() // b's wait starts no earlier: it is not synced before Start
	b := startNode(t, bcfg, rec, nil)
	natstest.WaitFor(t, 2*time.Second, func() bool { return b.Leader() == "a" }, "b did not see a")
	// Without PreemptDelay b would ask a LeaseTTL (1s) after it synced.
	holdFor(t, time.Until(started.Add(delay-500*time.Millisecond)),
		func() bool { return a.IsLeader() && !b.IsLeader() }, "a leads while b waits out its PreemptDelay")
	natstest.WaitFor(t, delay+10*time.Second, b.IsLeader, "b never took over after its PreemptDelay")
	if took := time.Since(started); took < delay {
		t.Errorf("b took over %v after it started, before its PreemptDelay %v", took, delay)
	}
	rec.waitTenures(t, 2) // b leads before its OnBecomeLeader runs (E3)
	if n := rec.count("a", "lose"); n != 1 {
		t.Errorf("a lost leadership %d times, want 1", n)
	}
	if n := rec.tenureCount(); n != 2 {
		t.Errorf("tenures = %d, want 2 (a, then b)", n)
	}
	rec.check(t)
}
