package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	cluster "github.com/ozanturksever/go-cluster"
	"github.com/ozanturksever/go-cluster/internal/wire"
)

// member is one node of a group with its own connection, as if it ran in
// a process of its own.
type member struct {
	id      string
	node    *cluster.Node
	nc      *nats.Conn
	px      *proxy   // the node's own proxy, when the group is proxied
	closers []func() // add-ons to stop before the node
}

// connName is the client name the server reports for a member's connection.
func connName(clusterID, nodeID string) string { return fmt.Sprintf("bench %s/%s", clusterID, nodeID) }

// addOn lets a figure attach more hooks (health) to each member: hooks to
// compose with the recording ones, and start to run once the node runs.
type addOn func(m *member) (hooks cluster.Hooks, start func() error, err error)

// group is the nodes of one cluster, all in this process.
type group struct {
	b       *backend
	cfg     cluster.Config // template: ClusterID, timings, Logger
	proxied bool           // each node reaches NATS through its own proxy
	// keepStart gives Start a ctx that is never cancelled; otherwise it
	// gets a deadline and is cancelled once Start returns.
	keepStart bool
	extra     addOn
	events    *eventLog

	mu      sync.Mutex
	seq     int
	members []*member
}

// newGroup makes an empty group on b; its nodes are configured from cfg.
func (bn *bench) newGroup(b *backend, cfg cluster.Config) *group {
	if cfg.Bucket.Replicas == 0 {
		cfg.Bucket.Replicas = b.replicas
	}
	return &group{b: b, cfg: cfg, events: newEventLog(), keepStart: bn.o.keepStart}
}

// startMode describes -start-ctx for the parameters column.
func (bn *bench) startMode() string {
	if bn.o.keepStart {
		return "Start ctx never cancelled"
	}
	return "Start ctx cancelled when Start returns"
}

// startCtx is the ctx given to Node.Start, and what to do once it returns.
func startCtx(ctx context.Context, keep bool) (context.Context, context.CancelFunc) {
	if keep {
		return ctx, func() {}
	}
	// Start's ctx bounds start-up only: like examples/basic and the tests,
	// give it a deadline and cancel it once Start returns.
	return context.WithTimeout(ctx, startTimeout)
}

// dial connects with the options a Node uses when it dials itself.
func dial(urls []string, name string, ping time.Duration) (*nats.Conn, error) {
	return nats.Connect(strings.Join(urls, ","),
		nats.Name(name),
		nats.MaxReconnects(-1),
		nats.ReconnectWait(250*time.Millisecond),
		nats.ReconnectJitter(100*time.Millisecond, 100*time.Millisecond),
		nats.PingInterval(max(ping, time.Second)),
		nats.MaxPingsOutstanding(3),
	)
}

// add starts a new node.
func (g *group) add(ctx context.Context) (*member, error) {
	g.mu.Lock()
	g.seq++
	seq := g.seq
	g.mu.Unlock()
	id := fmt.Sprintf("n%d", seq)
	m := &member{id: id}
	urls := g.b.urls
	if g.proxied {
		// Spread the nodes over the servers, one proxy each.
		target := g.b.urls[(seq-1)%len(g.b.urls)]
		px, err := newProxy(strings.TrimPrefix(target, "nats://"))
		if err != nil {
			return nil, err
		}
		m.px, urls = px, []string{px.url()}
	}
	cfg := g.cfg
	cfg.NodeID = id
	ping := cfg.RenewInterval
	if ping == 0 {
		ping = wire.DefaultRenewInterval
	}
	nc, err := dial(urls, connName(cfg.ClusterID, id), ping)
	if err != nil {
		m.close()
		return nil, err
	}
	m.nc, cfg.Conn = nc, nc
	hooks := g.events.hooks(id)
	var start func() error
	if g.extra != nil {
		var h cluster.Hooks
		if h, start, err = g.extra(m); err != nil {
			m.close()
			return nil, err
		}
		hooks = cluster.ComposeHooks(hooks, h)
	}
	if m.node, err = cluster.NewNode(cfg, hooks); err != nil {
		m.close()
		return nil, err
	}
	sctx, cancel := startCtx(ctx, g.keepStart)
	err = m.node.Start(sctx)
	cancel()
	if err != nil {
		m.close()
		return nil, err
	}
	if start != nil {
		if err := start(); err != nil {
			m.stop(ctx)
			return nil, err
		}
	}
	g.mu.Lock()
	g.members = append(g.members, m)
	g.mu.Unlock()
	return m, nil
}

// addN starts n nodes.
func (g *group) addN(ctx context.Context, n int) error {
	for range n {
		if _, err := g.add(ctx); err != nil {
			return err
		}
	}
	return nil
}

// stop stops the member's node and closes what it owns.
func (m *member) stop(ctx context.Context) {
	for _, c := range m.closers {
		c()
	}
	m.closers = nil
	if m.node != nil {
		sctx, cancel := context.WithTimeout(ctx, 15*time.Second)
		_ = m.node.Stop(sctx)
		cancel()
	}
	m.close()
}

// close closes the connection and proxy, without stopping the node.
func (m *member) close() {
	if m.nc != nil {
		m.nc.Close()
	}
	if m.px != nil {
		m.px.close()
	}
}

// remove stops m and forgets it.
func (g *group) remove(ctx context.Context, m *member) {
	g.mu.Lock()
	for i, x := range g.members {
		if x == m {
			g.members = append(g.members[:i], g.members[i+1:]...)
			break
		}
	}
	g.mu.Unlock()
	m.stop(ctx)
}

// all returns the current members.
func (g *group) all() []*member {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]*member(nil), g.members...)
}

// close stops every member, followers first so that a leader's release
// does not set off elections.
func (g *group) close(ctx context.Context) {
	ms := g.all()
	var wg sync.WaitGroup
	for _, m := range ms {
		if !m.node.IsLeader() {
			wg.Go(func() { g.remove(ctx, m) })
		}
	}
	wg.Wait()
	for _, m := range g.all() {
		g.remove(ctx, m)
	}
}

// startTimeout bounds each Node.Start.
const startTimeout = 30 * time.Second

// errTimeout reports a condition that did not come true in time.
var errTimeout = errors.New("timed out")

// waitLeader waits until exactly one member leads and every member knows it.
func (g *group) waitLeader(timeout time.Duration) (*member, error) {
	deadline := time.Now().Add(timeout)
	for {
		var leader *member
		ok := true
		ms := g.all()
		for _, m := range ms {
			if m.node.IsLeader() {
				if leader != nil {
					ok = false
				}
				leader = m
			}
		}
		if ok && leader != nil {
			for _, m := range ms {
				if m.node.Leader() != leader.id {
					ok = false
				}
			}
			if ok {
				return leader, nil
			}
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("no single agreed leader among %d nodes: %w", len(ms), errTimeout)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// waitKnows waits until m knows the leader.
func waitKnows(m *member, leader string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for m.node.Leader() != leader {
		if time.Now().After(deadline) {
			return fmt.Errorf("%s does not know leader %s: %w", m.id, leader, errTimeout)
		}
		time.Sleep(2 * time.Millisecond)
	}
	return nil
}
