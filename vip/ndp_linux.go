package vip

import (
	"io"
	"net"
	"net/netip"
	"strconv"
	"time"

	"github.com/mdlayher/ndp"
	"golang.org/x/net/ipv6"
)

// allNodes is the link-local all-nodes multicast address (ff02::1), where
// unsolicited neighbour advertisements go (RFC 4861 §7.2.6).
var allNodes = netip.IPv6LinkLocalAllNodes()

// neighborAdvertisement is the unsolicited neighbour advertisement for
// target (RFC 4861 §4.4): Router and Solicited clear, Override set so that
// neighbours replace the link-layer address they cached, and a target
// link-layer address option (§4.6.1) carrying mac.
func neighborAdvertisement(target netip.Addr, mac net.HardwareAddr) *ndp.NeighborAdvertisement {
	return &ndp.NeighborAdvertisement{
		Override:      true,
		TargetAddress: target,
		Options: []ndp.Option{
			&ndp.LinkLayerAddress{Direction: ndp.Target, Addr: mac},
		},
	}
}

// sendNeighborAdvertisement multicasts an unsolicited neighbour
// advertisement for the address to all nodes on the link (RFC 4861 §7.2.6)
// through an ndp.Conn: source = the address (the socket is bound to it),
// hop limit 255, outgoing interface ifi, checksum filled in by the kernel.
//
// The address must already be on the interface: ndp.Listen looks for it
// there. The returned connection is open: see announce.
func (s *settings) sendNeighborAdvertisement(ifi *net.Interface) (io.Closer, error) {
	c, _, err := ndp.Listen(numericZone(ifi), ndp.Addr(s.addr.String()))
	if err != nil {
		return nil, netRawError("open NDP socket on "+ifi.Name, err)
	}
	return c, s.writeNeighborAdvertisement(c, ifi)
}

func (s *settings) writeNeighborAdvertisement(c *ndp.Conn, ifi *net.Interface) error {
	var filter ipv6.ICMPFilter // this socket only sends: let nothing queue up on it
	filter.SetAll(true)
	if err := c.SetICMPFilter(&filter); err != nil {
		return netRawError("set ICMPv6 filter", err)
	}
	if err := c.SetWriteDeadline(time.Now().Add(writeTimeout)); err != nil {
		return netRawError("set deadline", err)
	}
	// A nil control message: the Conn's own, with hop limit 255, the
	// address as source and ifi's index as outgoing interface.
	if err := c.WriteTo(neighborAdvertisement(s.addr, ifi.HardwareAddr), nil, allNodes); err != nil {
		return netRawError("send neighbour advertisement on "+ifi.Name, err)
	}
	return nil
}

// numericZone returns a copy of ifi named by its index. ndp uses the name
// as the IPv6 zone of the addresses it binds and sends to, and the net
// package and x/net map zone names to indexes through process-wide caches
// filled from whichever network namespace asked last: with a name, the
// destination can get the index of another namespace's interface, and the
// kernel refuses the send (EINVAL: it differs from the outgoing interface).
// A numeric zone (RFC 4007 §11.2) is the index itself.
func numericZone(ifi *net.Interface) *net.Interface {
	c := *ifi
	c.Name = strconv.Itoa(ifi.Index)
	return &c
}
