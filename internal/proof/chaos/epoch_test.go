package chaos

import (
	"context"
	"fmt"
	"log/slog"
	"testing"
	"time"

	cluster "github.com/ozanturksever/go-cluster"
	"github.com/ozanturksever/go-cluster/internal/natstest"
)

// TestEpochWhileLeading: Epoch is documented as "this node's epoch while it
// leads". Right after IsLeader turns true it must already say so, not the
// epoch of the record seen before (0 on a fresh bucket). Found by the secure
// tests, which read Epoch as soon as IsLeader held.
func TestEpochWhileLeading(t *testing.T) {
	natstest.CheckLeaks(t)
	srv := natstest.RunServer(t)
	stale := 0
	const rounds = 40
	for i := range rounds {
		n, err := cluster.NewNode(cluster.Config{ClusterID: fmt.Sprintf("epoch%d", i), NodeID: "a", NATSURLs: []string{srv.URL()},
			LeaseTTL: time.Second, Logger: slog.New(slog.DiscardHandler)}, nil)
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
		if err := n.Stop(ctx); err != nil {
			t.Fatal(err)
		}
		cancel()
	}
	if stale > 0 {
		t.Errorf("%d of %d fresh leaders reported an Epoch() other than their tenure's while IsLeader() was already true", stale, rounds)
	}
}
