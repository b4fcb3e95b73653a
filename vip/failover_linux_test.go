package vip

import (
	"context"
	"log/slog"
	"net"
	"net/netip"
	"sync/atomic"
	"testing"
	"time"

	cluster "github.com/ozanturksever/go-cluster"
	"github.com/ozanturksever/go-cluster/internal/natstest"
	"github.com/vishvananda/netlink"
)

// lan is three namespaces on one Ethernet segment: "a" and "b" are hosts
// running a cluster Node each, "client" owns the bridge br0 they are
// plugged into and talks to the VIP.
//
//	a: eth0 ──veth── a-port ┐
//	                        br0 (client, 198.51.100.254/24)
//	b: eth0 ──veth── b-port ┘
type lan struct {
	client, a, b *testNS
}

func newLAN(t *testing.T) *lan {
	t.Helper()
	l := &lan{client: newTestNS(t), a: newTestNS(t), b: newTestNS(t)}
	br := &netlink.Bridge{LinkAttrs: netlink.LinkAttrs{Name: "br0"}}
	if err := l.client.nl.LinkAdd(br); err != nil {
		t.Fatalf("create bridge: %v", err)
	}
	brLink := l.client.link(t, "br0")
	if err := l.client.nl.LinkSetUp(brLink); err != nil {
		t.Fatal(err)
	}
	l.client.addAddr(t, "br0", peerBase)
	for i, host := range []*testNS{l.a, l.b} {
		port := []string{"a-port", "b-port"}[i]
		host.vethTo(t, "eth0", l.client, port)
		if err := l.client.nl.LinkSetMaster(l.client.link(t, port), brLink); err != nil {
			t.Fatal(err)
		}
		host.addAddr(t, "eth0", []string{"198.51.100.1/24", "198.51.100.2/24"}[i])
	}
	return l
}

// sendUDP makes the client send a datagram to ip, which has its kernel
// resolve ip with ARP as any client of the VIP would.
func (ns *testNS) sendUDP(t *testing.T, ip string) {
	t.Helper()
	err := ns.run(func() error {
		c, err := net.Dial("udp4", net.JoinHostPort(ip, "9"))
		if err != nil {
			return err
		}
		defer c.Close()
		_, err = c.Write([]byte("hello"))
		return err
	})
	if err != nil {
		t.Fatalf("send UDP to %s: %v", ip, err)
	}
}

// Two Nodes in two namespaces: the leader holds the VIP; when it stops,
// the VIP moves to the other, the old holder has already dropped it, and
// the client's neighbour entry follows to the new MAC by gratuitous ARP
// alone.
func TestFailoverBetweenNodes(t *testing.T) {
	natstest.CheckLeaks(t)
	requireRoot(t)
	srv := natstest.RunServer(t)
	l := newLAN(t)
	ctx := context.Background()
	vip := netip.MustParseAddr(vip4)
	macA, macB := l.a.mac(t, "eth0"), l.b.mac(t, "eth0")
	nodeLog := slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelInfo}))

	newNode := func(id string, host, other *testNS, overlap *atomic.Int32) *cluster.Node {
		m, err := NewManager(Config{Address: vip4, Netmask: 24, Interface: "eth0", NetNS: host.path,
			AnnounceCount: 3, AnnounceInterval: 50 * time.Millisecond, Logger: nodeLog.With("node", id)})
		if err != nil {
			t.Fatal(err)
		}
		releaseAtCleanup(t, m)
		// Composed before the VIP hooks, this runs when the node becomes
		// leader, before it adds the VIP: the other host must not hold it.
		guard := cluster.HookFuncs{BecomeLeader: func(context.Context) error {
			if ok, _ := other.hasAddr("eth0", vip4+"/24"); ok {
				overlap.Add(1)
			}
			return nil
		}}
		n, err := cluster.NewNode(cluster.Config{
			ClusterID: "vipfailover", NodeID: id, NATSURLs: []string{srv.URL()},
			LeaseTTL: 2 * time.Second, RenewInterval: 500 * time.Millisecond, Logger: nodeLog.With("node", id),
		}, cluster.ComposeHooks(guard, NewHooks(m)))
		if err != nil {
			t.Fatalf("NewNode %s: %v", id, err)
		}
		return n
	}
	var overlap atomic.Int32
	nodeA := newNode("a", l.a, l.b, &overlap)
	nodeB := newNode("b", l.b, l.a, &overlap)
	stopped := map[*cluster.Node]bool{}
	stop := func(n *cluster.Node) {
		if stopped[n] {
			return
		}
		stopped[n] = true
		sctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		if err := n.Stop(sctx); err != nil {
			t.Errorf("Stop %s: %v", n.Config().NodeID, err)
		}
	}
	t.Cleanup(func() { stop(nodeA); stop(nodeB) })

	// a starts alone and leads; then b joins as follower.
	if err := nodeA.Start(ctx); err != nil {
		t.Fatalf("start a: %v", err)
	}
	waitFor(t, 10*time.Second, "a to lead and hold the VIP", func() (bool, error) {
		ok, err := l.a.hasAddr("eth0", vip4+"/24")
		return nodeA.IsLeader() && ok, err
	})
	if err := nodeB.Start(ctx); err != nil {
		t.Fatalf("start b: %v", err)
	}
	waitFor(t, 10*time.Second, "b to see a as leader", func() (bool, error) {
		return nodeB.Leader() == "a", nil
	})
	if ok, _ := l.b.hasAddr("eth0", vip4+"/24"); ok {
		t.Fatal("follower b holds the VIP")
	}

	// The client talks to the VIP: its kernel resolves it to a's MAC.
	l.client.sendUDP(t, vip4)
	l.client.waitNeighbour(t, "br0", net.ParseIP(vip4), macA, 5*time.Second)
	frames := l.client.captureARP(t, "br0", vip)

	// a stops: it releases the VIP before it releases the lease.
	start := time.Now()
	stop(nodeA)
	if ok, _ := l.a.hasAddr("eth0", vip4+"/24"); ok {
		t.Fatal("a still holds the VIP after Stop returned")
	}
	waitFor(t, 10*time.Second, "b to lead and hold the VIP", func() (bool, error) {
		ok, err := l.b.hasAddr("eth0", vip4+"/24")
		return nodeB.IsLeader() && ok, err
	})
	t.Logf("VIP moved a -> b %v after Stop(a) was called (epoch %d)", time.Since(start).Round(time.Millisecond), nodeB.Epoch())

	// The client learns b's MAC from the gratuitous ARP, without asking.
	expectGARP(t, frames, vip, macB, 3, 5*time.Second)
	l.client.waitNeighbour(t, "br0", net.ParseIP(vip4), macB, 5*time.Second)
	if n := overlap.Load(); n != 0 {
		t.Fatalf("a node became leader while the other still held the VIP (%d times)", n)
	}

	// b steps down: with a gone nobody leads, and the VIP is gone too.
	stop(nodeB)
	if ok, _ := l.b.hasAddr("eth0", vip4+"/24"); ok {
		t.Fatal("b still holds the VIP after Stop returned")
	}
}
