package vip

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"testing"
	"time"

	"github.com/vishvananda/netlink"
)

// routeIn returns the route to dst in table (0: main) of ns, if any.
func (ns *testNS) routeIn(table int, dst netip.Prefix) (*netlink.Route, error) {
	if table == 0 {
		table = 254 // RT_TABLE_MAIN
	}
	family := netlink.FAMILY_V4
	if dst.Addr().Is6() {
		family = netlink.FAMILY_V6
	}
	routes, err := ns.nl.RouteListFiltered(family, &netlink.Route{Table: table}, netlink.RT_FILTER_TABLE)
	if err != nil {
		return nil, err
	}
	for _, r := range routes {
		d := r.Dst
		if d == nil { // the kernel reports a default route without a destination
			d = &net.IPNet{IP: net.IP(dst.Addr().AsSlice()), Mask: net.CIDRMask(0, dst.Addr().BitLen())}
			if dst.Bits() != 0 {
				continue
			}
		}
		if d.String() == dst.String() {
			return &r, nil
		}
	}
	return nil, nil
}

// label returns the label of cidr on ifname in ns ("" if none or absent).
func (ns *testNS) label(tb testing.TB, ifname, cidr string) string {
	tb.Helper()
	addrs, err := ns.nl.AddrList(ns.link(tb, ifname), netlink.FAMILY_V4)
	if err != nil {
		tb.Fatal(err)
	}
	for _, a := range addrs {
		if a.IPNet.String() == cidr {
			return a.Label
		}
	}
	return ""
}

// expectRoute fails unless ns has the route r (src, gateway, metric and
// link as given) out of ifname, or, with want false, has no route to r.To.
func (ns *testNS) expectRoute(tb testing.TB, ifname string, r Route, want bool) {
	tb.Helper()
	got, err := ns.routeIn(r.Table, r.To)
	if err != nil {
		tb.Fatalf("list routes: %v", err)
	}
	if !want {
		if got != nil {
			tb.Fatalf("route to %s still there: %v", r.To, got)
		}
		return
	}
	if got == nil {
		tb.Fatalf("no route to %s (table %d)", r.To, r.Table)
	}
	gw := netip.Addr{}
	if got.Gw != nil {
		gw, _ = netip.AddrFromSlice(got.Gw)
		gw = gw.Unmap()
	}
	src, _ := netip.AddrFromSlice(got.Src)
	if gw != r.Via || src.Unmap() != r.Src || got.Priority != r.Metric || got.LinkIndex != ns.link(tb, ifname).Attrs().Index {
		tb.Fatalf("route to %s is %v; want via %v src %v metric %d dev %s", r.To, got, r.Via, r.Src, r.Metric, ifname)
	}
}

func TestLabelAndRoutesFollowTheAddress(t *testing.T) {
	checkLeaks(t)
	p := newPair(t)
	ctx := context.Background()
	vip := netip.MustParseAddr(vip4)
	gw := netip.MustParseAddr("198.51.100.254")
	routes := []Route{
		{To: netip.MustParsePrefix("203.0.113.0/24"), Via: gw, Metric: 10},
		{To: netip.MustParsePrefix("192.0.2.0/28")}, // on the link
		{To: netip.MustParsePrefix("0.0.0.0/0"), Via: gw, Table: 100},
	}
	m := p.manager(t, Config{Address: vip4, Netmask: 24, AnnounceCount: 1, Label: hostIf + ":web", Routes: routes})
	want := make([]Route, len(routes))
	for i, r := range routes {
		r.Src = vip // the default source
		want[i] = r
	}

	for i := range 2 { // the second is a no-op
		if err := m.Acquire(ctx); err != nil {
			t.Fatalf("Acquire #%d: %v", i+1, err)
		}
	}
	if got := p.host.label(t, hostIf, vip4+"/24"); got != hostIf+":web" {
		t.Fatalf("label of %s/24 = %q, want %q", vip4, got, hostIf+":web")
	}
	for _, r := range want {
		p.host.expectRoute(t, hostIf, r, true)
	}
	if err := m.Release(ctx); err != nil {
		t.Fatalf("Release: %v", err)
	}
	for _, r := range want {
		p.host.expectRoute(t, hostIf, r, false)
	}
	if ok, err := p.host.hasAddr(hostIf, vip4+"/24"); ok || err != nil {
		t.Fatalf("after Release, %s/24 on %s: %v, %v", vip4, hostIf, ok, err)
	}
	if err := m.Release(ctx); err != nil {
		t.Fatalf("second Release: %v", err)
	}
}

func TestRoutesIPv6(t *testing.T) {
	checkLeaks(t)
	p := newPair(t)
	ctx := context.Background()
	r := Route{To: netip.MustParsePrefix("2001:db8:1::/48"), Via: netip.MustParseAddr("2001:db8::254"), Metric: 5}
	m := p.manager(t, Config{Address: vip6, Netmask: 64, AnnounceCount: 1, Routes: []Route{r}})
	if err := m.Acquire(ctx); err != nil {
		t.Fatalf("Acquire: %v", err)
	}
	r.Src = netip.MustParseAddr(vip6)
	p.host.expectRoute(t, hostIf, r, true)
	if err := m.Release(ctx); err != nil {
		t.Fatalf("Release: %v", err)
	}
	p.host.expectRoute(t, hostIf, r, false)
}

// Removing an IPv4 address takes its routes along; the keeper puts both
// back, and a refresh restores a route removed alone.
func TestRoutesRestored(t *testing.T) {
	checkLeaks(t)
	p := newPair(t)
	ctx := context.Background()
	r := Route{To: netip.MustParsePrefix("203.0.113.0/24"), Via: netip.MustParseAddr("198.51.100.254")}
	m := p.manager(t, Config{Address: vip4, Netmask: 24, AnnounceCount: 1, RefreshInterval: 50 * time.Millisecond, Routes: []Route{r}})
	if err := m.Acquire(ctx); err != nil {
		t.Fatalf("Acquire: %v", err)
	}
	r.Src = netip.MustParseAddr(vip4)
	p.host.expectRoute(t, hostIf, r, true)

	p.host.delAddr(t, hostIf, vip4+"/24")
	waitFor(t, 5*time.Second, "the address and its route back", func() (bool, error) {
		got, err := p.host.routeIn(0, r.To)
		return got != nil, err
	})
	p.host.expectRoute(t, hostIf, r, true)

	got, err := p.host.routeIn(0, r.To)
	if err != nil || got == nil {
		t.Fatalf("route: %v, %v", got, err)
	}
	if err := p.host.nl.RouteDel(got); err != nil {
		t.Fatalf("delete the route: %v", err)
	}
	waitFor(t, 5*time.Second, "the route back at a refresh", func() (bool, error) {
		got, err := p.host.routeIn(0, r.To)
		return got != nil, err
	})
	if err := m.Release(ctx); err != nil {
		t.Fatalf("Release: %v", err)
	}
	p.host.expectRoute(t, hostIf, r, false)
}

// A route whose gateway is not reachable yet: Acquire says so (ErrRoute),
// keeps the address, and the route arrives once the gateway is on a link.
func TestRouteRetriedUntilItCanBeAdded(t *testing.T) {
	checkLeaks(t)
	p := newPair(t)
	ctx := context.Background()
	r := Route{To: netip.MustParsePrefix("203.0.113.0/24"), Via: netip.MustParseAddr("192.0.2.1")}
	m := p.manager(t, Config{Address: vip4, Netmask: 24, AnnounceCount: 1, Routes: []Route{r}})
	err := m.Acquire(ctx)
	if !errors.Is(err, ErrRoute) {
		t.Fatalf("Acquire with an unreachable gateway: %v, want ErrRoute", err)
	}
	if ok, err := p.host.hasAddr(hostIf, vip4+"/24"); !ok || err != nil {
		t.Fatalf("the address should be held after a route failed: %v, %v", ok, err)
	}
	p.host.addAddr(t, hostIf, "192.0.2.2/24") // the gateway is on the link now
	waitFor(t, 5*time.Second, "the route, retried in the background", func() (bool, error) {
		got, err := p.host.routeIn(0, r.To)
		return got != nil, err
	})
	if err := m.Release(ctx); err != nil {
		t.Fatalf("Release: %v", err)
	}
	r.Src = netip.MustParseAddr(vip4)
	p.host.expectRoute(t, hostIf, r, false)
}

// Hooks keep retrying an acquisition whose routes failed, as for one whose
// address failed, and release it all at the end of the tenure.
func TestHooksRetryRoutes(t *testing.T) {
	checkLeaks(t)
	p := newPair(t)
	r := Route{To: netip.MustParsePrefix("203.0.113.0/24"), Via: netip.MustParseAddr("192.0.2.1")}
	m := p.manager(t, Config{Address: vip4, Netmask: 24, AnnounceCount: 1, Routes: []Route{r}})
	h := NewHooks(m, WithRetry(10*time.Millisecond, 50*time.Millisecond))
	tenure, end := context.WithCancel(context.Background())
	defer end()
	if err := h.OnBecomeLeader(tenure); !errors.Is(err, ErrRoute) {
		t.Fatalf("OnBecomeLeader: %v, want ErrRoute", err)
	}
	p.host.addAddr(t, hostIf, "192.0.2.2/24")
	waitFor(t, 5*time.Second, "the route", func() (bool, error) {
		got, err := p.host.routeIn(0, r.To)
		return got != nil, err
	})
	end()
	if err := h.OnLoseLeadership(context.Background()); err != nil {
		t.Fatalf("OnLoseLeadership: %v", err)
	}
	r.Src = netip.MustParseAddr(vip4)
	p.host.expectRoute(t, hostIf, r, false)
	if ok, _ := p.host.hasAddr(hostIf, vip4+"/24"); ok {
		t.Fatal("the VIP is still there after the tenure")
	}
}

func ExampleRoute() {
	fmt.Println(Route{To: netip.MustParsePrefix("10.9.0.0/16"), Via: netip.MustParseAddr("10.0.0.1"), Metric: 10})
	// Output: 10.9.0.0/16 via 10.0.0.1 metric 10
}
