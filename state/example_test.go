package state_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	cluster "github.com/ozanturksever/go-cluster"
	"github.com/ozanturksever/go-cluster/clustertest"
	"github.com/ozanturksever/go-cluster/state"
)

// The leader writes state that every node reads, each write fenced on its
// lease by the NATS server. Commit writes several keys at once, each
// expecting the revision it read: a Commit on a stale read writes nothing
// and fails with state.ErrConflict.
func Example() {
	srv, err := clustertest.StartServer()
	if err != nil {
		fmt.Println(err)
		return
	}
	defer srv.Close()
	ctx := context.Background()

	leads := make(chan struct{})
	node, err := cluster.NewNode(cluster.Config{
		ClusterID: "orders", NodeID: "node-1", NATSURLs: srv.URLs(),
		LeaseTTL: time.Second,
		Logger:   slog.New(slog.DiscardHandler),
	}, cluster.HookFuncs{BecomeLeader: func(context.Context) error {
		close(leads)
		return nil
	}})
	if err != nil {
		fmt.Println(err)
		return
	}
	if err := node.Start(ctx); err != nil {
		fmt.Println(err)
		return
	}
	defer node.Stop(ctx)
	<-leads

	st := node.State()
	if _, err := st.Put(ctx, "config.mode", []byte("active")); err != nil {
		fmt.Println(err)
		return
	}
	e, err := st.Get(ctx, "config.mode")
	fmt.Printf("%s = %s (written in this tenure: %v), %v\n", e.Key, e.Value, e.Epoch == node.Epoch(), err)

	if err := st.EnableCommit(ctx); err != nil { // once per bucket
		fmt.Println(err)
		return
	}
	// Read, then write what was read with the revision it had: the zero
	// entry of a missing key has revision 0, which expects no value.
	next, err := st.Get(ctx, "orders.next-id")
	fmt.Println("orders.next-id:", errors.Is(err, state.ErrKeyNotFound))
	_, err = st.Commit(ctx,
		state.Write{Key: "orders.next-id", Value: []byte("2"), Expect: state.ExpectRevision(next.Revision)},
		state.Write{Key: "orders.1", Value: []byte("pending"), Expect: state.ExpectAbsent()},
	)
	fmt.Println("commit:", err)
	// The same read is stale now: nothing of this Commit lands.
	_, err = st.Commit(ctx,
		state.Write{Key: "orders.next-id", Value: []byte("2"), Expect: state.ExpectRevision(next.Revision)},
		state.Write{Key: "orders.2", Value: []byte("pending")},
	)
	fmt.Println("stale commit conflicts:", errors.Is(err, state.ErrConflict))
	id, err := st.Get(ctx, "orders.next-id")
	fmt.Printf("orders.next-id = %s, %v\n", id.Value, err)
	_, err = st.Get(ctx, "orders.2")
	fmt.Println("orders.2 written:", !errors.Is(err, state.ErrKeyNotFound))
	// Output:
	// config.mode = active (written in this tenure: true), <nil>
	// orders.next-id: true
	// commit: <nil>
	// stale commit conflicts: true
	// orders.next-id = 2, <nil>
	// orders.2 written: false
}
