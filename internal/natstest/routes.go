package natstest

import (
	"fmt"
	"net"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
)

// RouteProxy is a TCP proxy that carries the routes from one cluster member
// to another, so that a test can break them; *faultproxy.Proxy is one. (The
// harness takes it as an interface: faultproxy's own tests use natstest.)
type RouteProxy interface {
	// Addr is where the proxy listens, "127.0.0.1:PORT".
	Addr() string
	// Cut closes the proxy's connections and refuses new ones.
	Cut()
	// Blackhole drops all bytes both ways without closing anything.
	Blackhole()
	// Restore goes back to forwarding.
	Restore()
}

// NewRouteProxy makes a proxy forwarding to target, a member's route
// listener "127.0.0.1:PORT"; the caller closes it at test cleanup.
type NewRouteProxy func(target string) RouteProxy

// Route keepalive of a cluster with route proxies. A route's PINGs go
// unanswered while its proxy is blackholed; after routeMaxPingsOut of them
// the server drops the route, so a blackholed route is gone within about
// routePingInterval x (routeMaxPingsOut+1). The default (30s, 2) would keep
// a dead route for a minute. WithOptions can override both.
const (
	routePingInterval = 250 * time.Millisecond
	routeMaxPingsOut  = 3
)

// RunClusterWithRouteProxies starts a cluster like [RunCluster], except
// that every route between two members passes through a proxy made by
// newProxy: one per ordered pair of members, from i to j, which member i
// dials to reach j. [Cluster.CutRoutes], [Cluster.BlackholeRoutes] and
// [Cluster.HealRoutes] then partition member i from member j and heal it.
//
// nats-server discovers routes by gossip: a member that gains a route
// tells its other routes about the new peer, and one that has no route to
// that peer yet dials the address the peer advertises, which would be a
// route around the proxies. So every member advertises, as its route
// address (cluster.advertise), a dead end: a port on 127.0.0.1 that a
// connection held open by the harness occupies, where nothing listens, so
// the dial is refused and, being an implicit route, not retried. A member's
// routes are thus only those it dials through its proxies and those the
// others dial to it through theirs. Members keep their own listener in
// their route list, as RunCluster does (the list's length is the size a
// new JetStream cluster expects); a server recognises a route to itself.
//
// Routes PING every 250ms and are dropped after 3 unanswered PINGs, so a
// blackholed route is dropped within about a second.
func RunClusterWithRouteProxies(t testing.TB, size int, newProxy NewRouteProxy, opts ...Option) *Cluster {
	t.Helper()
	rp := &routeProxies{
		t:        t,
		newProxy: newProxy,
		deadEnd:  deadEnd(t),
		members:  map[int]string{},
		proxies:  map[routeKey]RouteProxy{},
	}
	c := runCluster(t, size, append([]Option{rp.option()}, opts...))
	c.routes = rp
	return c
}

// routeProxies are the proxies every route of a cluster passes through.
type routeProxies struct {
	t        testing.TB
	newProxy NewRouteProxy
	deadEnd  string // what every member advertises as its route address

	mu      sync.Mutex
	members map[int]string          // member index -> its route listener, "127.0.0.1:PORT"
	proxies map[routeKey]RouteProxy // from a member to a route listener
}

// routeKey names the proxy that member from dials to reach the route
// listener target.
type routeKey struct {
	from   int
	target string
}

// option rewrites a member's options: its routes to the other members go
// to its proxies, and it advertises the dead end. It runs after the
// cluster settings (a member's route list names every member's listener,
// its own included) and before the caller's options. StartCluster may
// apply it again, with new ports, if a member could not start.
func (rp *routeProxies) option() Option {
	return func(o *server.Options) {
		var from int
		if _, err := fmt.Sscanf(o.ServerName, "n%d", &from); err != nil || o.Cluster.Port <= 0 {
			rp.t.Fatalf("natstest: route proxies: %q is not a cluster member (name n<index>, cluster port set)", o.ServerName)
		}
		own := net.JoinHostPort(o.Cluster.Host, strconv.Itoa(o.Cluster.Port))
		rp.mu.Lock()
		defer rp.mu.Unlock()
		rp.members[from] = own
		for k, r := range o.Routes {
			if r.Host == own {
				continue
			}
			p, ok := rp.proxies[routeKey{from, r.Host}]
			if !ok {
				p = rp.newProxy(r.Host)
				rp.proxies[routeKey{from, r.Host}] = p
			}
			u := *r
			u.Host = p.Addr()
			o.Routes[k] = &u
		}
		o.Cluster.Advertise = rp.deadEnd
		o.Cluster.PingInterval = routePingInterval
		o.Cluster.MaxPingsOut = routeMaxPingsOut
	}
}

// between returns the two proxies carrying the routes of members i and j:
// the one i dials to reach j, and the one j dials to reach i.
func (rp *routeProxies) between(i, j int) []RouteProxy {
	rp.mu.Lock()
	defer rp.mu.Unlock()
	pi, iok := rp.proxies[routeKey{i, rp.members[j]}]
	pj, jok := rp.proxies[routeKey{j, rp.members[i]}]
	if i == j || !iok || !jok {
		panic(fmt.Sprintf("natstest: no route proxies between members %d and %d", i, j))
	}
	return []RouteProxy{pi, pj}
}

// deadEnd returns an address on 127.0.0.1 that refuses connections: the
// local end of a connection held open until the test ends. Nothing listens
// on its port and, while the connection lasts, nothing can.
func deadEnd(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("natstest: dead end: %v", err)
	}
	defer ln.Close()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatalf("natstest: dead end: %v", err)
	}
	s, err := ln.Accept()
	if err != nil {
		_ = c.Close()
		t.Fatalf("natstest: dead end: %v", err)
	}
	t.Cleanup(func() {
		_ = c.Close()
		_ = s.Close()
	})
	return c.LocalAddr().String()
}

// RouteProxies returns the two proxies carrying the routes between members
// i and j (i's to j, then j's to i). It panics unless the cluster was
// started by [RunClusterWithRouteProxies] and i != j are members.
func (c *Cluster) RouteProxies(i, j int) []RouteProxy {
	if c.routes == nil {
		panic("natstest: the cluster has no route proxies (start it with RunClusterWithRouteProxies)")
	}
	return c.routes.between(i, j)
}

// CutRoutes cuts the routes between members i and j both ways: their
// connections close, and new ones are closed at once, until HealRoutes.
// Each member sees its route to the other drop at once. It panics as
// RouteProxies does.
func (c *Cluster) CutRoutes(i, j int) {
	for _, p := range c.RouteProxies(i, j) {
		p.Cut()
	}
}

// BlackholeRoutes silently drops all traffic between members i and j, both
// ways, until HealRoutes: nothing is closed, so each member only drops its
// route once its PINGs go unanswered (about a second). It panics as
// RouteProxies does.
func (c *Cluster) BlackholeRoutes(i, j int) {
	for _, p := range c.RouteProxies(i, j) {
		p.Blackhole()
	}
}

// HealRoutes restores the routes between members i and j. The members
// reconnect on their own, within about a second (nats-server's route
// reconnect delay). It panics as RouteProxies does.
func (c *Cluster) HealRoutes(i, j int) {
	for _, p := range c.RouteProxies(i, j) {
		p.Restore()
	}
}

// Routed reports whether member i, running, has at least one route to
// member j, according to its own route list (Routez).
func (c *Cluster) Routed(i, j int) bool {
	ns := c.servers[i].NATS()
	if ns == nil {
		return false
	}
	rz, err := ns.Routez(nil)
	if err != nil {
		return false
	}
	name := fmt.Sprintf("n%d", j)
	for _, r := range rz.Routes {
		if r.RemoteName == name {
			return true
		}
	}
	return false
}

// FullMesh reports whether every running member has a route to every other
// running member.
func (c *Cluster) FullMesh() bool {
	for i, si := range c.servers {
		for j, sj := range c.servers {
			if i != j && si.NATS() != nil && sj.NATS() != nil && !c.Routed(i, j) {
				return false
			}
		}
	}
	return true
}
