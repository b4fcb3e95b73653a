package cluster

import (
	"context"
	"io"
	"log/slog"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ozanturksever/go-cluster/internal/natstest"
)

// Short leases keep the tests fast; TTL/RenewInterval keeps the default
// ratio. The tests run side by side (t.Parallel, 8 per CPU: TestMain), so
// the leases must ride out a loaded machine: at 1s (renewals 250ms apart,
// a deadline 900ms after the last acknowledged one) leaders lost their
// tenure to stalls beside other tests on 2 cores, and a 250ms
// RequestTimeout, which also bounds the first dial's handshake (rule 18),
// failed Starts with "cannot connect to NATS ... i/o timeout" (issue 40).
// At 2s a stall of about 1.3s costs no tenure, and a handshake gets 1s.
// Waiting tests run side by side, so the longer TTL costs little wall
// time. Tests that assert leadership stays put over a longer time use
// stableConfig.
const (
	testTTL            = 2 * time.Second
	testRenew          = 500 * time.Millisecond
	testRequestTimeout = time.Second
)

// stableConfig is testConfig with a lease long enough to ride out a loaded
// machine for the whole of a test that counts every tenure.
func stableConfig(clusterID, nodeID string, urls ...string) Config {
	c := testConfig(clusterID, nodeID, urls...)
	c.LeaseTTL, c.RenewInterval = 3*time.Second, 750*time.Millisecond
	return c
}

var clusterSeq atomic.Int64

// uniqueClusterID gives each test its own bucket.
func uniqueClusterID(t testing.TB) string {
	return "c" + time.Now().Format("150405") + "-" + itoa(clusterSeq.Add(1))
}

func itoa(i int64) string {
	const digits = "0123456789"
	if i == 0 {
		return "0"
	}
	var b []byte
	for ; i > 0; i /= 10 {
		b = append([]byte{digits[i%10]}, b...)
	}
	return string(b)
}

// testLogger discards logs unless GOCLUSTER_TEST_LOG is set.
func testLogger() *slog.Logger {
	if os.Getenv("GOCLUSTER_TEST_LOG") != "" {
		return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return slog.New(slog.NewTextHandler(io.Discard, nil))
}

func testConfig(clusterID, nodeID string, urls ...string) Config {
	return Config{
		ClusterID:      clusterID,
		NodeID:         nodeID,
		NATSURLs:       urls,
		LeaseTTL:       testTTL,
		RenewInterval:  testRenew,
		RequestTimeout: testRequestTimeout,
		Logger:         testLogger(),
	}
}

// setup starts the leak check (first, so it runs last), a server, a
// recorder and a fresh cluster ID: what almost every test needs.
func setup(t *testing.T) (*natstest.Server, *recorder, string) {
	t.Helper()
	natstest.CheckLeaks(t)
	return natstest.RunServer(t), newRecorder(), uniqueClusterID(t)
}

// startNodes starts one testConfig node per name.
func startNodes(t *testing.T, srv *natstest.Server, rec *recorder, id string, names ...string) []*Node {
	t.Helper()
	var nodes []*Node
	for _, name := range names {
		nodes = append(nodes, startNode(t, testConfig(id, name, srv.URL()), rec, nil))
	}
	return nodes
}

// startNode starts a campaigning node recorded by rec, stopped at cleanup.
func startNode(t testing.TB, cfg Config, rec *recorder, extra Hooks) *Node {
	t.Helper()
	return startNodeWithin(t, cfg, rec, extra, 10*time.Second)
}

// startNodeWithin is startNode with a deadline of its own for Start.
func startNodeWithin(t testing.TB, cfg Config, rec *recorder, extra Hooks, within time.Duration) *Node {
	t.Helper()
	var n *Node
	var err error
	n, err = NewNode(cfg, rec.hooks(cfg.NodeID, func() int64 { return n.Epoch() }, extra))
	if err != nil {
		t.Fatalf("NewNode(%s): %v", cfg.NodeID, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), within)
	defer cancel()
	if err := n.Start(ctx); err != nil {
		t.Fatalf("Start(%s): %v", cfg.NodeID, err)
	}
	t.Cleanup(func() { stopNode(t, n) })
	return n
}

func stopNode(t testing.TB, n *Node) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := n.Stop(ctx); err != nil {
		t.Errorf("Stop(%s): %v", n.Config().NodeID, err)
	}
}

// leaders returns the nodes that believe they lead.
func leaders(nodes []*Node) []*Node {
	var out []*Node
	for _, n := range nodes {
		if n.IsLeader() {
			out = append(out, n)
		}
	}
	return out
}

// waitOneLeader waits until exactly one node leads and every running node
// agrees on who it is.
func waitOneLeader(t testing.TB, nodes []*Node, timeout time.Duration) *Node {
	t.Helper()
	var leader *Node
	natstest.WaitFor(t, timeout, func() bool {
		ls := leaders(nodes)
		if len(ls) != 1 {
			return false
		}
		for _, n := range nodes {
			if n.Leader() != ls[0].Config().NodeID {
				return false
			}
		}
		leader = ls[0]
		return true
	}, "no single agreed leader among %d nodes", len(nodes))
	return leader
}

func without(nodes []*Node, drop *Node) []*Node {
	var out []*Node
	for _, n := range nodes {
		if n != drop {
			out = append(out, n)
		}
	}
	return out
}
