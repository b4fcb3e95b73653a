package vip

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

// monitorErr waits until mo.Err's text is want ("" for nil).
func monitorErr(t *testing.T, mo *Monitor, want string) {
	t.Helper()
	waitFor(t, 5*time.Second, "Monitor.Err "+want, func() (bool, error) { return errText(mo.Err()) == want, nil })
}

// A Monitor follows its interface from link events: down, no carrier,
// up, deleted; each change is reported once to onChange.
func TestMonitorTracksTheInterface(t *testing.T) {
	checkLeaks(t)
	p := newPair(t)
	m := p.manager(t, Config{Address: vip4, Netmask: 24})
	changes := make(chan error, 16)
	mo := NewMonitor(m, func(err error) { changes <- err })
	defer mo.Close()
	if err := mo.Err(); err != nil {
		t.Fatalf("Err %v for an interface that is up", err)
	}

	if err := p.host.nl.LinkSetDown(p.host.link(t, hostIf)); err != nil {
		t.Fatal(err)
	}
	monitorErr(t, mo, "vip "+vip4+"/24: interface "+hostIf+" is down")
	var ie *InterfaceError
	if err := mo.Err(); !errors.Is(err, ErrInterfaceDown) || !errors.As(err, &ie) || ie.Interface != hostIf {
		t.Fatalf("Err %v: want an *InterfaceError wrapping ErrInterfaceDown", err)
	}
	if err := p.host.nl.LinkSetUp(p.host.link(t, hostIf)); err != nil {
		t.Fatal(err)
	}
	monitorErr(t, mo, "")

	if err := p.peer.nl.LinkSetDown(p.peer.link(t, peerIf)); err != nil {
		t.Fatal(err)
	}
	monitorErr(t, mo, "vip "+vip4+"/24: interface "+hostIf+" has no carrier")
	if err := p.peer.nl.LinkSetUp(p.peer.link(t, peerIf)); err != nil {
		t.Fatal(err)
	}
	monitorErr(t, mo, "")

	if err := p.host.nl.LinkDel(p.host.link(t, hostIf)); err != nil {
		t.Fatal(err)
	}
	monitorErr(t, mo, "vip "+vip4+"/24: interface "+hostIf+" does not exist")
	if !errors.Is(mo.Err(), ErrInterfaceNotFound) {
		t.Fatalf("Err %v: want ErrInterfaceNotFound", mo.Err())
	}
	mo.Close()
	close(changes)
	var seen []string
	for err := range changes {
		seen = append(seen, errText(err))
	}
	// The kernel may pass through intermediate states (a veth taken down
	// loses its carrier too), but each change is reported once.
	for i := 1; i < len(seen); i++ {
		if seen[i] == seen[i-1] {
			t.Fatalf("onChange reported %q twice in a row: %q", seen[i], seen)
		}
	}
	if len(seen) < 5 || seen[len(seen)-1] != "vip "+vip4+"/24: interface "+hostIf+" does not exist" {
		t.Fatalf("onChange saw %q, want at least down, up, no carrier, up, gone", seen)
	}
}

// A Monitor of an interface that does not exist says so from the start.
func TestMonitorMissingInterface(t *testing.T) {
	checkLeaks(t)
	p := newPair(t)
	m := p.manager(t, Config{Address: vip4, Netmask: 24, Interface: "eth9"})
	mo := NewMonitor(m, nil)
	defer mo.Close()
	if err := mo.Err(); !errors.Is(err, ErrInterfaceNotFound) || err.Error() != "vip "+vip4+"/24: interface eth9 does not exist" {
		t.Fatalf("Err %v", err)
	}
}

// While the Manager does not hold the VIP, a Monitor removes every copy of
// its IP on the interface, whatever the prefix: there at the start, added
// later, and left behind when the Manager releases its own. While it is
// held, copies stay. Other addresses are never touched.
func TestMonitorRemovesStrayCopies(t *testing.T) {
	checkLeaks(t)
	p := newPair(t)
	ctx := context.Background()
	m := p.manager(t, Config{Address: vip4, Netmask: 24, AnnounceCount: 1})
	p.host.addAddr(t, hostIf, vip4+"/32")
	mo := NewMonitor(m, nil)
	defer mo.Close()
	if ok, err := p.host.hasAddr(hostIf, vip4+"/32"); err != nil || ok {
		t.Fatalf("the /32 copy there at the start is still there after NewMonitor (%v)", err)
	}

	p.host.addAddr(t, hostIf, vip4+"/24")
	waitFor(t, 5*time.Second, "the /24 copy to go", func() (bool, error) {
		ok, err := p.host.hasAddr(hostIf, vip4+"/24")
		return !ok, err
	})

	if err := m.Acquire(ctx); err != nil {
		t.Fatal(err)
	}
	p.host.addAddr(t, hostIf, vip4+"/32")
	if err := m.Release(ctx); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 5*time.Second, "the /32 copy to go after the release", func() (bool, error) {
		ok, err := p.host.hasAddr(hostIf, vip4+"/32")
		return !ok, err
	})
	if ok, err := p.host.hasAddr(hostIf, hostBase); err != nil || !ok {
		t.Fatalf("the host's own address %s was removed (%v)", hostBase, err)
	}
}

// Hooks.Err says why a leader does not hold its VIP, and is nil once
// leadership ends or when the VIP is held.
func TestHooksErr(t *testing.T) {
	checkLeaks(t)
	p := newPair(t)
	bad := NewHooks(p.manager(t, Config{Address: vip4, Netmask: 24, Interface: "eth9"}), WithRetry(10*time.Millisecond, 20*time.Millisecond))
	ctx, cancel := context.WithCancel(context.Background())
	if err := bad.OnBecomeLeader(ctx); err == nil {
		t.Fatal("OnBecomeLeader succeeded without the interface")
	}
	err := bad.Err()
	if !errors.Is(err, ErrInterfaceNotFound) || err.Error()[:len("vip "+vip4+"/24: not held")] != "vip "+vip4+"/24: not held" {
		t.Fatalf("Err %v", err)
	}
	cancel()
	if err := bad.OnLoseLeadership(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := bad.Err(); err != nil {
		t.Fatalf("Err %v after leadership ended", err)
	}

	// With a hold-off, the failure outlives the tenure, until a tenure
	// holds the address.
	held := NewHooks(p.manager(t, Config{Address: vip4, Netmask: 24, Interface: "eth9", AnnounceCount: 1}),
		WithRetry(10*time.Millisecond, 20*time.Millisecond), WithFailureHoldOff(time.Hour, 2*time.Hour))
	ctx, cancel = context.WithCancel(context.Background())
	_ = held.OnBecomeLeader(ctx)
	cancel()
	if err := held.OnLoseLeadership(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := held.Err(); !errors.Is(err, ErrInterfaceNotFound) || !strings.Contains(err.Error(), "out of elections for 1h0m0s more") {
		t.Fatalf("Err %v during the hold-off", err)
	}
	p.host.vethTo(t, "eth9", p.peer, "peer9")
	ctx, cancel = context.WithCancel(context.Background())
	if err := held.OnBecomeLeader(ctx); err != nil {
		t.Fatal(err)
	}
	cancel()
	if err := held.OnLoseLeadership(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := held.Err(); err != nil {
		t.Fatalf("Err %v after a tenure that held the address", err)
	}

	good := NewHooks(p.manager(t, Config{Address: vip4, Netmask: 24, AnnounceCount: 1}))
	ctx, cancel = context.WithCancel(context.Background())
	defer cancel()
	if err := good.OnBecomeLeader(ctx); err != nil {
		t.Fatal(err)
	}
	if err := good.Err(); err != nil {
		t.Fatalf("Err %v while the VIP is held", err)
	}
	cancel()
	if err := good.OnLoseLeadership(context.Background()); err != nil {
		t.Fatal(err)
	}
}
