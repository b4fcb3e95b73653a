package health

import (
	"testing"
	"time"

	"github.com/ozanturksever/go-cluster/internal/natstest"
	"go.uber.org/goleak"
)

// TestNoGoroutinesAfterStop checks, while the server and a shared
// connection are still up, that Stop leaves no goroutine behind: neither
// the subscriptions' nor those of a connection the Checker dialled, nor
// those of the queries it made.
func TestNoGoroutinesAfterStop(t *testing.T) {
	natstest.CheckLeaks(t)
	srv := runServer(t)
	nc := srv.Connect(t)
	// The first request on a connection starts its response-mux subscription,
	// which belongs to the connection and lives as long as it: start it
	// before taking the baseline.
	_, _ = nc.Request("warm.up", nil, time.Second)
	before := goleak.IgnoreCurrent()

	shared := startChecker(t, nc, "orders", "n1")
	own, err := NewChecker(Config{ClusterID: "orders", NodeID: "n2", NATSURLs: []string{srv.URL()}, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	if err := own.Start(testCtx(t, 5*time.Second)); err != nil {
		t.Fatal(err)
	}
	ctx := testCtx(t, 10*time.Second)
	for _, c := range []*Checker{shared, own} {
		if _, err := c.QueryNode(ctx, "n1", time.Second); err != nil {
			t.Fatal(err)
		}
		if rs, err := c.QueryClusterN(ctx, 2, time.Second); err != nil || len(rs) != 2 {
			t.Fatalf("QueryClusterN = %v, %v", rs, err)
		}
	}
	shared.Stop()
	own.Stop()

	var leaked error
	deadline := time.Now().Add(5 * time.Second)
	for leaked = goleak.Find(before); leaked != nil && time.Now().Before(deadline); leaked = goleak.Find(before) {
	}
	if leaked != nil {
		t.Fatalf("goroutines left after Stop: %v", leaked)
	}
}
