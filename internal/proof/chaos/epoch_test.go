package chaos

import (
	"context"
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	cluster "github.com/ozanturksever/go-cluster"
	"github.com/ozanturksever/go-cluster/internal/natstest"
	"github.com/ozanturksever/go-cluster/internal/store"
)

// TestEpochWhileLeading: Epoch is documented as "this node's epoch while it
// leads". Right after IsLeader turns true it must already say so, not the
// epoch of the record seen before (0 on a fresh bucket). Found by the secure
// tests, which read Epoch as soon as IsLeader held.
//
// Each round's bucket is made ahead, as go-cluster init makes one, and
// is older than its LeaseTTL when the round starts: its node campaigns
// at once (docs/design.md P6) instead of waiting a LeaseTTL, and the
// spin below covers the campaign only.
func TestEpochWhileLeading(t *testing.T) {
	// Runs alone: it spins on IsLeader to read Epoch within microseconds
	// of it; tests beside it would take the CPU it spins on.
	natstest.CheckLeaks(t)
	srv := natstest.RunServer(t)
	stale := 0
	const rounds = 40
	const ttl = time.Second
	js, err := jetstream.New(srv.Connect(t))
	if err != nil {
		t.Fatal(err)
	}
	setup, cancelSetup := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancelSetup()
	for i := range rounds {
		id := fmt.Sprintf("epoch%d", i)
		if _, _, err := store.Create(setup, js, id, store.Options{Replicas: 1, LeaseTTL: ttl}); err != nil {
			t.Fatal(err)
		}
		if _, _, err := store.CreateMembers(setup, js, id, store.Options{Replicas: 1, LeaseTTL: ttl}); err != nil {
			t.Fatal(err)
		}
	}
	made := time.Now()
	natstest.WaitFor(t, 2*ttl, func() bool { return time.Since(made) > ttl }, "the buckets' age")
	for i := range rounds {
		n, err := cluster.NewNode(cluster.Config{ClusterID: fmt.Sprintf("epoch%d", i), NodeID: "a", NATSURLs: []string{srv.URL()},
			LeaseTTL: ttl, Logger: slog.New(slog.DiscardHandler)}, nil)
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		if err := n.Start(ctx); err != nil {
			t.Fatal(err)
		}
		deadline := time.Now().Add(5 * time.Second)
		for !n.IsLeader() && time.Now().Before(deadline) {
			// spin: the window is microseconds wide
		}
		e, leading := n.Epoch(), n.IsLeader()
		// The tenure's epoch, as the bucket holds it: its first (I1 in
		// docs/design.md), whatever number that is.
		if v, err := n.ValidateLeadership(ctx); leading && (err != nil || e != v) {
			t.Logf("Epoch() = %d while leading; ValidateLeadership = %d, %v", e, v, err)
			stale++
		}
		if !leading {
			t.Errorf("round %d: the node did not lead within 5 s of its Start", i)
		}
		if err := n.Stop(ctx); err != nil {
			t.Fatal(err)
		}
		cancel()
	}
	if stale > 0 {
		t.Errorf("%d of %d fresh leaders reported an Epoch() other than their tenure's while IsLeader() was already true", stale, rounds)
	}
}
