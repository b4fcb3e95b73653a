package vip

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"testing"
	"time"
)

func TestAcquireAnnouncesAndReleaseRemoves(t *testing.T) {
	checkLeaks(t)
	p := newPair(t)
	ctx := context.Background()
	vip := netip.MustParseAddr(vip4)
	mac := p.host.mac(t, hostIf)
	frames := p.peer.captureARP(t, peerIf, vip)
	// The peer has talked to the VIP before, when another host had it.
	p.peer.setNeighbour(t, peerIf, net.ParseIP(vip4), net.HardwareAddr{0x02, 0, 0, 0, 0, 0x99})

	m := p.manager(t, Config{Address: vip4, Netmask: 24, AnnounceCount: 3, AnnounceInterval: 20 * time.Millisecond})
	if err := m.Acquire(ctx); err != nil {
		t.Fatalf("Acquire: %v", err)
	}
	if ok, err := p.host.hasAddr(hostIf, vip4+"/24"); !ok || err != nil {
		t.Fatalf("after Acquire, netlink shows %s/24 on %s: %v, %v", vip4, hostIf, ok, err)
	}
	if ok, err := m.IsAcquired(ctx); !ok || err != nil {
		t.Fatalf("IsAcquired = %v, %v; want true", ok, err)
	}
	expectGARP(t, frames, vip, mac, 3, 5*time.Second)
	p.peer.waitNeighbour(t, peerIf, net.ParseIP(vip4), mac, 5*time.Second)

	if err := m.Release(ctx); err != nil {
		t.Fatalf("Release: %v", err)
	}
	if ok, err := p.host.hasAddr(hostIf, vip4+"/24"); ok || err != nil {
		t.Fatalf("after Release, netlink shows %s/24 on %s: %v, %v", vip4, hostIf, ok, err)
	}
	if ok, err := m.IsAcquired(ctx); ok || err != nil {
		t.Fatalf("IsAcquired after Release = %v, %v; want false", ok, err)
	}
	if ok, _ := p.host.hasAddr(hostIf, hostBase); !ok {
		t.Fatalf("Release removed the interface's own address %s", hostBase)
	}
	noMore(t, frames, 100*time.Millisecond, "gratuitous ARP")
}

func TestIdempotent(t *testing.T) {
	checkLeaks(t)
	p := newPair(t)
	ctx := context.Background()
	m := p.manager(t, Config{Address: vip4, Netmask: 24, AnnounceCount: 1})

	if err := m.Release(ctx); err != nil {
		t.Fatalf("Release of an absent address: %v", err)
	}
	for i := range 2 {
		if err := m.Acquire(ctx); err != nil {
			t.Fatalf("Acquire #%d: %v", i+1, err)
		}
	}
	// Someone else already put the address there: still success.
	m2 := p.manager(t, Config{Address: vip4, Netmask: 24, AnnounceCount: 1})
	if err := m2.Acquire(ctx); err != nil {
		t.Fatalf("Acquire of an address already on the link: %v", err)
	}
	if err := m2.Release(ctx); err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		if err := m.Release(ctx); err != nil {
			t.Fatalf("Release #%d: %v", i+1, err)
		}
	}

	// Release while the interface has vanished.
	if err := m.Acquire(ctx); err != nil {
		t.Fatal(err)
	}
	if err := p.host.nl.LinkDel(p.host.link(t, hostIf)); err != nil {
		t.Fatal(err)
	}
	if err := m.Release(ctx); err != nil {
		t.Fatalf("Release after the interface vanished: %v", err)
	}
	if _, err := m.IsAcquired(ctx); !errors.Is(err, ErrInterfaceNotFound) {
		t.Fatalf("IsAcquired on a missing interface: %v, want ErrInterfaceNotFound", err)
	}
}

func TestIsAcquiredMatchesExactly(t *testing.T) {
	checkLeaks(t)
	p := newPair(t)
	ctx := context.Background()
	m := p.manager(t, Config{Address: "10.0.0.1", Netmask: 24, AnnounceCount: 1})

	// Look-alikes: substring, same address with another prefix, same
	// subnet, and the address on another interface.
	for _, a := range []string{"110.0.0.1/24", "10.0.0.10/24", "10.0.0.1/16", "10.0.0.11/24"} {
		p.host.addAddr(t, hostIf, a)
	}
	p.host.vethTo(t, "other0", p.peer, "other1")
	p.host.addAddr(t, "other0", "10.0.0.1/24")
	if ok, err := m.IsAcquired(ctx); ok || err != nil {
		t.Fatalf("IsAcquired with only look-alikes = %v, %v; want false", ok, err)
	}

	if err := m.Acquire(ctx); err != nil {
		t.Fatal(err)
	}
	if ok, err := m.IsAcquired(ctx); !ok || err != nil {
		t.Fatalf("IsAcquired = %v, %v; want true", ok, err)
	}
	if err := m.Release(ctx); err != nil {
		t.Fatal(err)
	}
	for _, a := range []string{"110.0.0.1/24", "10.0.0.10/24", "10.0.0.1/16", "10.0.0.11/24"} {
		if ok, _ := p.host.hasAddr(hostIf, a); !ok {
			t.Errorf("Release removed look-alike %s", a)
		}
	}
	if ok, _ := p.host.hasAddr("other0", "10.0.0.1/24"); !ok {
		t.Errorf("Release removed the address from another interface")
	}
}

func TestAcquireUnknownInterface(t *testing.T) {
	checkLeaks(t)
	p := newPair(t)
	m := p.manager(t, Config{Address: vip4, Netmask: 24, Interface: "nosuch0"})
	err := m.Acquire(context.Background())
	if !errors.Is(err, ErrInterfaceNotFound) {
		t.Fatalf("Acquire on a missing interface: %v, want ErrInterfaceNotFound", err)
	}
	t.Logf("error reads: %v", err)
	if err := m.Release(context.Background()); err != nil {
		t.Fatalf("Release on a missing interface: %v", err)
	}
}

func TestAcquireCancelledContext(t *testing.T) {
	checkLeaks(t)
	p := newPair(t)
	m := p.manager(t, Config{Address: vip4, Netmask: 24})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := m.Acquire(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("Acquire with a cancelled context: %v", err)
	}
	if ok, _ := p.host.hasAddr(hostIf, vip4+"/24"); ok {
		t.Fatal("address added despite the cancelled context")
	}
}

func TestBadNetNS(t *testing.T) {
	checkLeaks(t)
	requireRoot(t)
	m, err := NewManager(Config{Address: vip4, Netmask: 24, Interface: hostIf, NetNS: "/nonexistent/netns", Logger: testLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Acquire(context.Background()); !errors.Is(err, ErrNetNS) {
		t.Fatalf("Acquire in a missing namespace: %v, want ErrNetNS", err)
	}
}
