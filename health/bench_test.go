package health

import (
	"context"
	"fmt"
	"testing"
	"time"
)

// BenchmarkQueryNode measures one QueryNode round trip (client -> server ->
// node -> server -> client) against an embedded server on loopback.
func BenchmarkQueryNode(b *testing.B) {
	srv := runServer(b)
	c := startChecker(b, srv.Connect(b), "bench", "n1")
	c.SetRole("PRIMARY")
	c.SetLeader("n1")
	c.SetCustom("version", "1.4.2")
	cl := newTestClient(b, srv.Connect(b), "bench")
	ctx := context.Background()

	b.ReportAllocs()
	for b.Loop() {
		if _, err := cl.QueryNode(ctx, "n1", 5*time.Second); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkQueryNodeParallel is QueryNode from many goroutines over one
// client connection.
func BenchmarkQueryNodeParallel(b *testing.B) {
	srv := runServer(b)
	startChecker(b, srv.Connect(b), "bench", "n1")
	cl := newTestClient(b, srv.Connect(b), "bench")
	ctx := context.Background()

	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := cl.QueryNode(ctx, "n1", 5*time.Second); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

// BenchmarkQueryCluster20 asks a 20-node cluster at once and returns when
// all 20 have answered (QueryClusterN); each node has its own connection.
func BenchmarkQueryCluster20(b *testing.B) {
	const n = 20
	srv := runServer(b)
	for i := range n {
		startChecker(b, srv.Connect(b), "bench", fmt.Sprintf("n%02d", i))
	}
	cl := newTestClient(b, srv.Connect(b), "bench")
	ctx := context.Background()

	b.ReportAllocs()
	for b.Loop() {
		rs, err := cl.QueryClusterN(ctx, n, 5*time.Second)
		if err != nil || len(rs) != n {
			b.Fatalf("got %d responses, %v", len(rs), err)
		}
	}
}
