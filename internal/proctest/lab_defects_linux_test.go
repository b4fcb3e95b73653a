package proctest

import (
	"fmt"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ozanturksever/go-cluster/internal/natstest"
	"github.com/ozanturksever/go-cluster/internal/proof/arplab"
)

// TestAgentLab is issue 33's lab in CI (root; it fails instead of
// skipping when CI is set): the defects an operator hit, each seen by
// the client on the bridge. Every subtest runs its own pair of agents
// in a cluster of its own.
func TestAgentLab(t *testing.T) {
	t.Parallel() // with TestAgentLabCounts: each mostly waits
	l := newAgentLab(t, "gclab")
	for _, tc := range []struct {
		name string
		run  func(t *testing.T, l *agentLab)
	}{
		{"MissingVIPInterfaceRefusedAndTheOtherHostKeepsTheVIP", labMissingInterface},
		{"LeaderLinkDownFailsOver", labLinkDown},
		{"LeaderLinkFlapEndsTheTenure", labLinkFlap},
		{"LeaderInterfaceGoneFailsOver", labInterfaceGone},
		{"NATSOutageLoggedOnceAndHealthzHonest", labNATSOutage},
		{"LeftoverVIPAddressesOnTheFollowerRemoved", labLeftovers},
		{"SIGKILLedLeaderVIPRemovedByTheUnitsCleanup", labKillCleanup},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l.t = t
			defer l.reset()
			tc.run(t, l)
		})
	}
}

// reset kills the agents and leaves both hosts as new: eth0 up on the
// bridge, no VIP, the checks passing, the NATS links up.
func (l *agentLab) reset() {
	for h, p := range l.agents {
		p.signal(syscall.SIGKILL)
		<-p.exited
		delete(l.agents, h)
	}
	for _, h := range l.net.Hosts {
		if _, err := arplab.IPIn(h.NS, "link", "show", "dev", arplab.IfName); err != nil {
			if err := l.net.Plug(h); err != nil {
				l.t.Error(err)
			}
		}
		_, _ = arplab.IPIn(h.NS, "addr", "flush", "dev", arplab.IfName, "to", arplab.VIP+"/32")
		_, _ = arplab.IPIn(h.NS, "link", "set", arplab.IfName, "up")
		_, _ = arplab.IPIn(l.natsNS, "link", "set", "to-"+h.ID, "up")
		_ = os.Remove(l.failFile(h))
	}
	if !l.nats.running() {
		l.nats.start(l.t)
	}
}

// within reports whether cond holds within timeout, polled every 20 ms.
func within(timeout time.Duration, cond func() bool) bool {
	for deadline := time.Now().Add(timeout); ; time.Sleep(20 * time.Millisecond) {
		if cond() {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
	}
}

// waitGARP waits until h sends a gratuitous ARP at or after from, and
// returns how long after from that was.
func (l *agentLab) waitGARP(h *arplab.Host, from time.Time, timeout time.Duration) (time.Duration, bool) {
	var at time.Time
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		got, ok, err := l.watch.FirstGARP(h.MAC, from)
		if err != nil {
			l.t.Fatalf("the client stopped: %v", err)
		}
		if ok {
			at = got
			return at.Sub(from), true
		}
		time.Sleep(5 * time.Millisecond)
	}
	return 0, false
}

// labMissingInterface (defect 1): a's file puts the VIP on eth9, which a
// does not have. --check refuses it; started anyway, a (priority 100)
// must not take the VIP from b, which keeps answering: either its agent
// refuses to start, naming eth9, or it runs and its /healthz says it is
// not ready, naming eth9.
func labMissingInterface(t *testing.T, l *agentLab) {
	const cluster = "labnoif"
	a, b := l.a(), l.b()
	since := time.Now()
	l.startAgent(b, l.writeConfig(b, agentConf{cluster: cluster}))
	natstest.WaitFor(t, 30*time.Second, func() bool {
		ok, _ := l.watch.Answered(b.MAC, since)
		h, _ := l.net.Holder()
		return ok && h == b
	}, "b never held the VIP")

	file := l.writeConfig(a, agentConf{cluster: cluster, iface: "eth9"})
	if code, out := l.inHost(a, "agent", "--check", "--config", file); code == 0 || !strings.Contains(out, "eth9") {
		t.Errorf("--check of a file whose VIP is on eth9, which this host lacks: exit %d, %q; want it refused, naming eth9", code, strings.TrimSpace(out))
	}

	p := l.startAgent(a, file)
	var up time.Time
	natstest.WaitFor(t, 20*time.Second, func() bool {
		_, err := l.healthz(a)
		up = time.Now()
		return err == nil || !p.running()
	}, "a's /healthz never answered")
	if !p.running() {
		// Refusing to start is refusing the VIP too: b keeps it.
		if p.code == 0 || !strings.Contains(readFile(p.stderr), "eth9") {
			t.Errorf("a's agent exited %d without naming eth9:\n%s", p.code, readFile(p.stderr))
		}
		if h, err := l.net.Holder(); err != nil || h != b {
			t.Errorf("after a's agent exited the VIP is on %v (%v); want b", h, err)
		}
		return
	}
	// a would preempt b a preempt_delay (lease_ttl) after it is ready:
	// watch for three times that.
	from := up.Add(-100 * time.Millisecond) // b answering already
	for end := up.Add(3 * labTTL); time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
		split := l.watch.SplitBrain(from, time.Now())
		if len(split.Answerers) != 1 || split.Answerers[0] != b.MAC || split.Quiet > time.Second {
			t.Fatalf("%v after a's agent came up: answered by %v (b is %s), no answer for %v; want b answering alone throughout",
				time.Since(up).Round(time.Millisecond), split.Answerers, b.MAC, split.Quiet.Round(time.Millisecond))
		}
	}
	st, err := l.healthz(a)
	if err != nil {
		t.Fatal(err)
	}
	if len(st) != 1 || (st[0].Ready && st[0].Code == 200) || !strings.Contains(st[0].Reason, "eth9") {
		t.Errorf("a's /healthz with its VIP's interface missing: %+v; want not ready, the reason naming eth9", st)
	}
}

// labLinkDown (defect 2): the leader's LAN link goes down; b must answer
// within lease_ttl + renew_interval, and a's /healthz say why it is not
// ready. Back up, a takes the VIP back (preempt).
func labLinkDown(t *testing.T, l *agentLab) {
	a, b := l.a(), l.b()
	l.startPair("lablink")
	down := time.Now()
	l.ip(a.NS, "link", "set", arplab.IfName, "down")
	took, ok := l.waitGARP(b, down, 3*labTTL)
	if !ok || took > labTTL+labRenew {
		t.Fatalf("a's eth0 down: b's first gratuitous ARP %v after it (zero: none within %v); want within lease_ttl + renew_interval = %v",
			took.Round(time.Millisecond), 3*labTTL, labTTL+labRenew)
	}
	t.Logf("a's eth0 down: b's first gratuitous ARP %v after it", took.Round(time.Millisecond))
	natstest.WaitFor(t, 5*time.Second, func() bool {
		st, err := l.healthz(a)
		return err == nil && len(st) == 1 && !st[0].Ready && st[0].Reason != ""
	}, "a's /healthz does not say it is not ready while its VIP's interface is down")
	l.ip(a.NS, "link", "set", arplab.IfName, "up")
	l.waitSteady(a, 10*labTTL)
}

// labLinkFlap (issue 41, item 2): a link event ends the tenure at once,
// not at the next readiness reading. The leader's eth0 goes down and up
// again at once (two ip commands, a few milliseconds): the tenure ends
// however briefly the link was down, so b takes the VIP over (its
// gratuitous ARP), and a takes it back (preempt) later. A leader that
// acted on its 500 ms readiness poll instead would miss such a flap
// nearly every time, keeping the VIP while its link had gone down under
// it.
func labLinkFlap(t *testing.T, l *agentLab) {
	a, b := l.a(), l.b()
	l.startPair("labflap")
	down := time.Now()
	l.ip(a.NS, "link", "set", arplab.IfName, "down")
	l.ip(a.NS, "link", "set", arplab.IfName, "up")
	up := time.Since(down)
	took, ok := l.waitGARP(b, down, 3*labTTL)
	if !ok {
		t.Fatalf("a's eth0 down for %v, then up: no gratuitous ARP from b within %v; want b to take over: a link that went down ends the tenure",
			up.Round(time.Millisecond), 3*labTTL)
	}
	t.Logf("a's eth0 down for %v: b's first gratuitous ARP %v after it went down", up.Round(time.Millisecond), took.Round(time.Millisecond))
	l.waitSteady(a, 10*labTTL)
}

// labInterfaceGone: the leader's VIP interface is deleted; b must answer
// within lease_ttl + renew_interval.
func labInterfaceGone(t *testing.T, l *agentLab) {
	a, b := l.a(), l.b()
	l.startPair("labgone")
	gone := time.Now()
	l.ip(a.NS, "link", "del", arplab.IfName)
	took, ok := l.waitGARP(b, gone, 3*labTTL)
	if !ok || took > labTTL+labRenew {
		t.Fatalf("a's eth0 deleted: b's first gratuitous ARP %v after it (zero: none within %v); want within lease_ttl + renew_interval = %v",
			took.Round(time.Millisecond), 3*labTTL, labTTL+labRenew)
	}
	t.Logf("a's eth0 deleted: b's first gratuitous ARP %v after it", took.Round(time.Millisecond))
}

// labNATSOutage (defect 4): the nats-server is killed and restarted 4 s
// later. Safety over availability: the VIP goes from a before its
// lease could pass on, and no probe is ever answered by both. Each agent
// logs one line on losing NATS and one on having it back, and neither
// /healthz says ready with a known leader while NATS is lost.
func labNATSOutage(t *testing.T, l *agentLab) {
	a, b := l.a(), l.b()
	l.startPair("laboutage")
	skip := map[*arplab.Host]int{}
	for _, h := range l.net.Hosts {
		skip[h] = len(readFile(l.agents[h].stderr))
	}
	since := time.Now()
	l.nats.stop(syscall.SIGKILL)
	down := time.Now()
	natstest.WaitFor(t, 2*labTTL, func() bool { ok, _ := a.HoldsVIP(); return !ok }, "a kept the VIP through the outage")
	t.Logf("a's VIP gone %v into the outage", time.Since(down).Round(time.Millisecond))
	for _, h := range l.net.Hosts {
		var last []clusterHealth
		if !within(2*time.Second, func() bool {
			st, err := l.healthz(h)
			last = st
			return err == nil && len(st) == 1 && !(st[0].Ready && st[0].Leader != "")
		}) {
			t.Errorf("%s's /healthz with NATS lost and nobody holding the VIP: %+v; want it not ready with a known leader", h.ID, last)
		}
	}
	for time.Since(down) < 4*time.Second {
		time.Sleep(50 * time.Millisecond) // the outage lasts 4 s
	}
	l.nats.start(t)
	l.waitSteady(a, 30*time.Second)
	// Who leads first after the outage is defect 5's business (b, then
	// a by preempt, was seen): here only both at once counts.
	if split := l.watch.SplitBrain(since, time.Now()); split.Both > 0 {
		t.Errorf("both hosts answered one probe of the client around the outage: %+v", split)
	}
	for _, h := range []*arplab.Host{a, b} {
		p := l.agents[h]
		within(5*time.Second, func() bool { _, back := natsLogLines(p, skip[h]); return len(back) > 0 })
		lost, back := natsLogLines(p, skip[h])
		if len(lost) != 1 || len(back) != 1 {
			t.Errorf("%s's log over one outage: %d line(s) about NATS lost %q, %d about it back %q; want one each",
				h.ID, len(lost), lost, len(back), back)
		}
	}
}

// labLeftovers (defect 8): 192.0.2.100/32 left on b (as keepalived
// leaves a VIP written without a prefix) is removed when b's agent
// starts as a follower, and a /24 copy added while it runs is removed
// too: the client must not keep getting answers from both.
func labLeftovers(t *testing.T, l *agentLab) {
	a, b := l.a(), l.b()
	since := time.Now()
	l.startAgent(a, l.writeConfig(a, agentConf{cluster: "lableft"}))
	natstest.WaitFor(t, 30*time.Second, func() bool {
		ok, _ := l.watch.Answered(a.MAC, since)
		return ok && l.hasVIPWithPrefix(a, arplab.VIPBits)
	}, "a never held the VIP")
	l.ip(b.NS, "addr", "add", arplab.VIP+"/32", "dev", arplab.IfName)
	l.startAgent(b, l.writeConfig(b, agentConf{cluster: "lableft"}))
	natstest.WaitFor(t, 10*time.Second, func() bool { return l.agents[b].logged("node started") }, "b's agent did not start")
	if !within(5*labTTL, func() bool { return !l.hasVIPWithPrefix(b, 32) }) {
		t.Errorf("b's agent started as the follower and left %s/32 on its eth0 for %v: both hosts answer the client", arplab.VIP, 5*labTTL)
		l.ip(b.NS, "addr", "del", arplab.VIP+"/32", "dev", arplab.IfName) // on to the second case
	}
	l.waitSteady(a, 10*time.Second)

	l.ip(b.NS, "addr", "add", fmt.Sprintf("%s/%d", arplab.VIP, arplab.VIPBits), "dev", arplab.IfName)
	natstest.WaitFor(t, 5*labTTL, func() bool { return !l.hasVIPWithPrefix(b, arplab.VIPBits) },
		"a copy of the VIP added to the follower b's eth0 while its agent runs was still there %v later", 5*labTTL)
	clean := time.Now()
	for time.Since(clean) < time.Second {
		time.Sleep(50 * time.Millisecond) // a second of the client's probes
	}
	if split := l.watch.SplitBrain(clean, time.Now()); split.Overlap() || len(split.Answerers) != 1 || split.Answerers[0] != a.MAC {
		t.Errorf("after the leftovers went: answers %+v; want a alone", split)
	}
}
