package main

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"
	cluster "github.com/ozanturksever/go-cluster"
	"github.com/ozanturksever/go-cluster/health"
)

// healthNodes is the size of the cluster asked at once in figure 6.
const healthNodes = 20

// figHealth measures health queries (figure 6) on a 20-node cluster whose
// nodes run a health Checker on their own connections, kept in step by an
// Adapter: QueryNode side by side with a bare NATS request of the same
// size, and asking all 20 at once side by side with asking them in turn.
func (bn *bench) figHealth(ctx context.Context, b *backend, fig string) []row {
	cfg := cluster.Config{ClusterID: bn.clusterID("health"), Logger: bn.libLog}
	params := fmt.Sprintf("%d nodes with health.Adapter, %s, client on its own connection", healthNodes, b.desc)
	g := bn.newGroup(b, cfg)
	g.extra = func(m *member) (cluster.Hooks, func() error, error) {
		c, err := health.NewChecker(health.Config{ClusterID: cfg.ClusterID, NodeID: m.id, Conn: m.nc, Logger: bn.libLog})
		if err != nil {
			return nil, nil, err
		}
		a := health.NewAdapter(c)
		start := func() error {
			if err := a.Bind(m.node); err != nil {
				return err
			}
			if err := c.Start(ctx); err != nil {
				return err
			}
			m.closers = append(m.closers, c.Stop)
			return nil
		}
		return a, start, nil
	}
	defer g.close(ctx)
	if err := g.addN(ctx, healthNodes); err != nil {
		return []row{failed(fig, "health", err)}
	}
	leader, err := g.waitLeader(30 * time.Second)
	if err != nil {
		return []row{failed(fig, "health", err)}
	}
	nc, err := dial(b.urls, "bench health client", time.Second)
	if err != nil {
		return []row{failed(fig, "health", err)}
	}
	defer nc.Close()
	cl, err := health.NewClient(nc, cfg.ClusterID)
	if err != nil {
		return []row{failed(fig, "health", err)}
	}
	resp, err := cl.QueryNode(ctx, leader.id, time.Second)
	if err != nil {
		return []row{failed(fig, "health", err)}
	}
	payload, _ := json.Marshal(resp)

	// The baseline: a responder that answers a bare request with a reply
	// as long as a health response, on a connection of its own.
	enc, err := dial(b.urls, "bench echo responder", time.Second)
	if err != nil {
		return []row{failed(fig, "health", err)}
	}
	defer enc.Close()
	subj := "bench.echo." + cfg.ClusterID
	sub, err := enc.Subscribe(subj, func(m *nats.Msg) { _ = m.Respond(payload) })
	if err != nil {
		return []row{failed(fig, "health", err)}
	}
	defer sub.Unsubscribe()
	if err := enc.Flush(); err != nil {
		return []row{failed(fig, "health", err)}
	}

	n := bn.o.nHealth
	bn.log.Info("health", "queries", n)
	var raw, query []time.Duration
	for i := range n {
		t0 := time.Now()
		if _, err := nc.Request(subj, nil, time.Second); err != nil {
			return []row{failed(fig, "health", err)}
		}
		t1 := time.Now()
		id := leader.id
		if i%2 == 1 {
			id = g.all()[i%healthNodes].id
		}
		if _, err := cl.QueryNode(ctx, id, time.Second); err != nil {
			return []row{failed(fig, "health", err)}
		}
		t2 := time.Now()
		raw, query = append(raw, t1.Sub(t0)), append(query, t2.Sub(t1))
	}
	var all, each []time.Duration
	for range max(n/10, 1) {
		t0 := time.Now()
		rs, err := cl.QueryClusterN(ctx, healthNodes, 2*time.Second)
		if err != nil || len(rs) != healthNodes {
			return []row{failed(fig, "health: whole cluster", fmt.Errorf("%d answers: %v", len(rs), err))}
		}
		t1 := time.Now()
		for _, m := range g.all() {
			if _, err := cl.QueryNode(ctx, m.id, time.Second); err != nil {
				return []row{failed(fig, "health", err)}
			}
		}
		all, each = append(all, t1.Sub(t0)), append(each, time.Since(t1))
	}
	q := latencyRow(fig, "QueryNode (leader and followers alternately)", params, query)
	q.note = fmt.Sprintf("%.2f x a bare NATS request with a %d-byte reply (median %s, p99 %s)",
		ratio(summarize(query).median, summarize(raw).median), len(payload), ms(summarize(raw).median), ms(summarize(raw).p99))
	a := latencyRow(fig, fmt.Sprintf("QueryClusterN: all %d nodes at once, until all answered", healthNodes), params, all)
	a.note = fmt.Sprintf("%.2f x asking the %d nodes one after another (median %s)",
		ratio(summarize(all).median, summarize(each).median), healthNodes, ms(summarize(each).median))
	return []row{q, a}
}
