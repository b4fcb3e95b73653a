package vip

import (
	"io"
	"net"
	"net/netip"
	"time"

	"golang.org/x/net/icmp"
	"golang.org/x/net/ipv6"
)

// Neighbour advertisement layout (RFC 4861 §4.4) and its target link-layer
// address option (§4.6.1).
const (
	naFlagOverride     = 0x20 // O: replace cached link-layer addresses
	naOptionTargetLLA  = 2    // option type: target link-layer address
	naBodyLen          = 4 + 16
	naOptionEthernetSz = 8 // type, length (in units of 8 octets), 6-byte MAC
)

// neighborAdvertisementBody returns the ICMPv6 message body (after type,
// code and checksum) of an unsolicited neighbour advertisement for target:
// flags Router=0, Solicited=0, Override=1, then the target address and a
// target link-layer address option carrying mac.
func neighborAdvertisementBody(target netip.Addr, mac net.HardwareAddr) []byte {
	b := make([]byte, naBodyLen+naOptionEthernetSz)
	b[0] = naFlagOverride
	t := target.As16()
	copy(b[4:20], t[:])
	b[20] = naOptionTargetLLA
	b[21] = naOptionEthernetSz / 8
	copy(b[22:28], mac)
	return b
}

// sendNeighborAdvertisement multicasts an unsolicited neighbour
// advertisement for the address to all nodes on the link (RFC 4861 §7.2.6):
// source = the address, hop limit 255, Override set, so that neighbours
// that cache the address point it at this interface.
//
// The packet goes through a raw ICMPv6 socket (golang.org/x/net); the
// kernel builds the IPv6 header and fills in the ICMPv6 checksum, which it
// always does for raw ICMPv6 sockets.
//
// The returned socket is open: see announce.
func (s *settings) sendNeighborAdvertisement(ifi *net.Interface) (io.Closer, error) {
	conn, err := icmp.ListenPacket("ip6:ipv6-icmp", "::")
	if err != nil {
		return nil, netRawError("open ICMPv6 socket", err)
	}
	return conn, s.writeNeighborAdvertisement(conn.IPv6PacketConn(), ifi)
}

func (s *settings) writeNeighborAdvertisement(p *ipv6.PacketConn, ifi *net.Interface) error {

	var filter ipv6.ICMPFilter // this socket only sends: let nothing queue up on it
	filter.SetAll(true)
	if err := p.SetICMPFilter(&filter); err != nil {
		return netRawError("set ICMPv6 filter", err)
	}
	// Our own advertisement looped back would make the kernel complain
	// that someone else advertises its address.
	if err := p.SetMulticastLoopback(false); err != nil {
		return netRawError("disable multicast loopback", err)
	}
	if err := p.SetMulticastHopLimit(255); err != nil {
		return netRawError("set hop limit", err)
	}
	if err := p.SetWriteDeadline(time.Now().Add(writeTimeout)); err != nil {
		return netRawError("set deadline", err)
	}

	msg := icmp.Message{
		Type: ipv6.ICMPTypeNeighborAdvertisement,
		Body: &icmp.RawBody{Data: neighborAdvertisementBody(s.addr, ifi.HardwareAddr)},
	}
	b, err := msg.Marshal(nil) // checksum left to the kernel
	if err != nil {
		return netRawError("build neighbour advertisement", err)
	}
	cm := &ipv6.ControlMessage{HopLimit: 255, Src: net.IP(s.addr.AsSlice()), IfIndex: ifi.Index}
	if _, err := p.WriteTo(b, cm, &net.IPAddr{IP: net.IPv6linklocalallnodes}); err != nil {
		return netRawError("send neighbour advertisement on "+ifi.Name, err)
	}
	return nil
}
