package vip

import (
	"fmt"
	"io"
	"net"
	"time"
)

// writeTimeout bounds one announcement write; a raw socket write only
// blocks when the device queue is full.
const writeTimeout = time.Second

// announce sends one announcement round for the address: a gratuitous ARP
// request and reply for IPv4, an unsolicited neighbour advertisement for
// IPv6. It runs in the namespace of the calling thread.
//
// It returns the socket it used, still open, for the caller to close later
// (even when err is set; nil when there is none). Closing an AF_PACKET
// socket waits for an RCU grace period in the kernel (synchronize_net),
// 10-15 ms, long after the frames have left: callers close it off the
// critical path, outside Manager.mu.
func (s *settings) announce() (io.Closer, error) {
	ifi, err := s.ethernetInterface()
	if err != nil {
		return nil, err
	}
	if s.addr.Is4() {
		return s.sendGratuitousARP(ifi)
	}
	return s.sendNeighborAdvertisement(ifi)
}

// ethernetInterface looks the interface up (netlink, by name, now) and
// checks that it has an Ethernet address to announce.
func (s *settings) ethernetInterface() (*net.Interface, error) {
	link, err := s.lookupLink()
	if err != nil {
		return nil, err
	}
	a := link.Attrs()
	if len(a.HardwareAddr) != 6 {
		return nil, fmt.Errorf("%w: %s has no Ethernet address (link type %s)", ErrAnnounce, s.Interface, link.Type())
	}
	// Built from the netlink answer rather than net.InterfaceByName, whose
	// name cache is process-wide and can be wrong across namespaces.
	return &net.Interface{
		Index:        a.Index,
		MTU:          a.MTU,
		Name:         a.Name,
		HardwareAddr: a.HardwareAddr,
		Flags:        a.Flags,
	}, nil
}
