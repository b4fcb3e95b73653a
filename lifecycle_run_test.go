package cluster

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/ozanturksever/go-cluster/internal/natstest"
)

// runNode runs n in the background; the channel gets Run's result.
func runNode(ctx context.Context, n *Node) <-chan error {
	out := make(chan error, 1)
	go func() { out <- n.Run(ctx) }()
	return out
}

// runResult waits for Run's result, failing the test after timeout.
func runResult(t *testing.T, out <-chan error, timeout time.Duration) error {
	t.Helper()
	select {
	case err := <-out:
		return err
	case <-time.After(timeout):
		t.Fatalf("Run did not return within %v", timeout)
		return nil
	}
}

// Run leads until its ctx ends, then stops with a release: the follower
// takes over at once, not after LeaseTTL, and Run returns nil.
func TestRunReleasesWhenContextEnds(t *testing.T) {
	// Side by side with others: a lease of 5s (renewed every 1.25s) puts
	// an expiry at least 3.75s after a's last renewal, far beyond the
	// LeaseTTL/2 a release is given, and a stall under load far below it.
	t.Parallel()
	srv, rec, id := setup(t)
	cfg := stableConfig(id, "a", srv.URL())
	cfg.LeaseTTL, cfg.RenewInterval = 5*time.Second, 1250*time.Millisecond
	a, err := NewNode(cfg, rec.hooks("a", func() int64 { return 0 }, nil))
	if err != nil {
		t.Fatal(err)
	}
	runCtx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ran := runNode(runCtx, a)
	natstest.WaitFor(t, 10*time.Second, a.IsLeader, "a never led")
	bcfg := cfg
	bcfg.NodeID = "b"
	b := startNode(t, bcfg, rec, nil)
	natstest.WaitFor(t, 2*time.Second, func() bool { return b.Leader() == "a" }, "b did not see a")

	cancel()
	stopped := time.Now()
	if err := runResult(t, ran, a.runStopTimeout()+5*time.Second); err != nil {
		t.Fatalf("Run after its ctx ended = %v, want nil", err)
	}
	select {
	case <-a.Done():
	default:
		t.Fatal("Done is open after Run returned")
	}
	// A released lease is taken at once; an expired one after LeaseTTL.
	natstest.WaitFor(t, cfg.LeaseTTL/2, b.IsLeader, "b did not take over within LeaseTTL/2: a did not release")
	if took := time.Since(stopped); took >= cfg.LeaseTTL {
		t.Errorf("b took over %v after a's ctx ended, not before LeaseTTL %v", took, cfg.LeaseTTL)
	}
	if err := a.Start(ctx(t)); !errors.Is(err, ErrStopped) || !errors.Is(err, ErrAlreadyStarted) {
		t.Errorf("Start after Run = %v, want ErrStopped and ErrAlreadyStarted", err)
	}
	rec.check(t)
}

// Run returns nil when another goroutine stops the node, and the node's
// error when it stopped on its own (its shared connection closed).
func TestRunReturnsHowTheNodeStopped(t *testing.T) {
	t.Parallel()
	srv, rec, id := setup(t)

	a, err := NewNode(testConfig(id, "a", srv.URL()), rec.hooks("a", func() int64 { return 0 }, nil))
	if err != nil {
		t.Fatal(err)
	}
	ran := runNode(context.Background(), a)
	natstest.WaitFor(t, 10*time.Second, a.IsLeader, "a never led")
	stopNode(t, a)
	if err := runResult(t, ran, 5*time.Second); err != nil {
		t.Errorf("Run of a node stopped by Stop = %v, want nil", err)
	}

	nc, err := nats.Connect(srv.URL())
	if err != nil {
		t.Fatal(err)
	}
	cfg := testConfig(id, "b")
	cfg.Conn = nc
	b, err := NewNode(cfg, rec.hooks("b", func() int64 { return 0 }, nil))
	if err != nil {
		t.Fatal(err)
	}
	ran = runNode(context.Background(), b)
	natstest.WaitFor(t, 10*time.Second, b.IsLeader, "b never led")
	nc.Close() // the application closes the connection it shared
	err = runResult(t, ran, 10*time.Second)
	if err == nil || b.Err() == nil || !errors.Is(err, b.Err()) {
		t.Errorf("Run of a node whose connection closed = %v, want its Err %v", err, b.Err())
	}
	rec.check(t)
}

// Run returns Start's error when the start fails, and nil when its ctx
// ends during the start.
func TestRunStartErrors(t *testing.T) {
	t.Parallel()
	natstest.CheckLeaks(t)
	n, err := NewNode(Config{ClusterID: "x", NodeID: "a", NATSURLs: []string{"nats://127.0.0.1:1"}, Logger: testLogger()}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := runResult(t, runNode(ctx(t), n), 10*time.Second); !errors.Is(err, ErrConnect) {
		t.Errorf("Run against a closed port = %v, want ErrConnect", err)
	}
	if err := n.Run(ctx(t)); !errors.Is(err, ErrAlreadyStarted) || !errors.Is(err, ErrStopped) || !errors.Is(err, ErrConnect) {
		t.Errorf("Run of a node whose Start failed = %v, want ErrStopped, ErrAlreadyStarted and why", err)
	}

	srv := natstest.RunServer(t)
	m, err := NewNode(testConfig(uniqueClusterID(t), "a", srv.URL()), nil)
	if err != nil {
		t.Fatal(err)
	}
	ended, cancel := context.WithCancel(context.Background())
	cancel()
	if err := m.Run(ended); err != nil {
		t.Errorf("Run with a ctx ended before the start = %v, want nil", err)
	}
	select {
	case <-m.Done():
	default:
		t.Error("Done is open after Run returned")
	}
}

// Start after Stop says the node stopped, and a Node starts once.
func TestStartAfterStop(t *testing.T) {
	t.Parallel()
	srv, rec, id := setup(t)
	a := startNode(t, testConfig(id, "a", srv.URL()), rec, nil)
	if err := a.Start(ctx(t)); !errors.Is(err, ErrAlreadyStarted) || errors.Is(err, ErrStopped) {
		t.Errorf("second Start of a running node = %v, want ErrAlreadyStarted only", err)
	}
	stopNode(t, a)
	err := a.Start(ctx(t))
	if !errors.Is(err, ErrStopped) || !errors.Is(err, ErrAlreadyStarted) {
		t.Errorf("Start after Stop = %v, want ErrStopped and ErrAlreadyStarted", err)
	}
	if a.IsLeader() || a.Conn() == nil || !a.Conn().IsClosed() {
		t.Error("Start after Stop brought the node back")
	}
	rec.check(t)
}
