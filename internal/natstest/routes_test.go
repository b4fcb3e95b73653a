package natstest

import (
	"fmt"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/ozanturksever/go-cluster/internal/faultproxy"
)

// runRouteProxied starts a cluster of 3 whose routes go through fault
// proxies, and waits for the full mesh of routes.
func runRouteProxied(t *testing.T) *Cluster {
	t.Helper()
	c := RunClusterWithRouteProxies(t, 3, func(target string) RouteProxy { return faultproxy.New(t, target) })
	WaitFor(t, 10*time.Second, c.FullMesh, "no full mesh of routes")
	return c
}

// routesAroundProxies returns an error if a member has a route that does
// not pass through the proxies: a connection to another member's own route
// listener (on the side that dialled it, the route's remote port is that
// listener's), or more route connections than the proxies carry.
func routesAroundProxies(c *Cluster) error {
	listeners := map[int]string{}
	for i, s := range c.Servers() {
		if ns := s.NATS(); ns != nil {
			listeners[ns.ClusterAddr().Port] = fmt.Sprintf("n%d", i)
		}
	}
	var routes int
	for i, s := range c.Servers() {
		ns := s.NATS()
		if ns == nil {
			continue
		}
		rz, err := ns.Routez(nil)
		if err != nil {
			return err
		}
		for _, r := range rz.Routes {
			if name, ok := listeners[r.Port]; ok {
				return fmt.Errorf("n%d has a route to %s's own listener %s:%d, around the proxies", i, name, r.IP, r.Port)
			}
		}
		routes += len(rz.Routes)
	}
	var links int
	for i := range 3 {
		for j := i + 1; j < 3; j++ {
			for _, p := range c.RouteProxies(i, j) {
				links += p.(*faultproxy.Proxy).Conns()
			}
		}
	}
	// Every route connection has one end on each of two members.
	if routes != 2*links {
		return fmt.Errorf("the members hold %d route connection ends, the proxies carry %d connections (want %d ends)", routes, links, 2*links)
	}
	return nil
}

// waitEveryRouteProxied waits until every route passes through the proxies:
// a proxy may still be closing a connection the servers gave up.
func waitEveryRouteProxied(t *testing.T, c *Cluster) {
	t.Helper()
	var err error
	if !poll(5*time.Second, func() bool { err = routesAroundProxies(c); return err == nil }) {
		t.Fatal(err)
	}
}

// holds fails t if cond turns false within d: a property that must last,
// such as a partition that no route gets around.
func holds(t *testing.T, d time.Duration, cond func() bool, format string, args ...any) {
	t.Helper()
	if poll(d, func() bool { return !cond() }) {
		t.Fatalf(format, args...)
	}
}

func TestRouteProxiesCarryEveryRoute(t *testing.T) {
	t.Parallel() // each its own cluster; it waits on the servers' elections
	CheckLeaks(t)
	c := runRouteProxied(t)
	waitEveryRouteProxied(t, c)

	// Blackholed: n0 and n1 drop their routes to each other once PINGs go
	// unanswered, and no route around the proxies takes their place; both
	// keep their routes to n2.
	c.BlackholeRoutes(0, 1)
	WaitFor(t, 10*time.Second, func() bool { return !c.Routed(0, 1) && !c.Routed(1, 0) }, "n0 and n1 still routed to each other while blackholed")
	holds(t, 2*time.Second, func() bool {
		return !c.Routed(0, 1) && !c.Routed(1, 0) && c.Routed(0, 2) && c.Routed(2, 0) && c.Routed(1, 2) && c.Routed(2, 1)
	}, "routes while n0-n1 is blackholed: n0-n1 %v/%v, n0-n2 %v, n1-n2 %v", c.Routed(0, 1), c.Routed(1, 0), c.Routed(0, 2), c.Routed(1, 2))
	c.HealRoutes(0, 1)
	WaitFor(t, 10*time.Second, c.FullMesh, "no full mesh after healing n0-n1")

	// Gossip: n0 cut off from both, then healed towards n1 only. n1, gaining
	// a route to n0, tells n2 about n0; n2 must not dial n0 directly.
	c.CutRoutes(0, 1)
	c.CutRoutes(0, 2)
	WaitFor(t, 5*time.Second, func() bool { return !c.Routed(0, 1) && !c.Routed(0, 2) && !c.Routed(2, 0) }, "n0 still routed after the cut")
	c.HealRoutes(0, 1)
	WaitFor(t, 10*time.Second, func() bool { return c.Routed(0, 1) && c.Routed(1, 0) }, "n0-n1 not routed after healing")
	holds(t, 2*time.Second, func() bool { return !c.Routed(0, 2) && !c.Routed(2, 0) }, "n0 and n2 routed around their cut proxies")
	c.HealRoutes(0, 2)
	WaitFor(t, 10*time.Second, c.FullMesh, "no full mesh after healing n0")
	waitEveryRouteProxied(t, c)
}

func TestRouteCutStreamLeaderLosesQuorum(t *testing.T) {
	t.Parallel() // each its own cluster; it waits on the servers' elections
	CheckLeaks(t)
	c := runRouteProxied(t)
	const account, stream = "$G", "ROUTES"
	js, err := jetstream.New(c.Connect(t))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := js.CreateStream(ctx(t, 10*time.Second), jetstream.StreamConfig{Name: stream, Subjects: []string{"routes.>"}, Replicas: 3}); err != nil {
		t.Fatal(err)
	}
	old := c.WaitForStreamLeader(t, account, stream, 10*time.Second)
	// A client of the leader alone, which the route cut does not touch.
	ljs, err := jetstream.New(c.Server(old).Connect(t, nats.NoReconnect()))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ljs.Publish(ctx(t, 5*time.Second), "routes.a", []byte("1")); err != nil {
		t.Fatal(err)
	}

	start := time.Now()
	for j := range 3 {
		if j != old {
			c.CutRoutes(old, j)
		}
	}
	// The leader cannot replicate: a publish through it gets no ack.
	if _, err := ljs.Publish(ctx(t, 2*time.Second), "routes.a", []byte("2")); err == nil {
		t.Fatalf("publish through the cut-off stream leader n%d succeeded", old)
	}
	// The other two elect a leader among themselves, and the cut-off one
	// steps down once it has heard from no quorum for a while.
	WaitFor(t, 30*time.Second, func() bool {
		for i, s := range c.Servers() {
			if i != old && s.NATS().JetStreamIsStreamLeader(account, stream) {
				return true
			}
		}
		return false
	}, "no new stream leader among the members cut off from n%d", old)
	t.Logf("new stream leader elected %v after the cut", time.Since(start).Round(time.Millisecond))
	WaitFor(t, 30*time.Second, func() bool { return !c.Server(old).NATS().JetStreamIsStreamLeader(account, stream) },
		"cut-off n%d still leads the stream", old)
	t.Logf("n%d stepped down %v after the cut", old, time.Since(start).Round(time.Millisecond))

	for j := range 3 {
		if j != old {
			c.HealRoutes(old, j)
		}
	}
	WaitFor(t, 10*time.Second, c.FullMesh, "no full mesh after healing")
	WaitFor(t, 20*time.Second, func() bool {
		_, err := js.Publish(ctx(t, time.Second), "routes.a", []byte("3"))
		return err == nil
	}, "stream not writable after healing")
	WaitFor(t, 20*time.Second, func() bool {
		si, err := js.Stream(ctx(t, time.Second), stream)
		if err != nil {
			return false
		}
		info, err := si.Info(ctx(t, time.Second))
		if err != nil || info.Cluster == nil || len(info.Cluster.Replicas) != 2 {
			return false
		}
		for _, r := range info.Cluster.Replicas {
			if !r.Current {
				return false
			}
		}
		return true
	}, "replicas not current after healing")
}

func TestRouteProxiesMisuse(t *testing.T) {
	c := &Cluster{}
	for _, f := range []func(){
		func() { c.CutRoutes(0, 1) },
		func() {
			rp := &routeProxies{members: map[int]string{}, proxies: map[routeKey]RouteProxy{}}
			rp.between(0, 0)
		},
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Error("no panic")
				}
			}()
			f()
		}()
	}
}
