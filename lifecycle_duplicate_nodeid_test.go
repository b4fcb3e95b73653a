package cluster

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/ozanturksever/go-cluster/internal/natstest"
	"github.com/ozanturksever/go-cluster/internal/wire"
)

// A second process started with the NodeID of a running one is refused
// at Start with ErrDuplicateNodeID: the first answers on the node's status
// subject with another instance. Here the first only follows (another node
// leads), so the lease could not tell. On main Start returned nil and
// nothing was logged (issue 26).
func TestDuplicateNodeIDIsRefusedAtStart(t *testing.T) {
	t.Parallel()
	srv, rec, id := setup(t)
	leader := startNode(t, testConfig(id, "lead", srv.URL()), rec, nil)
	natstest.WaitFor(t, 10*time.Second, leader.IsLeader, "no leader")
	first := startNode(t, testConfig(id, "same", srv.URL()), rec, nil)
	natstest.WaitFor(t, 5*time.Second, func() bool { return first.Leader() == "lead" }, "the first process did not follow")

	second, err := NewNode(testConfig(id, "same", srv.URL()), nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := second.Start(ctx(t)); !errors.Is(err, ErrDuplicateNodeID) {
		_ = second.Stop(ctx(t))
		t.Fatalf("Start of a second process with NodeID same = %v, want ErrDuplicateNodeID", err)
	}
	if first.Err() != nil || leader.Err() != nil {
		t.Errorf("a running node stopped: %v, %v", first.Err(), leader.Err())
	}
	rec.check(t)
}

// Two processes with the same NodeID started together, before either
// answers status requests: the one that follows sees the other renew the
// lease under its own name and stops with ErrDuplicateNodeID (rule 48);
// one of them runs on. A record of the other's at this node's epoch never
// passes for its own late write (§5.5).
func TestDuplicateNodeIDStartedTogether(t *testing.T) {
	t.Parallel()
	srv, rec, id := setup(t)
	var nodes [2]*Node
	errs := make(chan error, 2)
	for i := range nodes {
		n, err := NewNode(testConfig(id, "same", srv.URL()), rec.hooks("same", func() int64 { return 0 }, nil))
		if err != nil {
			t.Fatal(err)
		}
		nodes[i] = n
		t.Cleanup(func() { _ = n.Stop(context.Background()) })
	}
	for _, n := range nodes {
		go func() { errs <- n.Start(ctx(t)) }()
	}
	for range nodes {
		if err := <-errs; err != nil && !errors.Is(err, ErrDuplicateNodeID) {
			t.Fatal(err)
		}
	}
	// A process is refused when its Start said so or it stopped on it
	// later; either way its Err is ErrDuplicateNodeID.
	natstest.WaitFor(t, 15*time.Second, func() bool {
		refused, running := 0, 0
		for _, n := range nodes {
			select {
			case <-n.Done():
				if errors.Is(n.Err(), ErrDuplicateNodeID) {
					refused++
				}
			default:
				running++
			}
		}
		return refused == 1 && running == 1
	}, "not exactly one of two processes with one NodeID was refused")
	rec.check(t)
}

// E14 on the watch, with a real server: the records a predecessor with
// this NodeID wrote before Start, and one late write of its after, leave
// the node running; two revisions of another process's records after
// that stop it with ErrDuplicateNodeID. (Both processes of
// TestDuplicateNodeIDStartedTogether usually meet at Start, on the status
// subject, so the watch's count is tested here.)
func TestDuplicateNodeIDSeenOnTheWatch(t *testing.T) {
	t.Parallel()
	srv, rec, id := setup(t)
	kv := openKV(t, srv.URL(), id)
	epoch := firstEpoch(t, srv.URL(), id)
	put := func(nodeID, instance string) {
		t.Helper()
		now := time.Now()
		v := wire.Lease{NodeID: nodeID, Instance: instance, Epoch: epoch, TTLMillis: testTTL.Milliseconds(), AcquiredAt: now, ExpiresAt: now.Add(testTTL)}.Encode()
		if _, err := kv.Put(ctx(t), wire.LeaseKey, v); err != nil {
			t.Fatal(err)
		}
	}
	for range 3 {
		put("a", "a-old") // the predecessor's renewals: its history
	}
	cfg := testConfig(id, "a", srv.URL())
	n := startNode(t, cfg, rec, nil)
	put("a", "a-old") // its one late write
	put("b", "b-i")
	// The watch delivers in order: seeing b's record, the node took the
	// late write before it.
	natstest.WaitFor(t, 5*time.Second, func() bool { return n.Leader() == "b" }, "the node did not see b's record")
	select {
	case <-n.Done():
		t.Fatalf("the node stopped on its predecessor's records: %v", n.Err())
	default:
	}
	put("a", "a-other")
	put("a", "a-other")
	natstest.WaitFor(t, 5*time.Second, func() bool {
		select {
		case <-n.Done():
			return true
		default:
			return false
		}
	}, "two records of another process naming a did not stop the node")
	if !errors.Is(n.Err(), ErrDuplicateNodeID) {
		t.Fatalf("Err() = %v, want ErrDuplicateNodeID", n.Err())
	}
}
