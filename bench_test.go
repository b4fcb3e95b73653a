package cluster

// Micro-benchmarks of the hot paths, with allocations:
//
//	go test -run '^$' -bench . -benchmem .
//
// Lease encode/decode and watch handling run without NATS; renewals run
// against an embedded server (internal/natstest), side by side with a bare
// KV compare-and-swap. The program in internal/proof/bench measures the figures
// of BENCHMARKS.md end to end.

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/ozanturksever/go-cluster/internal/natstest"
	"github.com/ozanturksever/go-cluster/internal/wire"
)

// benchLease is a held lease record as a leader writes it.
func benchLease(nodeID string) Lease {
	now := time.Now()
	return Lease{NodeID: nodeID, Epoch: 42, AcquiredAt: now.Add(-time.Hour).UTC(), ExpiresAt: now.Add(wire.DefaultLeaseTTL).UTC(),
		TTLMillis: wire.DefaultLeaseTTL.Milliseconds()}
}

func BenchmarkLeaseEncode(b *testing.B) {
	l := benchLease("node-1")
	b.ReportAllocs()
	for b.Loop() {
		if _, err := encodeLease(l); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkLeaseDecode(b *testing.B) {
	data, err := encodeLease(benchLease("node-1"))
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := decodeLease(data, 7); err != nil {
			b.Fatal(err)
		}
	}
}

// benchNodes starts n nodes of one cluster on srv, each with its own
// connection, and returns them with the leader first.
func benchNodes(b *testing.B, srv *natstest.Server, n int) []*Node {
	b.Helper()
	var nodes []*Node
	for i := range n {
		cfg := Config{ClusterID: "bench", NodeID: "node-" + string(rune('1'+i)), Conn: srv.Connect(b),
			Logger: slog.New(slog.DiscardHandler)}
		node, err := NewNode(cfg, nil)
		if err != nil {
			b.Fatal(err)
		}
		// A ctx never cancelled: see BENCHMARKS.md, finding 1.
		if err := node.Start(context.Background()); err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { _ = node.Stop(context.Background()) })
		nodes = append(nodes, node)
		if i == 0 {
			// A new bucket's first election waits one LeaseTTL (10s here).
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			_, err := node.WaitForLeader(ctx)
			cancel()
			if err != nil {
				b.Fatal(err)
			}
		}
	}
	if !nodes[0].IsLeader() {
		b.Fatal("the first node does not lead")
	}
	return nodes
}

// BenchmarkRenew is one renewal: ValidateLeadership hands a command to the
// election loop, which CASes the lease and returns the proven epoch. The
// "kv-update" sub-benchmark is a bare KV compare-and-swap of the same
// record on the same server, for the ratio.
func BenchmarkRenew(b *testing.B) {
	srv := natstest.RunServer(b)
	leader := benchNodes(b, srv, 1)[0]
	ctx := context.Background()
	b.Run("validate-leadership", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := leader.ValidateLeadership(ctx); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("kv-update", func(b *testing.B) {
		kv := benchKV(b, srv.Connect(b))
		data, err := encodeLease(benchLease("node-1"))
		if err != nil {
			b.Fatal(err)
		}
		rev, err := kv.Put(ctx, "bench", data)
		if err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		for b.Loop() {
			if rev, err = kv.Update(ctx, "bench", data, rev); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkRenewSeenByFollower is a renewal until a follower's view shows
// it: the leader's CAS, the watch delivery and the follower's loop. The
// "kv-watch" sub-benchmark is the same through bare KV calls: an Update,
// and a watcher of the key receiving it.
func BenchmarkRenewSeenByFollower(b *testing.B) {
	srv := natstest.RunServer(b)
	nodes := benchNodes(b, srv, 2)
	leader, follower := nodes[0], nodes[1]
	ctx := context.Background()
	b.Run("node", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			before, _ := follower.Lease()
			if _, err := leader.ValidateLeadership(ctx); err != nil {
				b.Fatal(err)
			}
			// Poll with short sleeps: a spinning goroutine would hold one
			// of the machine's few Ps and slow the follower down.
			for {
				if l, _ := follower.Lease(); l.Revision > before.Revision {
					break
				}
				time.Sleep(5 * time.Microsecond)
			}
		}
	})
	b.Run("kv-watch", func(b *testing.B) {
		kv := benchKV(b, srv.Connect(b))
		w, err := benchKV(b, srv.Connect(b)).Watch(ctx, "bench-watch")
		if err != nil {
			b.Fatal(err)
		}
		defer w.Stop()
		data, err := encodeLease(benchLease("node-1"))
		if err != nil {
			b.Fatal(err)
		}
		rev, err := kv.Put(ctx, "bench-watch", data)
		if err != nil {
			b.Fatal(err)
		}
		for e := range w.Updates() { // the current value, then the end marker
			if e == nil {
				break
			}
		}
		b.ReportAllocs()
		for b.Loop() {
			if rev, err = kv.Update(ctx, "bench-watch", data, rev); err != nil {
				b.Fatal(err)
			}
			for e := range w.Updates() {
				if e != nil && e.Revision() == rev {
					break
				}
			}
		}
	})
}

func benchKV(b *testing.B, nc *nats.Conn) jetstream.KeyValue {
	b.Helper()
	js, err := jetstream.New(nc)
	if err != nil {
		b.Fatal(err)
	}
	kv, err := js.KeyValue(context.Background(), wire.BucketName("bench"))
	if err != nil {
		b.Fatal(err)
	}
	return kv
}
