package vip

import (
	"bytes"
	"context"
	"net"
	"net/netip"
	"testing"
	"time"

	"github.com/mdlayher/ndp"
	"github.com/vishvananda/netlink"
	"golang.org/x/net/ipv6"
	"golang.org/x/sys/unix"
)

func TestIPv6NeighbourAdvertisement(t *testing.T) {
	checkLeaks(t)
	p := newPair(t)
	ctx := context.Background()
	vip := netip.MustParseAddr(vip6)
	mac := p.host.mac(t, hostIf)
	frames := p.peer.captureNA(t, peerIf, vip)
	// The peer has the VIP cached from an earlier holder; the Override
	// flag makes it take the new MAC.
	p.peer.setNeighbour(t, peerIf, net.ParseIP(vip6), net.HardwareAddr{0x02, 0, 0, 0, 0, 0x99})

	m := p.manager(t, Config{Address: vip6, Netmask: 64, AnnounceCount: 2, AnnounceInterval: 20 * time.Millisecond})
	if err := m.Acquire(ctx); err != nil {
		t.Fatalf("Acquire: %v", err)
	}
	expectNA(t, frames, vip, mac, 2, 5*time.Second)
	p.peer.waitNeighbour(t, peerIf, net.ParseIP(vip6), mac, 5*time.Second)

	// Added without duplicate address detection: usable at once, never
	// tentative.
	addrs, err := p.host.nl.AddrList(p.host.link(t, hostIf), netlink.FAMILY_V6)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, a := range addrs {
		if a.IP.Equal(net.ParseIP(vip6)) {
			found = true
			if ones, _ := a.Mask.Size(); ones != 64 {
				t.Errorf("prefix /%d, want /64", ones)
			}
			if a.Flags&unix.IFA_F_NODAD == 0 || a.Flags&(unix.IFA_F_TENTATIVE|unix.IFA_F_DADFAILED) != 0 {
				t.Errorf("address flags %#x: want nodad, not tentative or dadfailed", a.Flags)
			}
		}
	}
	if !found {
		t.Fatalf("%s not on %s", vip6, hostIf)
	}
	if ok, err := m.IsAcquired(ctx); !ok || err != nil {
		t.Fatalf("IsAcquired = %v, %v", ok, err)
	}

	// Removed externally: put back and announced again.
	p.host.delAddr(t, hostIf, vip6+"/64")
	waitFor(t, 2*time.Second, "the IPv6 VIP to be put back", func() (bool, error) {
		return p.host.hasAddr(hostIf, vip6+"/64")
	})
	expectNA(t, frames, vip, mac, 2, 5*time.Second)

	if err := m.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if ok, _ := p.host.hasAddr(hostIf, vip6+"/64"); ok {
		t.Fatal("IPv6 VIP still there after Release")
	}
	noMore(t, frames, 100*time.Millisecond, "neighbour advertisement")
}

// TestNeighborAdvertisementWire checks the bytes ndp makes of the message
// against RFC 4861 §4.4 and §4.6.1 (the checksum is the kernel's).
func TestNeighborAdvertisementWire(t *testing.T) {
	mac := net.HardwareAddr{0x02, 0x11, 0x22, 0x33, 0x44, 0x55}
	b, err := ndp.MarshalMessage(neighborAdvertisement(netip.MustParseAddr("2001:db8::100"), mac))
	if err != nil {
		t.Fatal(err)
	}
	want := []byte{
		136, 0, 0, 0, // type Neighbor Advertisement, code 0, checksum left to the kernel
		0x20, 0, 0, 0, // R=0 S=0 O=1, reserved
		0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x01, 0x00, // target
		2, 1, 0x02, 0x11, 0x22, 0x33, 0x44, 0x55, // target link-layer address option
	}
	if !bytes.Equal(b, want) {
		t.Fatalf("message\n got %x\nwant %x", b, want)
	}
}

// TestIPv6AnnounceOtherNamespaceZone announces while the net package's
// process-wide zone cache maps the interface's name to the index of a
// same-named interface in another namespace, as it does in a process that
// works in several: the advertisement must still leave through the right
// interface (a zone name resolved through that cache gets EINVAL).
func TestIPv6AnnounceOtherNamespaceZone(t *testing.T) {
	checkLeaks(t)
	p := newPair(t)
	vip := netip.MustParseAddr(vip6)
	mac := p.host.mac(t, hostIf)
	frames := p.peer.captureNA(t, peerIf, vip)

	other := newTestNS(t)
	const otherIndex = 4242
	v := &netlink.Veth{LinkAttrs: netlink.LinkAttrs{Name: hostIf, Index: otherIndex}, PeerName: "zone0"}
	if err := other.nl.LinkAdd(v); err != nil {
		t.Fatalf("create %s in another namespace: %v", hostIf, err)
	}
	if got := other.link(t, hostIf).Attrs().Index; got == p.host.link(t, hostIf).Attrs().Index {
		t.Fatalf("%s has index %d in both namespaces", hostIf, got)
	}
	// An unknown zone name makes the net package and x/net (which keeps
	// its own cache) reload their caches, here from the other namespace.
	err := other.run(func() error {
		c, err := net.ListenPacket("udp6", "[::1]:0")
		if err != nil {
			return err
		}
		defer c.Close()
		dst := &net.UDPAddr{IP: net.IPv6loopback, Port: c.LocalAddr().(*net.UDPAddr).Port, Zone: "no-such-interface"}
		if _, err := c.WriteTo([]byte{0}, dst); err != nil {
			return err
		}
		_, err = ipv6.NewPacketConn(c).WriteTo([]byte{0}, nil, dst)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}

	m := p.manager(t, Config{Address: vip6, Netmask: 64, AnnounceCount: 1, AnnounceInterval: 20 * time.Millisecond})
	if err := m.Acquire(context.Background()); err != nil {
		t.Fatalf("Acquire: %v", err)
	}
	expectNA(t, frames, vip, mac, 1, 2*time.Second)
}
