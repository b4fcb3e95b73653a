package main

import (
	"context"
	"fmt"
	"time"

	cluster "github.com/ozanturksever/go-cluster"
	"github.com/ozanturksever/go-cluster/internal/wire"
)

// herdRound is what one election among many candidates cost.
type herdRound struct {
	toLeader    time.Duration // StepDown called -> successor's OnBecomeLeader
	total       int64         // KV requests from every node's connection
	leaderReqs  int64         // from the node stepping down (release, cooldown key)
	winnerReqs  int64
	losersTried int   // losers that sent at least one request
	loserMax    int64 // most requests sent by one loser
	extra       int   // OnBecomeLeader calls beyond the winner's
}

// figHerd measures elections among many candidates when the lease is
// released (figure 4), for each size of -herd side by side.
func (bn *bench) figHerd(ctx context.Context, b *backend, fig string) []row {
	if b.mon == nil {
		return []row{skipped(fig, "herd", "no server statistics: pass -monitor for an external server")}
	}
	var rows []row
	var base time.Duration
	for _, size := range bn.o.herd {
		rs, err := bn.herd(ctx, b, size)
		if err != nil {
			rows = append(rows, failed(fig, fmt.Sprintf("herd of %d", size), err))
			continue
		}
		params := fmt.Sprintf("%d nodes, %s, R%d, defaults, lease released by StepDown", size, b.desc, b.replicas)
		var toLeader []time.Duration
		var total, tried, loserMax, leaderReqs, winnerReqs []float64
		extra := 0
		for _, r := range rs {
			toLeader = append(toLeader, r.toLeader)
			total = append(total, float64(r.total))
			tried = append(tried, float64(r.losersTried))
			loserMax = append(loserMax, float64(r.loserMax))
			leaderReqs = append(leaderReqs, float64(r.leaderReqs))
			winnerReqs = append(winnerReqs, float64(r.winnerReqs))
			extra += r.extra
		}
		t := latencyRow(fig, fmt.Sprintf("herd of %d: StepDown -> one leader (OnBecomeLeader)", size), params, toLeader)
		if base == 0 {
			base = summarize(toLeader).median
		} else {
			t.note = fmt.Sprintf("%.2f x the herd of %d", ratio(summarize(toLeader).median, base), bn.o.herd[0])
		}
		rows = append(rows, t.withGoal("exactly one leader", extra == 0))
		tm, tp := floats(total)
		lm, _ := floats(leaderReqs)
		wm, _ := floats(winnerReqs)
		trm, trp := floats(tried)
		_, lmax := floats(loserMax)
		rows = append(rows, row{fig: fig, name: fmt.Sprintf("herd of %d: KV requests per election, all nodes", size), params: params,
			n: len(rs), median: fmt.Sprintf("%.0f", tm), p99: fmt.Sprintf("%.0f", tp),
			note: fmt.Sprintf("stepping-down node %.0f (release + cooldown key), winner %.0f (its CAS and first renewal); losers that sent a CAS: median %.0f, p99 %.0f of %d, none sent more than %.0f; extra leaders %d",
				lm, wm, trm, trp, size-2, lmax, extra)})
	}
	return rows
}

// herd runs bn.o.nHerd elections among size candidates.
func (bn *bench) herd(ctx context.Context, b *backend, size int) ([]herdRound, error) {
	// A short Cooldown keeps small herds from running out of candidates
	// when rounds follow each other within the default Cooldown.
	cfg := cluster.Config{ClusterID: bn.clusterID(fmt.Sprintf("herd%d", size)), Logger: bn.libLog, Cooldown: handoverCooldown}
	g := bn.newGroup(b, cfg)
	defer g.close(ctx)
	bn.log.Info("herd", "size", size, "elections", bn.o.nHerd)
	if err := g.addN(ctx, size); err != nil {
		return nil, err
	}
	// Losers wait for the winner's record on the watch, and read the key
	// only if it has not come after RequestTimeout: count past that. The
	// count then includes the winner's first renewal (RenewInterval).
	settle := wire.DefaultRenewInterval + 250*time.Millisecond
	var out []herdRound
	for range bn.o.nHerd {
		leader, err := g.waitLeader(30 * time.Second)
		if err != nil {
			return nil, err
		}
		c0, err := countsByName(ctx, b.mon)
		if err != nil {
			return nil, err
		}
		mark := g.events.mark()
		t0 := time.Now()
		if err := leader.node.StepDown(ctx); err != nil {
			return nil, err
		}
		e, ok := g.events.wait(mark, 30*time.Second, becomeOther(leader.id))
		if !ok {
			return nil, fmt.Errorf("no leader after StepDown")
		}
		time.Sleep(settle)
		c1, err := countsByName(ctx, b.mon)
		if err != nil {
			return nil, err
		}
		r := herdRound{toLeader: e.at.Sub(t0)}
		for _, x := range g.events.since(mark) {
			if x.kind == evBecome && x != e {
				r.extra++
			}
		}
		for _, m := range g.all() {
			name := connName(cfg.ClusterID, m.id)
			d := c1[name].inMsgs - c0[name].inMsgs
			r.total += d
			switch m.id {
			case leader.id:
				r.leaderReqs = d
			case e.node:
				r.winnerReqs = d
			default:
				if d > 0 {
					r.losersTried++
				}
				r.loserMax = max(r.loserMax, d)
			}
		}
		out = append(out, r)
	}
	return out, nil
}
