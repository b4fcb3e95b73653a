package vip

import (
	"bytes"
	"context"
	"errors"
	"net"
	"net/netip"
	"sync"
	"testing"
	"time"

	"github.com/mdlayher/arp"
	"github.com/mdlayher/ethernet"
	"github.com/mdlayher/ndp"
	"github.com/mdlayher/packet"
	"golang.org/x/net/ipv6"
)

// arpFrame is an ARP packet received on the peer, with its Ethernet header.
type arpFrame struct {
	arp *arp.Packet
	eth *ethernet.Frame
}

// captureARP receives every ARP frame on ifname in ns (through an
// mdlayher/arp client, that is an AF_PACKET socket) and delivers those
// whose sender IP is from. It stops at test cleanup.
func (ns *testNS) captureARP(tb testing.TB, ifname string, from netip.Addr) <-chan arpFrame {
	tb.Helper()
	var c *arp.Client
	err := ns.run(func() (err error) {
		ifi, err := ifaceOf(ns, ifname)
		if err != nil {
			return err
		}
		c, err = arp.Dial(ifi)
		return err
	})
	if err != nil {
		tb.Fatalf("ARP capture on %s: %v", ifname, err)
	}
	out := make(chan arpFrame, 64)
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			p, eth, err := c.Read()
			if err != nil {
				return // closed
			}
			if p.SenderIP == from {
				select {
				case out <- arpFrame{p, eth}:
				default:
					tb.Errorf("ARP capture buffer full")
				}
			}
		}
	})
	tb.Cleanup(func() {
		c.Close()
		wg.Wait()
	})
	return out
}

// ifaceOf builds a net.Interface from netlink (net.InterfaceByName caches
// names process-wide, which is wrong across namespaces).
func ifaceOf(ns *testNS, name string) (*net.Interface, error) {
	l, err := ns.nl.LinkByName(name)
	if err != nil {
		return nil, err
	}
	a := l.Attrs()
	return &net.Interface{Index: a.Index, MTU: a.MTU, Name: a.Name, HardwareAddr: a.HardwareAddr, Flags: a.Flags}, nil
}

// expectGARP waits for rounds gratuitous ARP requests and as many replies
// announcing vip from mac, checking every field that matters.
func expectGARP(tb testing.TB, frames <-chan arpFrame, vip netip.Addr, mac net.HardwareAddr, rounds int, timeout time.Duration) {
	tb.Helper()
	deadline := time.After(timeout)
	var requests, replies int
	for requests < rounds || replies < rounds {
		select {
		case f := <-frames:
			checkGARP(tb, f, vip, mac)
			if f.arp.Operation == arp.OperationRequest {
				requests++
			} else {
				replies++
			}
		case <-deadline:
			tb.Fatalf("after %v: saw %d gratuitous ARP requests and %d replies for %s, want %d of each", timeout, requests, replies, vip, rounds)
		}
	}
}

func checkGARP(tb testing.TB, f arpFrame, vip netip.Addr, mac net.HardwareAddr) {
	tb.Helper()
	p := f.arp
	switch {
	case p.SenderIP != vip || p.TargetIP != vip:
		tb.Errorf("ARP %v: sender IP %s, target IP %s; want both %s", p.Operation, p.SenderIP, p.TargetIP, vip)
	case !bytes.Equal(p.SenderHardwareAddr, mac):
		tb.Errorf("ARP %v: sender MAC %s, want the interface's %s", p.Operation, p.SenderHardwareAddr, mac)
	case !bytes.Equal(f.eth.Source, mac):
		tb.Errorf("ARP %v: Ethernet source %s, want %s", p.Operation, f.eth.Source, mac)
	case !bytes.Equal(f.eth.Destination, ethernet.Broadcast):
		tb.Errorf("ARP %v: Ethernet destination %s, want broadcast", p.Operation, f.eth.Destination)
	case p.Operation == arp.OperationReply && !bytes.Equal(p.TargetHardwareAddr, mac):
		tb.Errorf("ARP reply: target MAC %s, want the sender's %s (Linux ignores other gratuitous replies)", p.TargetHardwareAddr, mac)
	case p.Operation != arp.OperationRequest && p.Operation != arp.OperationReply:
		tb.Errorf("ARP operation %v", p.Operation)
	}
}

// naFrame is a neighbour advertisement received on the peer.
type naFrame struct {
	ethSrc   net.HardwareAddr
	ip       *ipv6.Header
	na       *ndp.NeighborAdvertisement
	checksum bool // the ICMPv6 checksum verifies
}

// captureNA receives IPv6 frames on ifname in ns (AF_PACKET, EtherType
// IPv6) and delivers the neighbour advertisements whose target is target.
func (ns *testNS) captureNA(tb testing.TB, ifname string, target netip.Addr) <-chan naFrame {
	tb.Helper()
	var c *packet.Conn
	err := ns.run(func() (err error) {
		ifi, err := ifaceOf(ns, ifname)
		if err != nil {
			return err
		}
		c, err = packet.Listen(ifi, packet.Raw, 0x86dd, nil)
		return err
	})
	if err != nil {
		tb.Fatalf("IPv6 capture on %s: %v", ifname, err)
	}
	out := make(chan naFrame, 64)
	var wg sync.WaitGroup
	wg.Go(func() {
		buf := make([]byte, 2048)
		for {
			n, _, err := c.ReadFrom(buf)
			if err != nil {
				return
			}
			if f, ok := parseNA(buf[:n]); ok && f.na.TargetAddress == target {
				select {
				case out <- f:
				default:
					tb.Errorf("NA capture buffer full")
				}
			}
		}
	})
	tb.Cleanup(func() {
		c.Close()
		wg.Wait()
	})
	return out
}

// parseNA decodes an Ethernet frame holding an ICMPv6 neighbour
// advertisement: the IPv6 header with x/net, the message with ndp.
func parseNA(b []byte) (naFrame, bool) {
	if len(b) < 14+ipv6.HeaderLen {
		return naFrame{}, false
	}
	h, err := ipv6.ParseHeader(b[14:])
	if err != nil || h.NextHeader != 58 || len(b) < 14+ipv6.HeaderLen+h.PayloadLen {
		return naFrame{}, false
	}
	payload := b[14+ipv6.HeaderLen : 14+ipv6.HeaderLen+h.PayloadLen]
	m, err := ndp.ParseMessage(payload)
	if err != nil {
		return naFrame{}, false
	}
	na, ok := m.(*ndp.NeighborAdvertisement)
	if !ok {
		return naFrame{}, false
	}
	return naFrame{
		ethSrc:   net.HardwareAddr(append([]byte(nil), b[6:12]...)),
		ip:       h,
		na:       na,
		checksum: icmpv6ChecksumOK(h, payload),
	}, true
}

// icmpv6ChecksumOK verifies the ICMPv6 checksum over the IPv6
// pseudo-header (RFC 8200 §8.1); ndp does not check it.
func icmpv6ChecksumOK(h *ipv6.Header, payload []byte) bool {
	var sum uint32
	add := func(b []byte) {
		for i := 0; i+1 < len(b); i += 2 {
			sum += uint32(b[i])<<8 | uint32(b[i+1])
		}
		if len(b)%2 == 1 {
			sum += uint32(b[len(b)-1]) << 8
		}
	}
	add(h.Src.To16())
	add(h.Dst.To16())
	n := uint32(len(payload))
	sum += n>>16 + n&0xffff
	sum += 58
	add(payload)
	for sum>>16 != 0 {
		sum = sum&0xffff + sum>>16
	}
	return sum == 0xffff
}

// expectNA waits for n neighbour advertisements for vip from mac and
// checks them.
func expectNA(tb testing.TB, frames <-chan naFrame, vip netip.Addr, mac net.HardwareAddr, n int, timeout time.Duration) {
	tb.Helper()
	deadline := time.After(timeout)
	for got := 0; got < n; got++ {
		select {
		case f := <-frames:
			checkNA(tb, f, vip, mac)
		case <-deadline:
			tb.Fatalf("after %v: saw %d neighbour advertisements for %s, want %d", timeout, got, vip, n)
		}
	}
}

func checkNA(tb testing.TB, f naFrame, vip netip.Addr, mac net.HardwareAddr) {
	tb.Helper()
	na := f.na
	switch {
	case !bytes.Equal(f.ethSrc, mac):
		tb.Errorf("NA: Ethernet source %s, want %s", f.ethSrc, mac)
	case f.ip.HopLimit != 255:
		tb.Errorf("NA: hop limit %d, want 255 (receivers drop others)", f.ip.HopLimit)
	case !f.ip.Dst.Equal(net.IPv6linklocalallnodes):
		tb.Errorf("NA: destination %s, want ff02::1", f.ip.Dst)
	case !f.ip.Src.Equal(net.IP(vip.AsSlice())):
		tb.Errorf("NA: source %s, want %s", f.ip.Src, vip)
	case na.Router || na.Solicited || !na.Override:
		tb.Errorf("NA: flags router=%v solicited=%v override=%v, want Override only", na.Router, na.Solicited, na.Override)
	case len(na.Options) != 1:
		tb.Errorf("NA: options %v, want one target link-layer address", na.Options)
	case !f.checksum:
		tb.Errorf("NA: bad ICMPv6 checksum")
	default:
		lla, ok := na.Options[0].(*ndp.LinkLayerAddress)
		if !ok || lla.Direction != ndp.Target || !bytes.Equal(lla.Addr, mac) {
			tb.Errorf("NA: option %+v, want target link-layer address %s", na.Options[0], mac)
		}
	}
}

// noMore fails if anything arrives on ch within d.
func noMore[T any](tb testing.TB, ch <-chan T, d time.Duration, what string) {
	tb.Helper()
	select {
	case f := <-ch:
		tb.Errorf("unexpected %s after release: %+v", what, f)
	case <-time.After(d):
	}
}

// releaseAtCleanup makes sure the manager's goroutine is stopped before
// the namespaces go.
func releaseAtCleanup(tb testing.TB, m *Manager) {
	tb.Cleanup(func() {
		if err := m.Release(context.Background()); err != nil && !errors.Is(err, ErrInterfaceNotFound) {
			tb.Errorf("cleanup release: %v", err)
		}
	})
}
