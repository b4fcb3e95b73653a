package vip

import (
	"fmt"
	"io"
	"net"
	"time"

	"github.com/mdlayher/arp"
	"github.com/mdlayher/ethernet"
)

// sendGratuitousARP broadcasts a gratuitous ARP request and a gratuitous
// ARP reply for the address, both with sender = target = the address and
// sender hardware address = the interface's.
//
// Receivers differ in which one they heed, so both are sent. The request
// has a zero target hardware address (an ARP announcement, RFC 5227); the
// reply repeats the sender's hardware address as target, which Linux
// requires before it treats a reply as gratuitous (arp_is_garp).
//
// The address must already be on the interface: arp.Dial wants an IPv4
// address there. The returned client is open: see announce.
func (s *settings) sendGratuitousARP(ifi *net.Interface) (io.Closer, error) {
	c, err := arp.Dial(ifi)
	if err != nil {
		return nil, netRawError("open ARP socket on "+ifi.Name, err)
	}
	return c, s.writeGratuitousARP(c, ifi)
}

func (s *settings) writeGratuitousARP(c *arp.Client, ifi *net.Interface) error {
	if err := c.SetWriteDeadline(time.Now().Add(writeTimeout)); err != nil {
		return netRawError("set deadline", err)
	}

	zero := make(net.HardwareAddr, len(ifi.HardwareAddr))
	request, err := arp.NewPacket(arp.OperationRequest, ifi.HardwareAddr, s.addr, zero, s.addr)
	if err != nil {
		return fmt.Errorf("%w: build ARP request: %w", ErrAnnounce, err)
	}
	reply, err := arp.NewPacket(arp.OperationReply, ifi.HardwareAddr, s.addr, ifi.HardwareAddr, s.addr)
	if err != nil {
		return fmt.Errorf("%w: build ARP reply: %w", ErrAnnounce, err)
	}
	if err := c.WriteTo(request, ethernet.Broadcast); err != nil {
		return netRawError("send gratuitous ARP request on "+ifi.Name, err)
	}
	if err := c.WriteTo(reply, ethernet.Broadcast); err != nil {
		return netRawError("send gratuitous ARP reply on "+ifi.Name, err)
	}
	return nil
}
