package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	cluster "github.com/ozanturksever/go-cluster"
	"github.com/ozanturksever/go-cluster/internal/wire"
)

// figJSCluster is figure 8: figures 1 and 2 again on a 3-server JetStream
// cluster with an R3 bucket, and the leaderless gap when the server that
// leads the bucket's stream is lost.
func (bn *bench) figJSCluster(ctx context.Context) []row {
	const fig = "8"
	var b *backend
	if len(bn.o.natsURLs) > 0 {
		b = externalBackend(bn.o.natsURLs, bn.o.monitorURL, 3)
		b.desc = "external cluster"
	} else {
		var err error
		bn.log.Info("starting a 3-server JetStream cluster")
		if b, err = clusterBackend(ctx, 3); err != nil {
			return []row{failed(fig, "3-server cluster", err)}
		}
	}
	defer b.shutdown()
	rows := bn.figHandover(ctx, b, fig)
	rows = append(rows, bn.figCrash(ctx, b, fig)...)
	if b.members == nil {
		return append(rows, skipped(fig, "stream leader lost", "the servers of an external cluster cannot be stopped from here"))
	}
	return append(rows, bn.figLeaderLoss(ctx, b)...)
}

// lossKind is how the stream leader's server is lost.
type lossKind string

const (
	lossTerm lossKind = "SIGTERM" // graceful shutdown: it hands its raft leaderships over first
	lossKill lossKind = "SIGKILL" // a crash: the others elect a new leader after their election timeout
	// lossKillOwn is SIGKILL of the server that both leads the stream and
	// carries the leader's own connection (moved there first): the worst
	// case, as the leader must also reconnect before it can renew.
	lossKillOwn lossKind = "SIGKILL, leader's connection on it"
)

// lossResult is what one loss measured.
type lossResult struct {
	writesBack    time.Duration // loss -> first KV write started after it succeeds
	gap           time.Duration // OnLoseLeadership -> next OnBecomeLeader; 0 when the leader kept the lease
	lost          bool          // the leader lost the lease
	noLeaderSeen  int           // OnLeaderChange("") on nodes that were not leading
	leaderOnLost  bool          // the leader's own connection was on the lost server
	metaLeaderToo bool          // the lost server also led the JetStream meta group
}

func (bn *bench) figLeaderLoss(ctx context.Context, b *backend) []row {
	const fig = "8"
	cfg := cluster.Config{ClusterID: bn.clusterID("loss"), Logger: bn.libLog}
	ttl, renew := wire.DefaultLeaseTTL, wire.DefaultRenewInterval
	params := fmt.Sprintf("3 nodes, %s, R3, defaults (TTL %v, renew %v), %v observed per loss", b.desc, ttl, renew, 2*ttl)
	g := bn.newGroup(b, cfg)
	defer g.close(ctx)
	if err := g.addN(ctx, 3); err != nil {
		return []row{failed(fig, "stream leader lost", err)}
	}
	pr, err := startProbe(ctx, b, cfg.ClusterID)
	if err != nil {
		return []row{failed(fig, "stream leader lost", err)}
	}
	defer pr.stop()
	kinds := []lossKind{lossTerm, lossKill, lossKillOwn}
	res := map[lossKind][]lossResult{}
	bn.log.Info("stream leader lost", "n per kind", bn.o.nLeaderLoss)
	for i := range len(kinds) * bn.o.nLeaderLoss {
		kind := kinds[i%len(kinds)]
		r, err := bn.loseStreamLeader(ctx, b, g, pr, kind, ttl, renew)
		if err != nil {
			return []row{failed(fig, "stream leader lost", fmt.Errorf("loss %d (%s): %w", i, kind, err))}
		}
		res[kind] = append(res[kind], r)
	}
	var rows []row
	for _, kind := range kinds {
		var back, gaps []time.Duration
		lost, noLeader, onLost, meta := 0, 0, 0, 0
		for _, r := range res[kind] {
			back = append(back, r.writesBack)
			gaps = append(gaps, r.gap)
			lost += btoi(r.lost)
			noLeader += r.noLeaderSeen
			onLost += btoi(r.leaderOnLost)
			meta += btoi(r.metaLeaderToo)
		}
		w := latencyRow(fig, fmt.Sprintf("stream leader's server lost (%s): KV writes unavailable", kind), params, back)
		w.note = fmt.Sprintf("a probe writes every %v; the lost server also led the meta group in %d of %d", probeEvery, meta, len(back))
		rows = append(rows, w)
		gp := latencyRow(fig, fmt.Sprintf("stream leader's server lost (%s): leaderless gap", kind), params, gaps)
		gp.note = fmt.Sprintf("0 when the leader kept the lease; it lost it in %d of %d; its own connection was on the lost server in %d; followers reported \"no leader\" %d times",
			lost, len(gaps), onLost, noLeader)
		rows = append(rows, gp)
	}
	return rows
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// loseStreamLeader stops the server leading the bucket's stream, watches
// for 2 x TTL, then restarts it and waits until the stream is whole again.
func (bn *bench) loseStreamLeader(ctx context.Context, b *backend, g *group, pr *probe, kind lossKind, ttl, renew time.Duration) (lossResult, error) {
	var r lossResult
	leader, err := g.waitLeader(3 * ttl)
	if err != nil {
		return r, err
	}
	stream := "KV_cluster-" + g.cfg.ClusterID
	if kind == lossKillOwn {
		if err := moveStreamLeader(ctx, pr, stream, leader.nc.ConnectedServerName()); err != nil {
			return r, err
		}
		time.Sleep(renew) // a renewal or two on the new stream leader
	}
	info, err := streamInfo(ctx, pr.js, stream)
	if err != nil {
		return r, err
	}
	idx := b.memberIndex(info.Cluster.Leader)
	if idx < 0 {
		return r, fmt.Errorf("stream leader %q is not a member", info.Cluster.Leader)
	}
	r.leaderOnLost = leader.nc.ConnectedServerName() == info.Cluster.Leader
	if v, err := b.members[idx].monitor().varz(ctx); err == nil && v.JetStream.Meta != nil {
		r.metaLeaderToo = v.JetStream.Meta.Leader == info.Cluster.Leader
	}
	time.Sleep(rand.N(renew)) // a random point of the renewal cycle
	mark := g.events.mark()
	t0 := time.Now()
	switch kind {
	case lossTerm:
		go b.members[idx].stop()
	case lossKill, lossKillOwn:
		b.members[idx].kill()
	}
	time.Sleep(2 * ttl)
	if w, ok := pr.firstOKAfter(t0); ok {
		r.writesBack = w.Sub(t0)
	} else {
		r.writesBack = time.Since(t0)
	}
	evs := g.events.since(mark)
	for i, e := range evs {
		switch {
		case e.kind == evLose && !r.lost:
			r.lost = true
			r.gap = time.Since(e.at)
			for _, x := range evs[i+1:] {
				if x.kind == evBecome {
					r.gap = x.at.Sub(e.at)
					break
				}
			}
		case e.kind == evChange && e.leader == "" && e.node != leader.id:
			r.noLeaderSeen++
		}
	}
	<-b.members[idx].exited
	if err := b.restartMember(ctx, idx); err != nil {
		return r, err
	}
	return r, waitStreamWhole(ctx, pr.js, "KV_cluster-"+g.cfg.ClusterID, len(b.members))
}

// moveStreamLeader makes server the leader of stream, by a leader step-down
// with that server preferred, and waits until the stream reports it.
func moveStreamLeader(ctx context.Context, pr *probe, stream, server string) error {
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		info, err := streamInfo(ctx, pr.js, stream)
		if err == nil && info.Cluster.Leader == server {
			return nil
		}
		if err == nil && info.Cluster.Leader != "" {
			req := fmt.Sprintf(`{"placement":{"preferred":%q}}`, server)
			_, _ = pr.nc.Request("$JS.API.STREAM.LEADER.STEPDOWN."+stream, []byte(req), 2*time.Second)
		}
		time.Sleep(250 * time.Millisecond)
	}
	return fmt.Errorf("stream %s: could not move its leader to %s", stream, server)
}

func streamInfo(ctx context.Context, js jetstream.JetStream, name string) (*jetstream.StreamInfo, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	s, err := js.Stream(ctx, name)
	if err != nil {
		return nil, err
	}
	info := s.CachedInfo()
	if info.Cluster == nil || info.Cluster.Leader == "" {
		return nil, fmt.Errorf("stream %s has no leader", name)
	}
	return info, nil
}

// waitStreamWhole waits until the stream has a leader and every replica is
// current.
func waitStreamWhole(ctx context.Context, js jetstream.JetStream, name string, size int) error {
	deadline := time.Now().Add(60 * time.Second)
	for {
		info, err := streamInfo(ctx, js, name)
		if err == nil && len(info.Cluster.Replicas) == size-1 {
			ok := true
			for _, p := range info.Cluster.Replicas {
				ok = ok && p.Current && !p.Offline
			}
			if ok {
				return nil
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("stream %s not whole after 60s (%v)", name, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
