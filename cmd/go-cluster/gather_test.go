package main

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/ozanturksever/go-cluster/health"
	"github.com/ozanturksever/go-cluster/internal/natstest"
)

// startChecker runs a health checker for nodeID that reports leader.
func startChecker(t *testing.T, srv *natstest.Server, clusterID, nodeID, leader string) {
	t.Helper()
	c, err := health.NewChecker(health.Config{
		ClusterID: clusterID, NodeID: nodeID, Conn: srv.Connect(t, nats.Name(nodeID)),
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	if err != nil {
		t.Fatal(err)
	}
	c.SetLeader(leader)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Stop)
}

// A cluster-wide query returns early only once every member it knows of
// has answered; one known member that stays silent keeps it waiting.
func TestGathering(t *testing.T) {
	t.Parallel()
	natstest.CheckLeaks(t)
	srv := natstest.RunServer(t)
	nc := srv.Connect(t)
	const id = "g"
	startChecker(t, srv, id, "a", "a")
	startChecker(t, srv, id, "b", "a")
	const timeout = 30 * time.Second
	query := func(known []string, timeout time.Duration) ([]health.Response, time.Duration) {
		t.Helper()
		start := time.Now()
		rs, err := gathering{nc: nc, clusterID: id, known: known, timeout: timeout, settle: defaultSettle}.run(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		return rs, time.Since(start)
	}

	for _, known := range [][]string{nil, {"a"}, {"a", "b"}} {
		rs, took := query(known, timeout)
		if len(rs) != 2 || rs[0].NodeID != "a" || rs[1].NodeID != "b" {
			t.Errorf("known %v: replies %+v", known, rs)
		}
		if took > 10*time.Second {
			t.Errorf("known %v: took %v, want an early return", known, took)
		}
	}

	// The lease names a holder that does not answer: wait it out.
	const short = 1500 * time.Millisecond
	rs, took := query([]string{"gone"}, short)
	if len(rs) != 2 || took < short {
		t.Errorf("a silent known member: %d replies after %v, want 2 after the whole %v", len(rs), took, short)
	}
	// So does a leader a reply names.
	startChecker(t, srv, id, "c", "silent")
	rs, took = query(nil, short)
	if len(rs) != 3 || took < short {
		t.Errorf("a silent leader named by a reply: %d replies after %v, want 3 after the whole %v", len(rs), took, short)
	}

	// Nobody runs: said at once.
	start := time.Now()
	_, err := gathering{nc: nc, clusterID: "empty", timeout: timeout, settle: defaultSettle}.run(context.Background())
	if !errors.Is(err, health.ErrNoResponders) || time.Since(start) > 10*time.Second {
		t.Errorf("no member: %v after %v", err, time.Since(start))
	}
}
