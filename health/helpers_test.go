package health

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/ozanturksever/go-cluster/internal/natstest"
)

// quiet is the logger of checkers under test.
var quiet = slog.New(slog.DiscardHandler)

// testCtx returns a context bounded by timeout, cancelled at cleanup.
func testCtx(t testing.TB, timeout time.Duration) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	t.Cleanup(cancel)
	return ctx
}

// startChecker starts a Checker for clusterID/nodeID on nc, stopped at cleanup.
func startChecker(t testing.TB, nc *nats.Conn, clusterID, nodeID string) *Checker {
	t.Helper()
	c, err := NewChecker(Config{ClusterID: clusterID, NodeID: nodeID, Conn: nc, Logger: quiet})
	if err != nil {
		t.Fatalf("NewChecker(%s/%s): %v", clusterID, nodeID, err)
	}
	if err := c.Start(testCtx(t, 5*time.Second)); err != nil {
		t.Fatalf("Start(%s/%s): %v", clusterID, nodeID, err)
	}
	t.Cleanup(c.Stop)
	return c
}

// newTestClient returns a Client for clusterID over nc.
func newTestClient(t testing.TB, nc *nats.Conn, clusterID string) *Client {
	t.Helper()
	cl, err := NewClient(nc, clusterID)
	if err != nil {
		t.Fatalf("NewClient: %v", err)
	}
	cl.log = quiet
	return cl
}

// runServer starts an embedded server (see natstest).
func runServer(t testing.TB) *natstest.Server { return natstest.RunServer(t) }

func nodeIDs(rs []Response) []string {
	ids := make([]string, len(rs))
	for i, r := range rs {
		ids[i] = r.NodeID
	}
	return ids
}
