package proctest

import (
	"net"
	"net/netip"
	"sync"
	"testing"
	"time"

	"github.com/mdlayher/arp"
	"github.com/ozanturksever/go-cluster/internal/proof/arplab"
	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
)

// firstGARP returns a channel that receives the time the first ARP frame
// from vip arrives on ifname of network namespace nsName (an AF_PACKET
// socket opened in the namespace). It stops at cleanup.
func firstGARP(t *testing.T, nsName, ifname string, vip netip.Addr) <-chan time.Time {
	t.Helper()
	var c *arp.Client
	// The socket stays in the namespace.
	err := arplab.InNetNS(arplab.NSPath(nsName), func() error {
		l, err := netlink.LinkByName(ifname)
		if err != nil {
			return err
		}
		a := l.Attrs()
		c, err = arp.Dial(&net.Interface{Index: a.Index, MTU: a.MTU, Name: a.Name, HardwareAddr: a.HardwareAddr, Flags: a.Flags})
		return err
	})
	if err != nil {
		t.Fatalf("ARP capture on %s in %s: %v", ifname, nsName, err)
	}
	out := make(chan time.Time, 1)
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			p, _, err := c.Read()
			if err != nil {
				return // closed
			}
			if p.SenderIP == vip {
				select {
				case out <- time.Now():
				default: // only the first counts
				}
			}
		}
	})
	t.Cleanup(func() {
		c.Close()
		wg.Wait()
	})
	return out
}

// addrRemoved returns a channel that receives the time cidr is removed
// from an interface of namespace nsName (a netlink address event).
func addrRemoved(t *testing.T, nsName, cidr string) <-chan time.Time {
	t.Helper()
	h, err := netns.GetFromName(nsName)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	updates, done := make(chan netlink.AddrUpdate, 64), make(chan struct{})
	if err := netlink.AddrSubscribeWithOptions(updates, done, netlink.AddrSubscribeOptions{Namespace: &h}); err != nil {
		t.Fatalf("address events of %s: %v", nsName, err)
	}
	out := make(chan time.Time, 1)
	var wg sync.WaitGroup
	wg.Go(func() {
		for u := range updates {
			if !u.NewAddr && u.LinkAddress.String() == cidr {
				select {
				case out <- time.Now():
				default:
				}
			}
		}
	})
	t.Cleanup(func() {
		close(done)
		wg.Wait()
	})
	return out
}

// exited returns a channel that receives the time process pid is gone
// (polled every millisecond). It stops at cleanup.
func exited(t *testing.T, pid int) <-chan time.Time {
	out := make(chan time.Time, 1)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
				if !alive(pid) {
					out <- time.Now()
					return
				}
			}
		}
	})
	t.Cleanup(func() {
		close(stop)
		wg.Wait()
	})
	return out
}
