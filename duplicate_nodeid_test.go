package cluster

import (
	"errors"
	"testing"
	"time"

	"github.com/ozanturksever/go-cluster/internal/natstest"
)

// Two processes given the same NodeID (a copied config): the one that
// follows sees the other renew the lease under its own name and stops
// with ErrDuplicateNodeID, saying why; the other keeps leading. On main
// both ran, Start returned nil and nothing was logged (issue 26), and a
// record of the other's at this node's epoch would have passed for its
// own late write (§5.5).
func TestDuplicateNodeIDIsRefused(t *testing.T) {
	srv, rec, id := setup(t)
	first := startNode(t, testConfig(id, "same", srv.URL()), rec, nil)
	natstest.WaitFor(t, 10*time.Second, first.IsLeader, "the first process did not lead")
	second := startNode(t, testConfig(id, "same", srv.URL()), newRecorder(), nil)
	select {
	case <-second.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("the second process with the same NodeID still runs 10s later")
	}
	if err := second.Err(); !errors.Is(err, ErrDuplicateNodeID) {
		t.Fatalf("second process stopped with %v, want ErrDuplicateNodeID", err)
	}
	if !first.IsLeader() {
		t.Error("the first process lost the lease to a process with its own NodeID")
	}
	select {
	case <-first.Done():
		t.Errorf("the first process stopped too: %v", first.Err())
	default:
	}
	rec.check(t)
}
