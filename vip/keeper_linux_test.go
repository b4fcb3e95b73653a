package vip

import (
	"context"
	"net"
	"net/netip"
	"testing"
	"time"

	"github.com/vishvananda/netlink"
)

// An address removed by someone else while held comes back at once (from
// the netlink event, not a poll: refresh is off) and is announced again.
func TestExternalRemovalIsRepaired(t *testing.T) {
	checkLeaks(t)
	p := newPair(t)
	ctx := context.Background()
	vip := netip.MustParseAddr(vip4)
	mac := p.host.mac(t, hostIf)
	frames := p.peer.captureARP(t, peerIf, vip)
	m := p.manager(t, Config{Address: vip4, Netmask: 24, AnnounceCount: 2, AnnounceInterval: 20 * time.Millisecond})
	if err := m.Acquire(ctx); err != nil {
		t.Fatal(err)
	}
	expectGARP(t, frames, vip, mac, 2, 5*time.Second)

	for i := range 3 {
		p.host.delAddr(t, hostIf, vip4+"/24")
		start := time.Now()
		waitFor(t, 2*time.Second, "the VIP to be put back", func() (bool, error) {
			return p.host.hasAddr(hostIf, vip4+"/24")
		})
		t.Logf("removal %d repaired in %v", i+1, time.Since(start).Round(time.Microsecond))
		expectGARP(t, frames, vip, mac, 2, 5*time.Second)
	}

	if err := m.Release(ctx); err != nil {
		t.Fatal(err)
	}
	// Removing it ourselves must not bring it back.
	noMore(t, frames, 200*time.Millisecond, "gratuitous ARP")
	if ok, _ := p.host.hasAddr(hostIf, vip4+"/24"); ok {
		t.Fatal("the VIP came back after Release")
	}
}

// The interface is deleted and re-created (new index, same name) while the
// address is held: the address follows to the new interface and is
// announced from its new MAC.
func TestInterfaceRecreated(t *testing.T) {
	checkLeaks(t)
	p := newPair(t)
	ctx := context.Background()
	vip := netip.MustParseAddr(vip4)
	m := p.manager(t, Config{Address: vip4, Netmask: 24, AnnounceCount: 1})
	if err := m.Acquire(ctx); err != nil {
		t.Fatal(err)
	}
	oldIndex := p.host.link(t, hostIf).Attrs().Index

	if err := p.host.nl.LinkDel(p.host.link(t, hostIf)); err != nil {
		t.Fatal(err)
	}
	// Re-create it: a new veth pair, made under another name so that the
	// peer's capture is in place before the manager can see it, then
	// renamed to vip0 and brought up.
	v := &netlink.Veth{LinkAttrs: netlink.LinkAttrs{Name: "tmp0"}, PeerName: peerIf, PeerNamespace: netlink.NsFd(int(p.peer.h))}
	if err := p.host.nl.LinkAdd(v); err != nil {
		t.Fatal(err)
	}
	if err := p.peer.nl.LinkSetUp(p.peer.link(t, peerIf)); err != nil {
		t.Fatal(err)
	}
	p.peer.addAddr(t, peerIf, peerBase)
	frames := p.peer.captureARP(t, peerIf, vip)
	if err := p.host.nl.LinkSetName(p.host.link(t, "tmp0"), hostIf); err != nil {
		t.Fatal(err)
	}
	if err := p.host.nl.LinkSetUp(p.host.link(t, hostIf)); err != nil {
		t.Fatal(err)
	}
	newMAC := p.host.mac(t, hostIf)
	if idx := p.host.link(t, hostIf).Attrs().Index; idx == oldIndex {
		t.Fatalf("re-created interface kept index %d", idx)
	}

	waitFor(t, 3*time.Second, "the VIP on the re-created interface", func() (bool, error) {
		return p.host.hasAddr(hostIf, vip4+"/24")
	})
	expectGARP(t, frames, vip, newMAC, 1, 5*time.Second)
	if ok, err := m.IsAcquired(ctx); !ok || err != nil {
		t.Fatalf("IsAcquired = %v, %v", ok, err)
	}
}

// With RefreshInterval set, announcements keep coming while held.
func TestRefresh(t *testing.T) {
	checkLeaks(t)
	p := newPair(t)
	vip := netip.MustParseAddr(vip4)
	mac := p.host.mac(t, hostIf)
	frames := p.peer.captureARP(t, peerIf, vip)
	m := p.manager(t, Config{Address: vip4, Netmask: 24, AnnounceCount: 1, RefreshInterval: 30 * time.Millisecond})
	if err := m.Acquire(context.Background()); err != nil {
		t.Fatal(err)
	}
	expectGARP(t, frames, vip, mac, 5, 5*time.Second) // 1 burst round + 4 refreshes
	if err := m.Release(context.Background()); err != nil {
		t.Fatal(err)
	}
	// Drain what was in flight, then nothing more.
	for len(frames) > 0 {
		<-frames
	}
	noMore(t, frames, 150*time.Millisecond, "gratuitous ARP")
}

// An interface that is down when the address is acquired: the address is
// added, the announcement fails, and it is sent once the link comes up.
func TestAnnounceWhenLinkComesUp(t *testing.T) {
	checkLeaks(t)
	p := newPair(t)
	vip := netip.MustParseAddr(vip4)
	mac := p.host.mac(t, hostIf)
	frames := p.peer.captureARP(t, peerIf, vip)
	p.peer.setNeighbour(t, peerIf, net.ParseIP(vip4), net.HardwareAddr{0x02, 0, 0, 0, 0, 0x99})
	if err := p.host.nl.LinkSetDown(p.host.link(t, hostIf)); err != nil {
		t.Fatal(err)
	}
	m := p.manager(t, Config{Address: vip4, Netmask: 24, AnnounceCount: 1})
	err := m.Acquire(context.Background())
	if err == nil {
		t.Fatal("Acquire on a down link announced successfully?")
	}
	t.Logf("Acquire on a down link: %v", err)
	if ok, _ := m.IsAcquired(context.Background()); !ok {
		t.Fatal("address not added on a down link")
	}
	if err := p.host.nl.LinkSetUp(p.host.link(t, hostIf)); err != nil {
		t.Fatal(err)
	}
	expectGARP(t, frames, vip, mac, 1, 5*time.Second)
	p.peer.waitNeighbour(t, peerIf, net.ParseIP(vip4), mac, 5*time.Second)
}
