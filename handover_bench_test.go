package cluster

import (
	"context"
	"log/slog"
	"slices"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/ozanturksever/go-cluster/internal/natstest"
	"github.com/ozanturksever/go-cluster/internal/wire"
)

// benchCooldown keeps a node that stepped down out of elections only
// briefly, so that two nodes can hand over back to back.
const benchCooldown = 20 * time.Millisecond

// BenchmarkHandover is a graceful handover between two nodes on one
// embedded server: StepDown (or Stop) on the leader until the successor's
// OnBecomeLeader runs. It reports the median and p99 besides the mean.
// "kv-floor" is the same handover in bare KV calls, its floor. Every
// round idles first (the cooldown), untimed: an idle machine is slower to
// wake than one in a tight loop (BenchmarkRenew's "kv-update"), so the
// floor idles as long.
func BenchmarkHandover(b *testing.B) {
	b.Run("stepdown", func(b *testing.B) {
		srv := natstest.RunServer(b)
		nodes, became := handoverNodes(b, srv, "hs", 2)
		var took []time.Duration
		for b.Loop() {
			b.StopTimer()
			leader := handoverLeader(b, nodes)
			time.Sleep(benchCooldown + 5*time.Millisecond)
			drainBecame(became)
			b.StartTimer()
			t0 := time.Now()
			if err := leader.StepDown(context.Background()); err != nil {
				b.Fatal(err)
			}
			took = append(took, waitBecome(b, became, leader.cfg.NodeID).Sub(t0))
		}
		reportLatency(b, took)
	})
	b.Run("stop", func(b *testing.B) {
		srv := natstest.RunServer(b)
		nodes, became := handoverNodes(b, srv, "hx", 2)
		var took []time.Duration
		for b.Loop() {
			b.StopTimer()
			leader := handoverLeader(b, nodes)
			time.Sleep(benchCooldown + 5*time.Millisecond)
			drainBecame(became)
			b.StartTimer()
			t0 := time.Now()
			if err := leader.Stop(context.Background()); err != nil {
				b.Fatal(err)
			}
			took = append(took, waitBecome(b, became, leader.cfg.NodeID).Sub(t0))
			b.StopTimer()
			i := slices.Index(nodes, leader)
			nodes[i] = handoverNode(b, srv, "hx", leader.cfg.NodeID, became)
			b.StartTimer()
		}
		reportLatency(b, took)
	})
	b.Run("kv-floor", func(b *testing.B) {
		srv := natstest.RunServer(b)
		handoverNodes(b, srv, "hf", 1) // makes the bucket
		kvFloor(b, benchKVOf(b, srv.Connect(b), "hf"), benchKVOf(b, srv.Connect(b), "hf"))
	})
}

// kvFloor is a handover in bare KV calls, the floor of BenchmarkHandover:
// a compare-and-swap from one connection (the release), its delivery to a
// watcher on another, and that connection's compare-and-swap on the
// revision delivered (the acquire). It idles as long between rounds.
func kvFloor(b *testing.B, leader, successor jetstream.KeyValue) {
	ctx := context.Background()
	held, err := encodeLease(benchLease("node-1"))
	if err != nil {
		b.Fatal(err)
	}
	w, err := successor.Watch(ctx, "floor")
	if err != nil {
		b.Fatal(err)
	}
	defer w.Stop()
	awaitRev := func(rev uint64) {
		for e := range w.Updates() {
			if e != nil && e.Revision() >= rev {
				return
			}
		}
	}
	var took []time.Duration
	for b.Loop() {
		b.StopTimer()
		rev, err := leader.Put(ctx, "floor", held)
		if err != nil {
			b.Fatal(err)
		}
		awaitRev(rev)
		time.Sleep(benchCooldown + 5*time.Millisecond)
		b.StartTimer()
		t0 := time.Now()
		if rev, err = leader.Update(ctx, "floor", []byte(`{"released":true}`), rev); err != nil {
			b.Fatal(err)
		}
		awaitRev(rev)
		if _, err = successor.Update(ctx, "floor", held, rev); err != nil {
			b.Fatal(err)
		}
		took = append(took, time.Since(t0))
	}
	reportLatency(b, took)
}

func benchKVOf(b *testing.B, nc *nats.Conn, clusterID string) jetstream.KeyValue {
	b.Helper()
	js, err := jetstream.New(nc)
	if err != nil {
		b.Fatal(err)
	}
	kv, err := js.KeyValue(context.Background(), wire.BucketName(clusterID))
	if err != nil {
		b.Fatal(err)
	}
	return kv
}

// becameLeader is one OnBecomeLeader: who, and when it ran.
type becameLeader struct {
	node string
	at   time.Time
}

func handoverNodes(b *testing.B, srv *natstest.Server, id string, n int) ([]*Node, chan becameLeader) {
	became := make(chan becameLeader, 16)
	var nodes []*Node
	for i := range n {
		nodes = append(nodes, handoverNode(b, srv, id, "node-"+string(rune('1'+i)), became))
	}
	return nodes, became
}

func handoverNode(b *testing.B, srv *natstest.Server, clusterID, nodeID string, became chan becameLeader) *Node {
	b.Helper()
	cfg := Config{ClusterID: clusterID, NodeID: nodeID, Conn: srv.Connect(b), Cooldown: benchCooldown,
		Logger: slog.New(slog.DiscardHandler)}
	node, err := NewNode(cfg, HookFuncs{BecomeLeader: func(context.Context) error {
		became <- becameLeader{node: nodeID, at: time.Now()}
		return nil
	}})
	if err != nil {
		b.Fatal(err)
	}
	if err := node.Start(context.Background()); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = node.Stop(context.Background()) })
	return node
}

// handoverLeader waits for one of nodes to lead and every node to know it.
func handoverLeader(b *testing.B, nodes []*Node) *Node {
	b.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if l := leaders(nodes); len(l) == 1 {
			known := true
			for _, n := range nodes {
				known = known && n.Leader() == l[0].cfg.NodeID
			}
			if known {
				return l[0]
			}
		}
		time.Sleep(time.Millisecond)
	}
	b.Fatal("no leader every node knows within 30s")
	return nil
}

// waitBecome returns when a node other than old ran OnBecomeLeader.
func waitBecome(b *testing.B, became chan becameLeader, old string) time.Time {
	b.Helper()
	timeout := time.After(10 * time.Second)
	for {
		select {
		case e := <-became:
			if e.node != old {
				return e.at
			}
		case <-timeout:
			b.Fatal("no successor within 10s")
		}
	}
}

// drainBecame drops OnBecomeLeader calls already reported.
func drainBecame(became chan becameLeader) {
	for {
		select {
		case <-became:
		default:
			return
		}
	}
}

// reportLatency reports the median and p99 of took.
func reportLatency(b *testing.B, took []time.Duration) {
	if len(took) == 0 {
		return
	}
	slices.Sort(took)
	b.ReportMetric(float64(took[len(took)/2].Microseconds())/1000, "median-ms")
	b.ReportMetric(float64(took[(len(took)*99)/100].Microseconds())/1000, "p99-ms")
}
