package vip

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"testing"
	"time"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
	"go.uber.org/goleak"
	"golang.org/x/sys/unix"
)

// The tests run for real: they create network namespaces joined by veth
// pairs, so they need root (CAP_SYS_ADMIN, CAP_NET_ADMIN, CAP_NET_RAW).

// skipOrFail skips the test with msg, except in CI (CI set in the
// environment), where the test must not silently skip: it fails instead.
func skipOrFail(tb testing.TB, msg string) {
	tb.Helper()
	if os.Getenv("CI") != "" {
		tb.Fatalf("%s (CI=%q is set: this must not be skipped in CI)", msg, os.Getenv("CI"))
	}
	tb.Skip(msg)
}

// requireRoot skips (fails in CI) unless the process runs as root.
func requireRoot(tb testing.TB) {
	tb.Helper()
	if os.Geteuid() != 0 {
		skipOrFail(tb, "vip: this test needs root to create network namespaces, veth pairs and raw sockets; run it as root: sudo -E go test ./vip/...")
	}
}

// checkLeaks registers, first, a cleanup that runs last and fails the test
// if goroutines started during it are still running.
func checkLeaks(tb testing.TB) {
	tb.Helper()
	opt := goleak.IgnoreCurrent()
	tb.Cleanup(func() { goleak.VerifyNone(tb, opt) })
}

// testLogger logs to the test's output.
func testLogger(tb testing.TB) *slog.Logger {
	return slog.New(slog.NewTextHandler(tb.Output(), &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// waitFor polls cond until it is true or timeout passes.
func waitFor(tb testing.TB, timeout time.Duration, what string, cond func() (bool, error)) {
	tb.Helper()
	deadline := time.Now().Add(timeout)
	var lastErr error
	for {
		ok, err := cond()
		if ok && err == nil {
			return
		}
		lastErr = err
		if time.Now().After(deadline) {
			tb.Fatalf("timed out after %v waiting for %s (last error: %v)", timeout, what, lastErr)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// testNS is a network namespace made for one test. It lives while its
// handle is open, and goes away with the veths in it at cleanup (or when
// the test process dies).
type testNS struct {
	h    netns.NsHandle
	path string // /proc/<pid>/fd/<fd>: usable as Config.NetNS
	nl   *netlink.Handle
}

func newTestNS(tb testing.TB) *testNS {
	tb.Helper()
	requireRoot(tb)
	var h netns.NsHandle
	err := onNewThread(func() (err error) {
		h, err = netns.New() // the thread moves into it, and dies with it
		return err
	})
	if errors.Is(err, unix.EPERM) {
		skipOrFail(tb, "vip: cannot create a network namespace (no CAP_SYS_ADMIN in this container?): "+err.Error())
	}
	if err != nil {
		tb.Fatalf("create network namespace: %v", err)
	}
	nl, err := netlink.NewHandleAt(h)
	if err != nil {
		h.Close()
		tb.Fatalf("netlink handle: %v", err)
	}
	ns := &testNS{h: h, path: fmt.Sprintf("/proc/%d/fd/%d", os.Getpid(), int(h)), nl: nl}
	tb.Cleanup(func() {
		nl.Close()
		h.Close()
	})
	lo, err := nl.LinkByName("lo")
	if err == nil {
		err = nl.LinkSetUp(lo)
	}
	if err != nil {
		tb.Fatalf("bring lo up: %v", err)
	}
	return ns
}

// run runs fn on a thread inside the namespace.
func (ns *testNS) run(fn func() error) error { return newRunner(ns.path)(fn) }

func (ns *testNS) link(tb testing.TB, name string) netlink.Link {
	tb.Helper()
	l, err := ns.nl.LinkByName(name)
	if err != nil {
		tb.Fatalf("link %s: %v", name, err)
	}
	return l
}

func (ns *testNS) addAddr(tb testing.TB, ifname, cidr string) {
	tb.Helper()
	a, err := netlink.ParseAddr(cidr)
	if err != nil {
		tb.Fatal(err)
	}
	if a.IP.To4() == nil {
		a.Flags = unix.IFA_F_NODAD
	}
	if err := ns.nl.AddrAdd(ns.link(tb, ifname), a); err != nil {
		tb.Fatalf("add %s to %s: %v", cidr, ifname, err)
	}
}

func (ns *testNS) delAddr(tb testing.TB, ifname, cidr string) {
	tb.Helper()
	a, err := netlink.ParseAddr(cidr)
	if err != nil {
		tb.Fatal(err)
	}
	if err := ns.nl.AddrDel(ns.link(tb, ifname), a); err != nil {
		tb.Fatalf("delete %s from %s: %v", cidr, ifname, err)
	}
}

// hasAddr reports whether ifname carries exactly cidr (address and prefix).
func (ns *testNS) hasAddr(ifname, cidr string) (bool, error) {
	want, err := netlink.ParseAddr(cidr)
	if err != nil {
		return false, err
	}
	l, err := ns.nl.LinkByName(ifname)
	if err != nil {
		return false, err
	}
	addrs, err := ns.nl.AddrList(l, netlink.FAMILY_ALL)
	if err != nil {
		return false, err
	}
	for _, a := range addrs {
		if a.IPNet.String() == want.IPNet.String() {
			return true, nil
		}
	}
	return false, nil
}

// vethTo creates a veth pair: name here, peerName in peer, both up.
func (ns *testNS) vethTo(tb testing.TB, name string, peer *testNS, peerName string) {
	tb.Helper()
	v := &netlink.Veth{LinkAttrs: netlink.LinkAttrs{Name: name}, PeerName: peerName, PeerNamespace: netlink.NsFd(int(peer.h))}
	if err := ns.nl.LinkAdd(v); err != nil {
		tb.Fatalf("create veth %s/%s: %v", name, peerName, err)
	}
	if err := ns.nl.LinkSetUp(ns.link(tb, name)); err != nil {
		tb.Fatal(err)
	}
	if err := peer.nl.LinkSetUp(peer.link(tb, peerName)); err != nil {
		tb.Fatal(err)
	}
}

func (ns *testNS) mac(tb testing.TB, ifname string) net.HardwareAddr {
	tb.Helper()
	return ns.link(tb, ifname).Attrs().HardwareAddr
}

// neighbour returns the link-layer address ns has cached for ip on ifname.
func (ns *testNS) neighbour(ifname string, ip net.IP) (net.HardwareAddr, error) {
	l, err := ns.nl.LinkByName(ifname)
	if err != nil {
		return nil, err
	}
	family := netlink.FAMILY_V4
	if ip.To4() == nil {
		family = netlink.FAMILY_V6
	}
	neighs, err := ns.nl.NeighList(l.Attrs().Index, family)
	if err != nil {
		return nil, err
	}
	for _, n := range neighs {
		if n.IP.Equal(ip) {
			return n.HardwareAddr, nil
		}
	}
	return nil, nil
}

// setNeighbour puts a STALE entry ip -> mac in ns's cache on ifname, as if
// ns had talked to ip earlier.
func (ns *testNS) setNeighbour(tb testing.TB, ifname string, ip net.IP, mac net.HardwareAddr) {
	tb.Helper()
	family := netlink.FAMILY_V4
	if ip.To4() == nil {
		family = netlink.FAMILY_V6
	}
	n := &netlink.Neigh{LinkIndex: ns.link(tb, ifname).Attrs().Index, Family: family, State: netlink.NUD_STALE, IP: ip, HardwareAddr: mac}
	if err := ns.nl.NeighSet(n); err != nil {
		tb.Fatalf("set neighbour %s -> %s: %v", ip, mac, err)
	}
}

// waitNeighbour waits until ns's cache maps ip to want on ifname.
func (ns *testNS) waitNeighbour(tb testing.TB, ifname string, ip net.IP, want net.HardwareAddr, timeout time.Duration) {
	tb.Helper()
	waitFor(tb, timeout, fmt.Sprintf("neighbour entry %s -> %s on %s", ip, want, ifname), func() (bool, error) {
		got, err := ns.neighbour(ifname, ip)
		return got.String() == want.String(), err
	})
}

// Names and addresses of the two-namespace set-up. The address ranges are
// the documentation ones (RFC 5737, RFC 3849).
const (
	hostIf   = "vip0"
	peerIf   = "peer0"
	hostBase = "198.51.100.1/24"
	peerBase = "198.51.100.254/24"
	vip4     = "198.51.100.100"
	host6    = "2001:db8::1/64"
	peer6    = "2001:db8::254/64"
	vip6     = "2001:db8::100"
)

// pair is two namespaces, "host" (where the manager works) and "peer" (a
// neighbour on the same link), joined by the veth pair vip0 <-> peer0.
type pair struct {
	host, peer *testNS
}

func newPair(tb testing.TB) *pair {
	tb.Helper()
	p := &pair{host: newTestNS(tb), peer: newTestNS(tb)}
	p.host.vethTo(tb, hostIf, p.peer, peerIf)
	p.host.addAddr(tb, hostIf, hostBase)
	p.peer.addAddr(tb, peerIf, peerBase)
	p.host.addAddr(tb, hostIf, host6)
	p.peer.addAddr(tb, peerIf, peer6)
	return p
}

// manager returns a Manager for the host namespace of p.
func (p *pair) manager(tb testing.TB, cfg Config) *Manager {
	tb.Helper()
	if cfg.Interface == "" {
		cfg.Interface = hostIf
	}
	cfg.NetNS = p.host.path
	if cfg.Logger == nil {
		cfg.Logger = testLogger(tb)
	}
	m, err := NewManager(cfg)
	if err != nil {
		tb.Fatalf("NewManager: %v", err)
	}
	releaseAtCleanup(tb, m)
	return m
}

// discardLogger drops everything (benchmarks).
func discardLogger() *slog.Logger { return slog.New(slog.DiscardHandler) }
