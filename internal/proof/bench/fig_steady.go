package main

import (
	"context"
	"fmt"
	"time"

	cluster "github.com/ozanturksever/go-cluster"
	"github.com/ozanturksever/go-cluster/internal/wire"
)

// steadySet is one cluster of figure 3: 3 nodes and an observer.
type steadySet struct {
	label  string
	g      *group
	obs    *member
	leader *member
}

// figSteady measures what a quiet cluster costs its NATS server (figure 3):
// per connection, the messages and bytes the server received from each
// node (KV and JetStream API requests) and sent to it, over a window with
// no leadership change. The counts are the server's own (Connz). Two
// clusters run side by side in the same window: one whose nodes were
// started with a ctx cancelled once Start returned, one with a ctx never
// cancelled.
func (bn *bench) figSteady(ctx context.Context, b *backend, fig string) []row {
	if b.mon == nil {
		return []row{skipped(fig, "steady-state cost", "no server statistics: pass -monitor for an external server")}
	}
	window := bn.o.steady
	var sets []*steadySet
	defer func() {
		for _, s := range sets {
			if s.obs != nil {
				s.obs.stop(ctx)
			}
			s.g.close(ctx)
		}
	}()
	for _, keep := range []bool{false, true} {
		label := "Start ctx cancelled when Start returns"
		if keep {
			label = "Start ctx never cancelled"
		}
		cfg := cluster.Config{ClusterID: bn.clusterID("steady"), Logger: bn.libLog}
		s := &steadySet{label: label, g: bn.newGroup(b, cfg)}
		s.g.keepStart = keep
		sets = append(sets, s)
		if err := s.g.addN(ctx, 3); err != nil {
			return []row{failed(fig, "steady-state cost", err)}
		}
		var err error
		if s.obs, err = startObserver(ctx, b, s.g.cfg, keep); err != nil {
			return []row{failed(fig, "steady-state cost", err)}
		}
		if s.leader, err = s.g.waitLeader(30 * time.Second); err != nil {
			return []row{failed(fig, "steady-state cost", err)}
		}
	}
	time.Sleep(2 * wire.DefaultRenewInterval) // past start-up requests

	bn.log.Info("steady state", "fig", fig, "window", window)
	marks := make([]int, len(sets))
	for i, s := range sets {
		marks[i] = s.g.events.mark()
	}
	c0, err := countsByName(ctx, b.mon)
	if err != nil {
		return []row{failed(fig, "steady-state cost", err)}
	}
	t0 := time.Now()
	time.Sleep(window)
	c1, err := countsByName(ctx, b.mon)
	if err != nil {
		return []row{failed(fig, "steady-state cost", err)}
	}
	secs := time.Since(t0).Seconds()

	var rows []row
	for i, s := range sets {
		transitions := 0
		for _, e := range s.g.events.since(marks[i]) {
			if e.kind == evBecome || e.kind == evLose {
				transitions++
			}
		}
		if transitions > 0 || !s.leader.node.IsLeader() {
			rows = append(rows, failed(fig, "steady-state cost, "+s.label, fmt.Errorf("%d leadership changes in the window", transitions)))
			continue
		}
		params := fmt.Sprintf("3 nodes + 1 observer, %s, R%d, defaults (TTL %v, renew %v), %v window; %s",
			b.desc, b.replicas, wire.DefaultLeaseTTL, wire.DefaultRenewInterval, window, s.label)
		delta := func(id string) connCounts {
			name := connName(s.g.cfg.ClusterID, id)
			return c1[name].minus(c0[name])
		}
		rate := func(d connCounts) string {
			return fmt.Sprintf("%.3f msg/s, %.0f B/s", float64(d.inMsgs)/secs, float64(d.inBytes)/secs)
		}
		out := func(d connCounts) string {
			return fmt.Sprintf("server sent it %.3f msg/s, %.0f B/s; %d subscriptions", float64(d.outMsgs)/secs, float64(d.outBytes)/secs, d.subs)
		}
		ld := delta(s.leader.id)
		rows = append(rows, row{fig: fig, name: "leader: requests the server received", params: params, median: rate(ld), p99: "-",
			note: fmt.Sprintf("%d in %.0f s; the protocol needs 1/RenewInterval = %.3f/s; %s", ld.inMsgs, secs, 1/wire.DefaultRenewInterval.Seconds(), out(ld))})
		var worst connCounts
		for _, m := range s.g.all() {
			if m != s.leader {
				if d := delta(m.id); d.inMsgs >= worst.inMsgs {
					worst = d
				}
			}
		}
		rows = append(rows, row{fig: fig, name: "follower (the busier of 2): requests the server received", params: params,
			median: rate(worst), p99: "-", note: out(worst)}.withGoal("zero", worst.inMsgs == 0))
		od := delta(observerID)
		rows = append(rows, row{fig: fig, name: "observer (NewObserver): requests the server received", params: params,
			median: rate(od), p99: "-", note: out(od)}.withGoal("zero", od.inMsgs == 0))
	}
	return rows
}

// observerID is the NodeID of the observer of figure 3.
const observerID = "observer"

// startObserver starts a NewObserver node with its own connection.
func startObserver(ctx context.Context, b *backend, cfg cluster.Config, keepStart bool) (*member, error) {
	nc, err := dial(b.urls, connName(cfg.ClusterID, observerID), wire.DefaultRenewInterval)
	if err != nil {
		return nil, err
	}
	m := &member{id: observerID, nc: nc}
	cfg.NodeID, cfg.Conn = observerID, nc
	if m.node, err = cluster.NewObserver(cfg, nil); err != nil {
		m.close()
		return nil, err
	}
	sctx, cancel := startCtx(ctx, keepStart)
	defer cancel()
	if err := m.node.Start(sctx); err != nil {
		m.close()
		return nil, err
	}
	return m, nil
}
