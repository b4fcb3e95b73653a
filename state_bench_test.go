package cluster

import (
	"context"
	"fmt"
	"github.com/ozanturksever/go-cluster/state"
	"log/slog"
	"strconv"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/nats-io/nuid"

	"github.com/ozanturksever/go-cluster/internal/fenced"
	"github.com/ozanturksever/go-cluster/internal/natstest"
	"github.com/ozanturksever/go-cluster/internal/wire"
)

// BenchmarkStatePut is one fenced state write by the leader (a JetStream
// publish with the lease precondition, checked against the view first);
// "kv-put" is a plain KV Put of the same value on the same server, for the
// ratio.
func BenchmarkStatePut(b *testing.B) {
	srv := natstest.RunServer(b)
	leader := stateBenchLeader(b, Config{Conn: srv.Connect(b)})
	ctx := context.Background()
	value := []byte(`{"orders":42,"mode":"fast"}`)
	b.Run("fenced", func(b *testing.B) {
		state := leader.State()
		b.ReportAllocs()
		for b.Loop() {
			if _, err := state.Put(ctx, "bench", value); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("kv-put", func(b *testing.B) {
		kv := benchKV(b, srv.Connect(b))
		b.ReportAllocs()
		for b.Loop() {
			if _, err := kv.Put(ctx, "state.bench-plain", value); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkStateCommit is one fenced Commit of 10 keys (an atomic batch:
// nine messages without a reply, then the commit, which the server
// answers once it has stored all ten); "batch-10" is the same atomic batch
// without the fence (no lease check, no epoch), and "kv-put-10" 10 plain
// KV Puts of the same values in turn, each waiting for its
// acknowledgement. On one server the bucket is R1 on file storage, where
// the server stages every atomic batch in a file store of its own.
func BenchmarkStateCommit(b *testing.B) {
	srv := natstest.RunServer(b)
	leader := stateBenchLeader(b, Config{Conn: srv.Connect(b)})
	benchCommits(b, leader, srv.Connect(b))
}

// BenchmarkStateR3 is BenchmarkStatePut's and BenchmarkStateCommit's
// pairs on an R3 bucket of a 3-server cluster (in this process, so the
// servers share the benchmark's CPUs); the node and the plain client are
// on the same server.
func BenchmarkStateR3(b *testing.B) {
	c := natstest.RunCluster(b, 3)
	leader := stateBenchLeader(b, Config{NATSURLs: c.URLs()[:1], Bucket: BucketOptions{Replicas: 3}})
	ctx := context.Background()
	value := []byte(`{"orders":42,"mode":"fast"}`)
	nc := c.Server(0).Connect(b)
	b.Run("put-fenced", func(b *testing.B) {
		state := leader.State()
		b.ReportAllocs()
		for b.Loop() {
			if _, err := state.Put(ctx, "bench", value); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("put-kv", func(b *testing.B) {
		kv := benchKV(b, nc)
		b.ReportAllocs()
		for b.Loop() {
			if _, err := kv.Put(ctx, "state.bench-plain", value); err != nil {
				b.Fatal(err)
			}
		}
	})
	benchCommits(b, leader, nc)
}

// benchCommits runs the Commit sub-benchmarks of leader's bucket, the
// plain ones on nc.
func benchCommits(b *testing.B, leader *Node, nc *nats.Conn) {
	ctx := context.Background()
	if err := leader.State().EnableCommit(ctx); err != nil {
		b.Fatal(err)
	}
	value := []byte(`{"orders":42,"mode":"fast"}`)
	writes := make([]state.Write, 10)
	for i := range writes {
		writes[i] = state.Write{Key: fmt.Sprintf("bench.%d", i), Value: value}
	}
	b.Run("commit-10-fenced", func(b *testing.B) {
		state := leader.State()
		b.ReportAllocs()
		for b.Loop() {
			if _, err := state.Commit(ctx, writes...); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("batch-10", func(b *testing.B) {
		js, err := jetstream.New(nc)
		if err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		for b.Loop() {
			if err := plainBatch(ctx, nc, js, writes); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("kv-put-10", func(b *testing.B) {
		kv := benchKV(b, nc)
		b.ReportAllocs()
		for b.Loop() {
			for _, w := range writes {
				if _, err := kv.Put(ctx, "state.plain-"+w.Key, w.Value); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
}

// plainBatch publishes writes to bucket "cluster-bench" as one atomic
// batch, unfenced.
func plainBatch(ctx context.Context, nc *nats.Conn, js jetstream.JetStream, writes []state.Write) error {
	id := nuid.Next()
	for i, w := range writes {
		msg := nats.NewMsg(wire.KVSubject(wire.BucketName("bench"), "state.batch-"+w.Key))
		msg.Data = w.Value
		msg.Header.Set(fenced.BatchIDHeader, id)
		msg.Header.Set(fenced.BatchSeqHeader, strconv.Itoa(i+1))
		if i < len(writes)-1 {
			if err := nc.PublishMsg(msg); err != nil {
				return err
			}
			continue
		}
		msg.Header.Set(fenced.BatchCommitHeader, "1")
		_, err := js.PublishMsg(ctx, msg)
		return err
	}
	return nil
}

// stateBenchLeader starts node "node-1" of cluster "bench" with cfg's
// connection and bucket settings, and the default LeaseTTL and
// RenewInterval, and waits for it to lead: a new bucket is led one
// LeaseTTL after its creation.
func stateBenchLeader(b *testing.B, cfg Config) *Node {
	b.Helper()
	cfg.ClusterID, cfg.NodeID, cfg.Logger = "bench", "node-1", slog.New(slog.DiscardHandler)
	node, err := NewNode(cfg, nil)
	if err != nil {
		b.Fatal(err)
	}
	// A ctx never cancelled: see BENCHMARKS.md, finding 1.
	if err := node.Start(context.Background()); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = node.Stop(context.Background()) })
	ctx, cancel := context.WithTimeout(context.Background(), 3*wire.DefaultLeaseTTL)
	defer cancel()
	if _, err := node.WaitForLeader(ctx); err != nil {
		b.Fatal(err)
	}
	natstest.WaitFor(b, time.Second, node.IsLeader, "node-1 does not lead")
	return node
}

// BenchmarkStatePutInterleaved times, in each iteration and in turn, a
// fenced Put and what it is made of, all on one server and one bucket:
// a plain KV Put, a publish with its own message ID, one with the lease
// check alone, and one with both (what a fenced Put sends, without the
// node). Interleaving puts each pair under the same load, on a shared
// machine. It reports the mean of each in µs/op; ns/op is the whole
// iteration.
func BenchmarkStatePutInterleaved(b *testing.B) {
	srv := natstest.RunServer(b)
	leader := stateBenchLeader(b, Config{Conn: srv.Connect(b)})
	ctx := context.Background()
	value := []byte(`{"orders":42,"mode":"fast"}`)
	nc := srv.Connect(b)
	kv := benchKV(b, nc)
	js, err := jetstream.New(nc)
	if err != nil {
		b.Fatal(err)
	}
	st, err := stateStore(leader)
	if err != nil {
		b.Fatal(err)
	}
	leaseSubject := wire.KVSubject(st.Bucket(), wire.LeaseKey)
	subject := fenced.Subject(st.Bucket(), "parts")
	publish := func(withID, withFence bool) error {
		_, rev, _ := fence(leader)
		h := nats.Header{}
		if withID {
			h.Set(jetstream.MsgIDHeader, nuid.Next())
		}
		if withFence {
			h.Set(jetstream.ExpectedLastSubjSeqHeader, strconv.FormatUint(rev, 10))
			h.Set(jetstream.ExpectedLastSubjSeqSubjHeader, leaseSubject)
		}
		_, err := js.PublishMsg(ctx, &nats.Msg{Subject: subject, Data: value, Header: h})
		return err
	}
	steps := []struct {
		name string
		run  func() error
	}{
		{"fenced-put", func() error { _, err := leader.State().Put(ctx, "bench", value); return err }},
		{"kv-put", func() error { _, err := kv.Put(ctx, "state.bench-plain", value); return err }},
		{"publish+id", func() error { return publish(true, false) }},
		{"publish+fence", func() error { return publish(false, true) }},
		{"publish+id+fence", func() error { return publish(true, true) }},
	}
	spent := make([]time.Duration, len(steps))
	for b.Loop() {
		for i, s := range steps {
			t0 := time.Now()
			if err := s.run(); err != nil {
				b.Fatalf("%s: %v", s.name, err)
			}
			spent[i] += time.Since(t0)
		}
	}
	for i, s := range steps {
		b.ReportMetric(float64(spent[i].Microseconds())/float64(b.N), s.name+"-µs/op")
	}
}
