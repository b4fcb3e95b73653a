package cluster

import (
	"context"
	"testing"

	"github.com/ozanturksever/go-cluster/internal/natstest"
)

// BenchmarkStatePut is one fenced state write by the leader (a JetStream
// publish with the lease precondition, checked against the view first);
// "kv-put" is a plain KV Put of the same value on the same server, for the
// ratio.
func BenchmarkStatePut(b *testing.B) {
	srv := natstest.RunServer(b)
	leader := benchNodes(b, srv, 1)[0]
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
