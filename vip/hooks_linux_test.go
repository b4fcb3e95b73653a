package vip

import (
	"context"
	"errors"
	"testing"
	"time"
)

func TestHooksFollowTenure(t *testing.T) {
	checkLeaks(t)
	p := newPair(t)
	m := p.manager(t, Config{Address: vip4, Netmask: 24, AnnounceCount: 1})
	h := NewHooks(m)

	tenure, end := context.WithCancel(context.Background())
	if err := h.OnBecomeLeader(tenure); err != nil {
		t.Fatalf("OnBecomeLeader: %v", err)
	}
	if ok, _ := p.host.hasAddr(hostIf, vip4+"/24"); !ok {
		t.Fatal("no VIP after OnBecomeLeader returned")
	}
	if err := h.OnLeaderChange(context.Background(), "me"); err != nil {
		t.Fatal(err)
	}
	if ok, _ := p.host.hasAddr(hostIf, vip4+"/24"); !ok {
		t.Fatal("OnLeaderChange while leading removed the VIP")
	}

	// The address goes when the tenure ends, before OnLoseLeadership.
	end()
	waitFor(t, 2*time.Second, "release on tenure end", func() (bool, error) {
		ok, err := p.host.hasAddr(hostIf, vip4+"/24")
		return !ok, err
	})
	if err := h.OnLoseLeadership(context.Background()); err != nil {
		t.Fatalf("OnLoseLeadership: %v", err)
	}
}

func TestHooksRetryUntilAcquired(t *testing.T) {
	checkLeaks(t)
	p := newPair(t)
	m := p.manager(t, Config{Address: vip4, Netmask: 24, AnnounceCount: 1, Interface: "late0"})
	h := NewHooks(m, WithRetry(10*time.Millisecond, 50*time.Millisecond))

	tenure, end := context.WithCancel(context.Background())
	defer end()
	err := h.OnBecomeLeader(tenure)
	if !errors.Is(err, ErrInterfaceNotFound) {
		t.Fatalf("OnBecomeLeader without the interface: %v, want ErrInterfaceNotFound", err)
	}
	p.host.vethTo(t, "late0", p.peer, "late1")
	waitFor(t, 3*time.Second, "the VIP once the interface exists", func() (bool, error) {
		return p.host.hasAddr("late0", vip4+"/24")
	})
	end()
	if err := h.OnLoseLeadership(context.Background()); err != nil {
		t.Fatalf("OnLoseLeadership: %v", err)
	}
	if ok, _ := p.host.hasAddr("late0", vip4+"/24"); ok {
		t.Fatal("VIP still there after OnLoseLeadership")
	}
}

func TestHooksStepDownWhenAcquireKeepsFailing(t *testing.T) {
	checkLeaks(t)
	p := newPair(t)
	m := p.manager(t, Config{Address: vip4, Netmask: 24, Interface: "never0"})
	steppedDown := make(chan struct{}, 10)
	h := NewHooks(m, WithRetry(10*time.Millisecond, 20*time.Millisecond),
		WithStepDown(100*time.Millisecond, func(context.Context) error {
			steppedDown <- struct{}{}
			return nil
		}))
	tenure, end := context.WithCancel(context.Background())
	defer end()
	start := time.Now()
	if err := h.OnBecomeLeader(tenure); err == nil {
		t.Fatal("OnBecomeLeader succeeded without the interface")
	}
	select {
	case <-steppedDown:
		if d := time.Since(start); d < 100*time.Millisecond {
			t.Fatalf("stepped down after %v, before the 100ms allowed", d)
		}
	case <-time.After(3 * time.Second):
		t.Fatal("no step-down")
	}
	end()
	if err := h.OnLoseLeadership(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n := len(steppedDown); n != 0 {
		t.Fatalf("stepped down %d more times", n)
	}
}

func TestHooksRemoveStaleVIP(t *testing.T) {
	checkLeaks(t)
	p := newPair(t)
	m := p.manager(t, Config{Address: vip4, Netmask: 24})
	h := NewHooks(m)
	p.host.addAddr(t, hostIf, vip4+"/24") // left by a crash

	if err := h.OnLeaderChange(context.Background(), ""); err != nil {
		t.Fatal(err)
	}
	if ok, _ := p.host.hasAddr(hostIf, vip4+"/24"); !ok {
		t.Fatal("removed while nobody leads")
	}
	if err := h.OnLeaderChange(context.Background(), "node-2"); err != nil {
		t.Fatal(err)
	}
	if ok, _ := p.host.hasAddr(hostIf, vip4+"/24"); ok {
		t.Fatal("stale VIP still there while another node leads")
	}
	// OnLoseLeadership without a tenure also makes sure it is gone.
	p.host.addAddr(t, hostIf, vip4+"/24")
	if err := h.OnLoseLeadership(context.Background()); err != nil {
		t.Fatal(err)
	}
	if ok, _ := p.host.hasAddr(hostIf, vip4+"/24"); ok {
		t.Fatal("VIP still there after OnLoseLeadership")
	}
}
