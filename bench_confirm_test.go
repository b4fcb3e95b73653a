package cluster

import (
	"testing"
	"time"

	"github.com/ozanturksever/go-cluster/internal/natstest"
	"github.com/ozanturksever/go-cluster/internal/store"
)

// BenchmarkConfirm is what a Confirm costs every landing (docs/design.md
// §4.11: a takeover and a hand-back are a Write and a Confirm), beside a
// bare stream-info request and the CAS it follows.
func BenchmarkConfirm(b *testing.B) {
	srv := natstest.RunServer(b)
	nc := srv.Connect(b)
	id := "confirm"
	st, err := store.Open(ctx(b), nc, store.API{}, id, store.Options{LeaseTTL: time.Second}, time.Second)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("confirm", func(b *testing.B) {
		for range b.N {
			if _, err := st.Confirm(ctx(b)); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("rawinfo", func(b *testing.B) {
		for range b.N {
			if _, err := nc.Request("$JS.API.STREAM.INFO.KV_cluster-confirm", nil, time.Second); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("cas", func(b *testing.B) {
		rev, _ := st.KV().Put(ctx(b), "x", []byte("v"))
		for range b.N {
			rev, err = st.KV().Update(ctx(b), "x", []byte("v"), rev)
			if err != nil {
				b.Fatal(err)
			}
		}
	})
}
