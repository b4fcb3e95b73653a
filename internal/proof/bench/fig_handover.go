package main

import (
	"context"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	cluster "github.com/ozanturksever/go-cluster"
	"github.com/ozanturksever/go-cluster/internal/wire"
)

// handoverCooldown replaces the default Cooldown (LeaseTTL) so that three
// nodes can hand over back to back: a node that stepped down is back in the
// running before its turn comes again. It changes nothing on the measured
// path.
const handoverCooldown = 50 * time.Millisecond

// figHandover measures graceful handovers among 3 nodes (figure 1, and 8
// on a JetStream cluster): StepDown on the leader to OnBecomeLeader on the
// successor, the same through Stop, and a plain KV compare-and-swap on the
// same bucket for scale.
func (bn *bench) figHandover(ctx context.Context, b *backend, fig string) []row {
	n := bn.o.nHandover
	params := fmt.Sprintf("3 nodes, %s, R%d, defaults (TTL %v)", b.desc, b.replicas, wire.DefaultLeaseTTL)
	cfg := cluster.Config{ClusterID: bn.clusterID("handover"), Logger: bn.libLog, Cooldown: handoverCooldown}
	g := bn.newGroup(b, cfg)
	defer g.close(ctx)
	if err := g.addN(ctx, 3); err != nil {
		return []row{failed(fig, "graceful handover", err)}
	}
	lw, err := watchLease(ctx, b, cfg.ClusterID)
	if err != nil {
		return []row{failed(fig, "graceful handover", err)}
	}
	defer lw.close()

	var sd, sdLeader, sdFollower []time.Duration
	bn.log.Info("handover: StepDown", "fig", fig, "n", n)
	for i := range n {
		leader, err := g.waitLeader(30 * time.Second)
		if err != nil {
			return []row{failed(fig, "graceful handover", err)}
		}
		time.Sleep(handoverCooldown + 10*time.Millisecond)
		mark := g.events.mark()
		t0 := time.Now()
		if err := leader.node.StepDown(ctx); err != nil {
			return []row{failed(fig, "graceful handover", fmt.Errorf("round %d: StepDown: %w", i, err))}
		}
		e, ok := g.events.wait(mark, 10*time.Second, becomeOther(leader.id))
		if !ok {
			return []row{failed(fig, "graceful handover", fmt.Errorf("round %d: no successor after StepDown", i))}
		}
		sd = append(sd, e.at.Sub(t0))
		if rel, ok := lw.first(t0, func(r leaseRev) bool { return r.lease.NodeID == "" }); ok && rel.seenAt.Before(e.at) {
			sdLeader = append(sdLeader, rel.seenAt.Sub(t0))
			sdFollower = append(sdFollower, e.at.Sub(rel.seenAt))
		}
	}

	var st []time.Duration
	bn.log.Info("handover: Stop", "fig", fig, "n", n)
	for i := range n {
		leader, err := g.waitLeader(30 * time.Second)
		if err != nil {
			return []row{failed(fig, "graceful handover (Stop)", err)}
		}
		// Idle as the StepDown rounds and the floor do: the node added
		// for the last round has just started, and a busy machine is
		// quicker to wake.
		time.Sleep(handoverCooldown + 10*time.Millisecond)
		mark := g.events.mark()
		t0 := time.Now()
		stopped := make(chan error, 1)
		go func() { stopped <- leader.node.Stop(ctx) }()
		e, ok := g.events.wait(mark, 10*time.Second, becomeOther(leader.id))
		if err := <-stopped; err != nil {
			return []row{failed(fig, "graceful handover (Stop)", fmt.Errorf("round %d: Stop: %w", i, err))}
		}
		if !ok {
			return []row{failed(fig, "graceful handover (Stop)", fmt.Errorf("round %d: no successor after Stop", i))}
		}
		st = append(st, e.at.Sub(t0))
		g.remove(ctx, leader)
		m, err := g.add(ctx)
		if err != nil {
			return []row{failed(fig, "graceful handover (Stop)", err)}
		}
		if err := waitKnows(m, e.node, 10*time.Second); err != nil {
			return []row{failed(fig, "graceful handover (Stop)", err)}
		}
	}

	rtt, err := casRTT(ctx, b, cfg.ClusterID, n)
	if err != nil {
		return []row{failed(fig, "KV compare-and-swap", err)}
	}
	rs := summarize(rtt)
	floor, err := handoverFloor(ctx, b, cfg.ClusterID, n, handoverCooldown+10*time.Millisecond)
	if err != nil {
		return []row{failed(fig, "handover floor", err)}
	}
	fs := summarize(floor)
	goalOK := func(ds []time.Duration) bool {
		s := summarize(ds)
		return s.n > 0 && s.median < 5*time.Millisecond && s.p99 < 20*time.Millisecond
	}
	r1 := latencyRow(fig, "graceful handover: StepDown -> successor's OnBecomeLeader", params, sd).
		withGoal("median < 5 ms, p99 < 20 ms", goalOK(sd))
	r1.note = fmt.Sprintf("%.1f x floor, %.1f x CAS; leader side (drain + release CAS, until the release is seen) median %s, follower side (watch + CAS + hook) median %s",
		ratio(summarize(sd).median, fs.median), ratio(summarize(sd).median, rs.median), ms(summarize(sdLeader).median), ms(summarize(sdFollower).median))
	r2 := latencyRow(fig, "graceful handover: Stop -> successor's OnBecomeLeader", params, st).
		withGoal("median < 5 ms, p99 < 20 ms", goalOK(st))
	r2.note = fmt.Sprintf("%.1f x floor, %.1f x CAS; a new node replaces the stopped one each time",
		ratio(summarize(st).median, fs.median), ratio(summarize(st).median, rs.median))
	r3 := latencyRow(fig, "floor: release CAS, watch delivery, acquire CAS in bare KV calls", fmt.Sprintf("%s, R%d, same bucket, two connections, idle %v before each", b.desc, b.replicas, handoverCooldown+10*time.Millisecond), floor)
	r3.note = "what a handover cannot go below; idles between rounds as the handovers do"
	r4 := latencyRow(fig, "baseline: one KV compare-and-swap (Update)", fmt.Sprintf("%s, R%d, same bucket, back to back", b.desc, b.replicas), rtt)
	r4.note = "in a tight loop: warm, unlike the rows above"
	return []row{r1, r2, r3, r4}
}

// casRTT times n KV Update calls on a scratch key of the cluster's bucket,
// from a connection of its own.
func casRTT(ctx context.Context, b *backend, clusterID string, n int) ([]time.Duration, error) {
	nc, err := dial(b.urls, "bench rtt "+clusterID, time.Second)
	if err != nil {
		return nil, err
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		return nil, err
	}
	kv, err := js.KeyValue(ctx, "cluster-"+clusterID)
	if err != nil {
		return nil, err
	}
	rev, err := kv.Put(ctx, "bench-rtt", []byte("x"))
	if err != nil {
		return nil, err
	}
	value := []byte(`{"node_id":"n1","epoch":5,"expires_at":"2026-01-01T00:00:00Z","acquired_at":"2026-01-01T00:00:00Z","ttl_ms":10000}`)
	out := make([]time.Duration, 0, n)
	for range n {
		t0 := time.Now()
		if rev, err = kv.Update(ctx, "bench-rtt", value, rev); err != nil {
			return nil, err
		}
		out = append(out, time.Since(t0))
	}
	return out, nil
}

// ratio is a / b.
func ratio(a, b time.Duration) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}

// failed is a row for a figure that could not complete.
func failed(fig, name string, err error) row {
	return row{fig: fig, name: name, median: "-", p99: "-", met: "no", note: "failed: " + err.Error()}
}
