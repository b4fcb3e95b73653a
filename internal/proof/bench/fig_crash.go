package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"

	cluster "github.com/ozanturksever/go-cluster"
)

// crashKind is how the leader is made to stop renewing without releasing.
type crashKind string

const (
	// crashClose closes the leader's connection: the node stops at once, as
	// when its process is killed.
	crashClose crashKind = "connection closed"
	// crashBlackhole drops all of the leader's traffic: the node runs on,
	// cut off, and must stop on its own deadline.
	crashBlackhole crashKind = "blackholed"
)

// crashResult is what one crash measured.
type crashResult struct {
	fromCrash  time.Duration // crash -> successor's OnBecomeLeader
	fromExpiry time.Duration // last renewal seen + LeaseTTL -> successor's OnBecomeLeader
	ctxFirst   time.Duration // blackholed: old leader's tenure ctx done -> successor's OnBecomeLeader
	hookFirst  time.Duration // blackholed: old leader's OnLoseLeadership -> successor's OnBecomeLeader
	hasOld     bool
}

// figCrash measures failover after a leader stops renewing without
// releasing (figure 2, and 8 on a JetStream cluster). The two kinds of
// crash alternate, so they are measured side by side.
func (bn *bench) figCrash(ctx context.Context, b *backend, fig string) []row {
	ttl := bn.o.crashTTL
	renew := ttl / 4
	params := fmt.Sprintf("3 nodes, %s, R%d, TTL %v, renew %v", b.desc, b.replicas, ttl, renew)
	cfg := cluster.Config{ClusterID: bn.clusterID("crash"), Logger: bn.libLog, LeaseTTL: ttl, RenewInterval: renew}
	g := bn.newGroup(b, cfg)
	g.proxied = true
	defer g.close(ctx)
	if err := g.addN(ctx, 3); err != nil {
		return []row{failed(fig, "crash failover", err)}
	}
	lw, err := watchLease(ctx, b, cfg.ClusterID)
	if err != nil {
		return []row{failed(fig, "crash failover", err)}
	}
	defer lw.close()

	kinds := []crashKind{crashClose, crashBlackhole}
	res := map[crashKind][]crashResult{}
	bn.log.Info("crash failover", "fig", fig, "n per kind", bn.o.nCrash, "ttl", ttl)
	for i := range 2 * bn.o.nCrash {
		kind := kinds[i%2]
		r, err := bn.crashOnce(ctx, g, lw, kind, ttl, renew)
		if err != nil {
			return []row{failed(fig, "crash failover", fmt.Errorf("crash %d (%s): %w", i, kind, err))}
		}
		res[kind] = append(res[kind], r)
	}

	var rows []row
	for _, kind := range kinds {
		var fromCrash, fromExpiry []time.Duration
		var frac []float64
		for _, r := range res[kind] {
			fromCrash = append(fromCrash, r.fromCrash)
			fromExpiry = append(fromExpiry, r.fromExpiry)
			frac = append(frac, ratio(r.fromCrash, ttl))
		}
		fm, fp := floats(frac)
		r := latencyRow(fig, fmt.Sprintf("crash (%s) -> successor's OnBecomeLeader", kind), params, fromCrash)
		r.median, r.p99 = fmt.Sprintf("%.2f x TTL (%s)", fm, r.median), fmt.Sprintf("%.2f x TTL (%s)", fp, r.p99)
		s := summarize(fromCrash)
		r.note = fmt.Sprintf("min %.2f, max %.2f x TTL; expected between (TTL-renew)/TTL = %.2f and 1.00 plus a round trip",
			ratio(s.min, ttl), ratio(s.max, ttl), ratio(ttl-renew, ttl))
		rows = append(rows, r)
		e := latencyRow(fig, fmt.Sprintf("expiry on followers' clock -> successor's OnBecomeLeader (%s)", kind), params, fromExpiry)
		es := summarize(fromExpiry)
		e = e.withGoal("median < 10 ms", es.median < 10*time.Millisecond)
		e.note = fmt.Sprintf("expiry = last renewal seen by a watcher + TTL; min %s, max %s", ms(es.min), ms(es.max))
		rows = append(rows, e)
	}
	var ctxGap, hookGap []time.Duration
	for _, r := range res[crashBlackhole] {
		if r.hasOld {
			ctxGap, hookGap = append(ctxGap, r.ctxFirst), append(hookGap, r.hookFirst)
		}
	}
	s := summarize(ctxGap)
	r := latencyRow(fig, "blackholed leader: tenure ctx cancelled, ahead of successor's OnBecomeLeader", params, ctxGap)
	r = r.withGoal("always > 0 (safety)", s.n > 0 && s.min > 0)
	r.note = fmt.Sprintf("min %s; the cut-off leader stops on its own clock: SafetyMargin (%v) + delivery before anyone may start", ms(s.min), ttl/10)
	rows = append(rows, r)
	s = summarize(hookGap)
	r = latencyRow(fig, "blackholed leader: OnLoseLeadership, ahead of successor's OnBecomeLeader", params, hookGap)
	r = r.withGoal("always > 0", s.n > 0 && s.min > 0)
	r.note = fmt.Sprintf("min %s, max %s (negative: the hook ran after the successor started)", ms(s.min), ms(s.max))
	rows = append(rows, r)
	return rows
}

// crashOnce crashes the current leader and measures the takeover, then
// replaces the crashed node.
func (bn *bench) crashOnce(ctx context.Context, g *group, lw *leaseWatch, kind crashKind, ttl, renew time.Duration) (crashResult, error) {
	leader, err := g.waitLeader(10 * ttl)
	if err != nil {
		return crashResult{}, err
	}
	// A node that joined counts a lease's age from when it first saw it:
	// let every follower see a fresh renewal, and crash at a random point
	// of the renewal cycle.
	time.Sleep(renew + rand.N(renew))
	epoch := leader.node.Epoch()
	mark := g.events.mark()
	t0 := time.Now()
	switch kind {
	case crashClose:
		leader.nc.Close()
	case crashBlackhole:
		leader.px.blackhole()
	}
	e, ok := g.events.wait(mark, 5*ttl, becomeOther(leader.id))
	if !ok {
		return crashResult{}, fmt.Errorf("no successor within %v", 5*ttl)
	}
	last, ok := lw.last(func(r leaseRev) bool {
		return r.lease.NodeID == leader.id && r.lease.Epoch == epoch && r.seenAt.Before(e.at)
	})
	if !ok {
		return crashResult{}, fmt.Errorf("the watcher saw no renewal of epoch %d", epoch)
	}
	r := crashResult{fromCrash: e.at.Sub(t0), fromExpiry: e.at.Sub(last.seenAt.Add(ttl))}
	if kind == crashBlackhole {
		// The hook can come long after the tenure ended: wait for it.
		end, ok1 := g.events.wait(mark, 2*ttl, func(x event) bool { return x.kind == evTenureEnd && x.node == leader.id })
		lose, ok2 := g.events.wait(mark, 30*ttl, func(x event) bool { return x.kind == evLose && x.node == leader.id })
		if ok1 && ok2 {
			r.ctxFirst, r.hookFirst, r.hasOld = e.at.Sub(end.at), e.at.Sub(lose.at), true
		}
	}
	g.remove(ctx, leader)
	m, err := g.add(ctx)
	if err != nil {
		return crashResult{}, err
	}
	return r, waitKnows(m, e.node, 10*ttl)
}
