package proctest

import (
	"fmt"
	"syscall"
	"testing"
	"time"

	"github.com/ozanturksever/go-cluster/internal/natstest"
)

// Lease timing of the crash tests: short enough to measure failovers
// quickly, long enough for a loaded 2-core machine.
const (
	crashTTL   = 2 * time.Second
	crashRenew = 500 * time.Millisecond
)

// setup starts a nats-server process, the fence, and count node processes.
func setup(t *testing.T, count int, ttl, renew time.Duration) (*natsProc, *fenceServer, []*nodeProc) {
	t.Helper()
	natsBin, nodeBin := binaries(t)
	ns := startNATS(t, natsBin)
	fence := startFence(t)
	s := nodeSettings{bin: nodeBin, cluster: fmt.Sprintf("proc-%d-%d", time.Now().UnixNano()%1e6, clusterSeq.Add(1)),
		natsURL: ns.URL(), fenceURL: fence.url, ttl: ttl, renew: renew}
	var nodes []*nodeProc
	for i := range count {
		nodes = append(nodes, startNode(t, s, fmt.Sprintf("p%d", i+1)))
	}
	return ns, fence, nodes
}

// waitBecome waits until one of nodes logs "become" at or after since.
func waitBecome(t *testing.T, nodes []*nodeProc, since time.Time, timeout time.Duration) (*nodeProc, event) {
	t.Helper()
	var who *nodeProc
	var ev event
	natstest.WaitFor(t, timeout, func() bool {
		for _, n := range nodes {
			if e, ok := n.find(since, func(e event) bool { return e.Event == "become" }); ok {
				who, ev = n, e
				return true
			}
		}
		return false
	}, "no node became leader within %v", timeout)
	return who, ev
}

// lastEpoch is the epoch of n's last accepted write.
func lastEpoch(n *nodeProc) int64 {
	var e int64
	for _, ev := range n.snapshot() {
		if ev.Event == "write" && ev.OK {
			e = ev.Epoch
		}
	}
	return e
}

// firstWrite waits for n's first accepted write with an epoch above above.
func firstWrite(t *testing.T, n *nodeProc, above int64) event {
	t.Helper()
	return n.waitEvent(t, 10*time.Second, fmt.Sprintf("accepted write above epoch %d", above),
		func(e event) bool { return e.Event == "write" && e.OK && e.Epoch > above })
}

func TestKill9LeaderFailsOverAfterLeaseTTL(t *testing.T) {
	t.Parallel()
	natstest.CheckLeaks(t)
	_, _, nodes := setup(t, 3, crashTTL, crashRenew)
	leader, _ := waitLeader(t, nodes, 30*time.Second, time.Time{})
	epoch := lastEpoch(leader)

	killed := time.Now()
	leader.signal(syscall.SIGKILL)
	succ, become := waitBecome(t, others(nodes, leader), killed, crashTTL+15*time.Second)
	w := firstWrite(t, succ, epoch)
	failover := become.At().Sub(killed)
	t.Logf("RESULT kill -9: leader %s (epoch %d) killed; %s OnBecomeLeader after %v (%.2f x LeaseTTL), first fenced write after %v, epoch %d",
		leader.id, epoch, succ.id, failover.Round(time.Millisecond), float64(failover)/float64(crashTTL),
		w.At().Sub(killed).Round(time.Millisecond), w.Epoch)
	if failover < crashTTL-crashRenew-100*time.Millisecond {
		t.Errorf("takeover %v after the kill: before the lease could have expired (LeaseTTL %v, RenewInterval %v)", failover, crashTTL, crashRenew)
	}
	if w.Epoch != epoch+1 {
		t.Errorf("successor's epoch %d, want %d", w.Epoch, epoch+1)
	}
}

func TestSIGSTOPLeaderIsDemotedAndFenced(t *testing.T) {
	t.Parallel()
	natstest.CheckLeaks(t)
	_, fence, nodes := setup(t, 3, crashTTL, crashRenew)
	leader, _ := waitLeader(t, nodes, 30*time.Second, time.Time{})
	epoch := lastEpoch(leader)

	paused := time.Now()
	leader.signal(syscall.SIGSTOP)
	succ, become := waitBecome(t, others(nodes, leader), paused, crashTTL+15*time.Second)
	w := firstWrite(t, succ, epoch)
	failover := become.At().Sub(paused)
	// Keep the old leader paused well past its lease, then wake it up.
	natstest.WaitFor(t, 3*crashTTL, func() bool { return time.Since(paused) > 2*crashTTL }, "pause")
	resumed := time.Now()
	leader.signal(syscall.SIGCONT)

	lose := leader.waitEvent(t, 10*time.Second, "lose after SIGCONT", func(e event) bool { return e.Event == "lose" })
	stale := leader.waitEvent(t, 10*time.Second, "stale write", func(e event) bool { return e.Event == "stale_write" })
	leader.waitEvent(t, 10*time.Second, "leader "+succ.id, func(e event) bool { return e.Event == "leader" && e.Leader == succ.id })
	t.Logf("RESULT SIGSTOP: leader %s (epoch %d) paused; %s OnBecomeLeader after %v (%.2f x LeaseTTL); after SIGCONT (paused %v) %s saw its tenure end in %v; its stale write with epoch %d accepted=%v",
		leader.id, epoch, succ.id, failover.Round(time.Millisecond), float64(failover)/float64(crashTTL),
		resumed.Sub(paused).Round(time.Millisecond), leader.id, lose.At().Sub(resumed).Round(time.Millisecond), stale.Epoch, stale.OK)

	if stale.OK || stale.Epoch != epoch {
		t.Errorf("stale write of the paused leader: epoch %d accepted=%v, want epoch %d refused", stale.Epoch, stale.OK, epoch)
	}
	if e, ok := leader.find(paused, func(e event) bool { return e.Event == "write" && e.OK }); ok {
		t.Errorf("paused leader wrote successfully after SIGCONT: %+v", e)
	}
	for _, r := range fence.records() {
		if r.Node == leader.id && r.OK && !r.At.Before(w.At()) {
			t.Errorf("fence accepted %s's write (epoch %d) after its successor's first write", leader.id, r.Epoch)
		}
	}
	if lose.At().Before(resumed) {
		t.Errorf("lose logged %v before SIGCONT", resumed.Sub(lose.At()))
	}
}

func TestSIGTERMLeaderHandsOverFast(t *testing.T) {
	// Runs alone: an upper bound on time (the handover within LeaseTTL - RenewInterval).
	natstest.CheckLeaks(t)
	_, _, nodes := setup(t, 3, crashTTL, crashRenew)
	leader, _ := waitLeader(t, nodes, 30*time.Second, time.Time{})
	epoch := lastEpoch(leader)

	termed := time.Now()
	leader.signal(syscall.SIGTERM)
	succ, become := waitBecome(t, others(nodes, leader), termed, 10*time.Second)
	w := firstWrite(t, succ, epoch)
	select {
	case <-leader.exited:
	case <-time.After(15 * time.Second):
		t.Fatal("leader did not exit after SIGTERM")
	}
	if code := leader.cmd.ProcessState.ExitCode(); code != 0 {
		t.Errorf("exit code %d after SIGTERM", code)
	}
	stopped, _ := leader.find(termed, func(e event) bool { return e.Event == "stopped" })
	handover := become.At().Sub(termed)
	t.Logf("RESULT SIGTERM: leader %s (epoch %d) stopped gracefully; %s OnBecomeLeader after %v (%.3f x LeaseTTL), first fenced write after %v; old leader exited after %v",
		leader.id, epoch, succ.id, handover.Round(100*time.Microsecond), float64(handover)/float64(crashTTL),
		w.At().Sub(termed).Round(100*time.Microsecond), stopped.At().Sub(termed).Round(100*time.Microsecond))
	if handover >= crashTTL-crashRenew {
		t.Errorf("graceful handover took %v: as slow as a lease expiry", handover)
	}
	if w.Epoch != epoch+1 {
		t.Errorf("successor's epoch %d, want %d", w.Epoch, epoch+1)
	}
}

// TestNATSServerRestartUnderRunningNodes restarts the nats-server process
// (gracefully, then with kill -9) under three running nodes whose lease
// outlasts the restart: the leader should ride it out, and writes resume.
func TestNATSServerRestartUnderRunningNodes(t *testing.T) {
	t.Parallel()
	natstest.CheckLeaks(t)
	const ttl, renew = 6 * time.Second, 1500 * time.Millisecond
	ns, fence, nodes := setup(t, 3, ttl, renew)
	leader, _ := waitLeader(t, nodes, 30*time.Second, time.Time{})
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGKILL} {
		epoch := lastEpoch(leader)
		down := time.Now()
		ns.stop(sig)
		ns.start(t)
		ready := time.Now()
		// Writes resume: some node writes with an epoch at least the last.
		var resumed fenceRecord
		natstest.WaitFor(t, ttl+20*time.Second, func() bool {
			for _, r := range fence.records() {
				if r.OK && r.At.After(ready) && !r.Stale {
					resumed = r
					return true
				}
			}
			return false
		}, "no fenced write after the server restart")
		kept := true
		for _, n := range nodes {
			if _, ok := n.find(down, func(e event) bool { return e.Event == "become" || e.Event == "lose" }); ok {
				kept = false
			}
		}
		t.Logf("RESULT NATS restart (%v): server back after %v; first fenced write %v after it came back (by %s, epoch %d); leader %s kept its tenure: %v",
			sig, ready.Sub(down).Round(time.Millisecond), resumed.At.Sub(ready).Round(time.Millisecond), resumed.Node, resumed.Epoch, leader.id, kept)
		if resumed.Epoch < epoch {
			t.Errorf("epoch went back across the restart: %d -> %d", epoch, resumed.Epoch)
		}
		if !kept {
			next, _ := waitLeader(t, nodes, ttl+20*time.Second, down)
			leader = next
		}
	}
}
