package main

import (
	"context"
	"fmt"
	"runtime"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	cluster "github.com/ozanturksever/go-cluster"
	"github.com/ozanturksever/go-cluster/internal/store"
	"github.com/ozanturksever/go-cluster/internal/wire"
)

// figScale runs many 3-node clusters on one server (figure 5), one count
// of clusters after another, until one of them fails: what gave is
// reported.
func (bn *bench) figScale(ctx context.Context) []row {
	var rows []row
	for _, clusters := range bn.o.scale {
		rs, err := bn.scale(ctx, clusters)
		if err != nil {
			rs = append(rs, failed("5", fmt.Sprintf("%d clusters x 3 nodes", clusters), err))
		}
		if err != nil {
			bn.logRows(rs[len(rs)-1:])
		}
		rows = append(rows, rs...)
		if err != nil {
			break
		}
	}
	return rows
}

// scaleRun is one count of clusters being measured.
type scaleRun struct {
	b        *backend
	clusters int
	counts   []*clusterCounts
	conns    []*nats.Conn
	nodes    []*cluster.Node
	shared   bool // the nodes share connections
	done     bool // torn down
}

func (bn *bench) scale(ctx context.Context, clusters int) ([]row, error) {
	const size = 3
	fig := "5"
	var b *backend
	var err error
	if len(bn.o.natsURLs) > 0 {
		b = externalBackend(bn.o.natsURLs, bn.o.monitorURL, bn.o.replicas)
	} else if b, err = childBackend(ctx, bn.o.nofile); err != nil {
		return nil, err
	}
	defer b.shutdown()
	ttl := bn.o.scaleTTL
	if ttl == 0 {
		ttl = wire.DefaultLeaseTTL
	}
	cfg := cluster.Config{Logger: bn.libLog, LeaseTTL: ttl, Bucket: cluster.BucketOptions{Replicas: b.replicas}}
	if bn.o.scaleMemory {
		cfg.Bucket.Storage = jetstream.MemoryStorage
	}
	cfg.RenewInterval = bn.scaleRenew(ttl)
	nconns := clusters * size
	connDesc := "a connection per node"
	if bn.o.scaleConns > 0 {
		nconns = min(bn.o.scaleConns, clusters*size)
		connDesc = fmt.Sprintf("the nodes share %d connections (node k of cluster c on connection (3c+k) mod %d)", nconns, nconns)
	}
	params := fmt.Sprintf("%d clusters x %d nodes, %s, R%d, TTL %v, renew %v; %s; %s%s", clusters, size, b.desc, b.replicas, ttl, cfg.RenewInterval, bn.startMode(), connDesc, b.limitDesc())
	sr := &scaleRun{b: b, clusters: clusters, shared: bn.o.scaleConns > 0}
	defer sr.teardown(ctx)
	bn.log.Info("scale", "clusters", clusters, "nodes", clusters*size)

	m0, g0 := memNow()
	ids := make([]string, clusters)
	for i := range ids {
		ids[i] = bn.clusterID(fmt.Sprintf("s%d", i))
	}
	sr.conns = make([]*nats.Conn, nconns)
	if err := parallel(len(sr.conns), 32, func(i int) error {
		name := connName(ids[i/size], fmt.Sprintf("n%d", i%size+1))
		if bn.o.scaleConns > 0 {
			name = fmt.Sprintf("bench scale %d/%d", i+1, nconns)
		}
		nc, err := dial(b.urls, name, cfg.RenewInterval)
		sr.conns[i] = nc
		return err
	}); err != nil {
		return nil, fmt.Errorf("connect %d clients: %w", len(sr.conns), err)
	}
	m1, g1 := memNow()

	led := make(chan struct{}, clusters)
	sr.counts = make([]*clusterCounts, clusters)
	for i := range sr.counts {
		sr.counts[i] = &clusterCounts{led: led}
	}
	sr.nodes = make([]*cluster.Node, clusters*size)
	for i := range sr.nodes {
		c := cfg
		c.ClusterID, c.NodeID, c.Conn = ids[i/size], fmt.Sprintf("n%d", i%size+1), sr.conns[i%nconns]
		if sr.nodes[i], err = cluster.NewNode(c, counting{sr.counts[i/size]}); err != nil {
			return nil, err
		}
	}
	made := ""
	if bn.o.scaleInit {
		if made, err = bn.makeBuckets(ctx, sr.conns[0], ids, cfg); err != nil {
			return nil, err
		}
		params += "; buckets made ahead (" + made + ")"
	}
	cpuStart := bn.serverCPU(b)
	starts := make([]time.Duration, len(sr.nodes))
	t0 := time.Now()
	giveUp := t0.Add(bn.o.scaleGiveUp)
	var startedOK atomic.Int64
	err = parallel(len(sr.nodes), bn.o.scaleStarts, func(i int) error {
		if time.Now().After(giveUp) {
			return fmt.Errorf("gave up after %v: %d of %d nodes started", bn.o.scaleGiveUp, startedOK.Load(), len(sr.nodes))
		}
		sctx, cancel := ctx, context.CancelFunc(func() {})
		if !bn.o.keepStart {
			sctx, cancel = context.WithTimeout(ctx, 2*time.Minute)
		}
		defer cancel()
		s := time.Now()
		err := sr.nodes[i].Start(sctx)
		starts[i] = time.Since(s)
		if err == nil {
			startedOK.Add(1)
		}
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("start %d nodes: %w", len(sr.nodes), err)
	}
	started := time.Since(t0)
	deadline := time.After(time.Until(giveUp.Add(time.Minute)))
	for n := 0; n < clusters; n++ {
		select {
		case <-led:
		case <-deadline:
			return nil, fmt.Errorf("only %d of %d clusters had a leader after %v", n, clusters, time.Since(t0).Round(time.Second))
		}
	}
	allLed := time.Since(t0)
	cpuStartup := bn.serverCPU(b) - cpuStart
	var firstLed []time.Duration
	for _, c := range sr.counts {
		firstLed = append(firstLed, time.Unix(0, c.firstLed.Load()).Sub(t0))
	}
	time.Sleep(2 * cfg.RenewInterval)
	m2, g2 := memNow()

	bn.log.Info("scale: steady", "clusters", clusters, "window", bn.o.scaleSteady)
	b0, l0, ch0 := totals(sr.counts)
	rc0 := sr.reconnects()
	cpu0, self0, w0 := bn.serverCPU(b), selfCPU(), time.Now()
	time.Sleep(bn.o.scaleSteady)
	cpu1, self1, w1 := bn.serverCPU(b), selfCPU(), time.Now()
	b1, l1, ch1 := totals(sr.counts)
	rc1 := sr.reconnects()
	leaderless := 0
	for _, c := range sr.counts {
		if c.become.Load()-c.lose.Load() != 1 {
			leaderless++
		}
	}
	wall := w1.Sub(w0)

	nodes := float64(len(sr.nodes))
	rows := []row{}
	r := latencyRow(fig, fmt.Sprintf("%d clusters: start -> every cluster has a leader", clusters), params, firstLed)
	r.note = fmt.Sprintf("all led after %s (all Start calls returned after %s, %d at a time); Start per node median %s, p99 %s; server CPU during start-up %.1f s",
		ms(allLed), ms(started), bn.o.scaleStarts, ms(summarize(starts).median), ms(summarize(starts).p99), cpuStartup.Seconds())
	rows = append(rows, r)
	spurious := (b1 - b0) + (l1 - l0)
	rows = append(rows, row{fig: fig, name: fmt.Sprintf("%d clusters: spurious transitions in a steady window", clusters), params: params + fmt.Sprintf(", %v window", bn.o.scaleSteady),
		median: fmt.Sprint(spurious), p99: "-",
		note: fmt.Sprintf("OnBecomeLeader %d, OnLoseLeadership %d, OnLeaderChange %d; clusters without exactly one leader at the end: %d; reconnections of the nodes' connections in the window %d", b1-b0, l1-l0, ch1-ch0, leaderless, rc1-rc0)}.
		withGoal("none", spurious == 0 && leaderless == 0))
	rows = append(rows, row{fig: fig, name: fmt.Sprintf("%d clusters: memory and goroutines per Node", clusters), params: params,
		median: fmt.Sprintf("%.1f KiB heap + %.1f KiB stack, %.1f goroutines", kib(m2.HeapAlloc, m1.HeapAlloc)/nodes, kib(m2.StackInuse, m1.StackInuse)/nodes, float64(g2-g1)/nodes),
		p99:    "-",
		note: fmt.Sprintf("the %d connections add %.1f KiB heap + %.1f KiB stack, %.1f goroutines a node; process heap %d MiB for %d nodes",
			nconns, kib(m1.HeapAlloc, m0.HeapAlloc)/nodes, kib(m1.StackInuse, m0.StackInuse)/nodes, float64(g1-g0)/nodes, m2.HeapAlloc>>20, len(sr.nodes))})
	srv := row{fig: fig, name: fmt.Sprintf("%d clusters: server CPU in the steady window", clusters), params: params, p99: "-"}
	if b.srv != nil {
		rss, _ := b.srv.rss()
		cpuPct := 100 * float64(cpu1-cpu0) / float64(wall)
		if err := bn.writeScalePoint(scalePoint{Clusters: clusters, LedAfterS: allLed.Seconds(), ServerCPUPct: cpuPct, ServerRSSMiB: rss >> 20, Spurious: spurious, Leaderless: leaderless}); err != nil {
			return nil, err
		}
		srv.median = fmt.Sprintf("%.1f%% of a core", cpuPct)
		srv.note = fmt.Sprintf("server RSS %d MiB; %s; the nodes' process used %.1f%% of a core; expected %.0f renewals/s",
			rss>>20, bn.serverState(ctx, b), 100*float64(self1-self0)/float64(wall), float64(clusters)/cfg.RenewInterval.Seconds())
	} else if b.mon != nil {
		v, err := b.mon.varz(ctx)
		if err == nil {
			srv.median = fmt.Sprintf("%.1f%% (varz)", v.CPU)
			srv.note = fmt.Sprintf("server memory %d MiB", v.Mem>>20)
		}
	} else {
		srv.median, srv.note = "-", "no server statistics: pass -monitor"
	}
	rows = append(rows, srv)
	// The figures first: a teardown that goes wrong must not lose them.
	bn.logRows(rows)
	t := time.Now()
	sr.teardown(ctx)
	bn.log.Info("scale: teardown", "clusters", clusters, "took", time.Since(t).Round(time.Millisecond), "order", sr.teardownOrder())
	return rows, nil
}

// makeBuckets makes the bucket of every cluster in ids, as go-cluster
// init does, 32 at a time, then waits until the newest is cfg.LeaseTTL
// old: a first election on it waits nothing (docs/design.md P6). It says
// how long the making took.
func (bn *bench) makeBuckets(ctx context.Context, nc *nats.Conn, ids []string, cfg cluster.Config) (string, error) {
	js, err := jetstream.New(nc)
	if err != nil {
		return "", err
	}
	opts := store.Options{Replicas: cfg.Bucket.Replicas, Storage: cfg.Bucket.Storage, LeaseTTL: cfg.LeaseTTL}
	t0 := time.Now()
	if err := parallel(len(ids), 32, func(i int) error {
		cctx, cancel := context.WithTimeout(ctx, time.Minute)
		defer cancel()
		_, _, err := store.Create(cctx, js, ids[i], opts)
		return err
	}); err != nil {
		return "", fmt.Errorf("make %d buckets: %w", len(ids), err)
	}
	took := time.Since(t0)
	bn.log.Info("scale: buckets made", "buckets", len(ids), "took", took.Round(time.Millisecond), "then waiting", cfg.LeaseTTL)
	time.Sleep(cfg.LeaseTTL)
	return fmt.Sprintf("%d in %s, %d at a time, then a LeaseTTL's wait", len(ids), ms(took), 32), nil
}

// scaleRenew is figure 5's RenewInterval: -scale-renew, else the
// library's default for LeaseTTL ttl.
func (bn *bench) scaleRenew(ttl time.Duration) time.Duration {
	if bn.o.scaleRenew != 0 {
		return bn.o.scaleRenew
	}
	if wire.DefaultRenewInterval*3 > ttl {
		return ttl / 4
	}
	return wire.DefaultRenewInterval
}

// logRows logs figure 5's rows as they are made.
func (bn *bench) logRows(rows []row) {
	for _, r := range rows {
		bn.log.Info("scale result", "measure", r.name, "median", r.median, "met", r.met, "note", r.note)
	}
}

// reconnects sums the reconnections of the nodes' connections so far.
func (sr *scaleRun) reconnects() uint64 {
	var n uint64
	for _, nc := range sr.conns {
		n += nc.Stats().Reconnects
	}
	return n
}

// teardown stops the run once (later calls do nothing). Nodes on
// connections of their own: it closes the connections first (every node
// then stops on a permanent error at once, with no releases to hand
// over), then stops the nodes. Nodes sharing connections: it stops them
// first, as a process holding many Nodes would, then closes the
// connections; closing a connection under thousands of running Nodes
// sets them all on its lock at once.
func (sr *scaleRun) teardown(ctx context.Context) {
	if sr.done {
		return
	}
	sr.done = true
	closeConns := func() {
		for _, nc := range sr.conns {
			if nc != nil {
				nc.Close()
			}
		}
	}
	if !sr.shared {
		closeConns()
	}
	_ = parallel(len(sr.nodes), 64, func(i int) error {
		if n := sr.nodes[i]; n != nil {
			sctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			defer cancel()
			_ = n.Stop(sctx)
		}
		return nil
	})
	closeConns()
}

// teardownOrder says which teardown ran.
func (sr *scaleRun) teardownOrder() string {
	if sr.shared {
		return "nodes stopped, then connections closed"
	}
	return "connections closed, then nodes stopped"
}

// kib is after - before in KiB, negative when it shrank (the counters
// are unsigned).
func kib(after, before uint64) float64 { return (float64(after) - float64(before)) / 1024 }

// memNow returns the memory statistics and goroutine count after a GC.
func memNow() (runtime.MemStats, int) {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m, runtime.NumGoroutine()
}

// serverCPU is the CPU time used so far by the server process, or 0 when
// it is not a child of this program.
func (bn *bench) serverCPU(b *backend) time.Duration {
	if b.srv == nil {
		return 0
	}
	d, err := b.srv.cpu()
	if err != nil {
		bn.log.Warn("server CPU", "error", err)
	}
	return d
}

// selfCPU is the CPU time this process has used.
func selfCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
