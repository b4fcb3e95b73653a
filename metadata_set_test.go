package cluster

import (
	"errors"
	"testing"
	"time"

	"github.com/ozanturksever/go-cluster/internal/natstest"
)

// SetMetadata on the leader publishes the new metadata with a renewal, at
// the same epoch: followers see it in their Lease without an election. A
// follower's takes effect when it leads.
func TestSetMetadataWithoutElection(t *testing.T) {
	t.Parallel()
	srv, rec, id := setup(t)
	nodes := startNodes(t, srv, rec, id, "a", "b")
	leader := waitOneLeader(t, nodes, 10*time.Second)
	follower := without(nodes, leader)[0]
	epoch := leader.Epoch()

	if err := leader.SetMetadata(ctx(t), map[string]string{"addr": "10.0.0.1:8080"}); err != nil {
		t.Fatal(err)
	}
	natstest.WaitFor(t, 5*time.Second, func() bool {
		info, ok := follower.Lease()
		return ok && info.Metadata["addr"] == "10.0.0.1:8080"
	}, "the follower did not see the leader's new metadata")
	if info, _ := follower.Lease(); info.NodeID != leader.Config().NodeID || info.Epoch != epoch {
		t.Errorf("follower sees %s at epoch %d, want %s at %d: SetMetadata must not elect", info.NodeID, info.Epoch, leader.Config().NodeID, epoch)
	}
	natstest.WaitFor(t, 5*time.Second, func() bool {
		info, ok := leader.Lease()
		return ok && info.Metadata["addr"] == "10.0.0.1:8080"
	}, "the leader's own Lease did not show its new metadata")

	if err := follower.SetMetadata(ctx(t), map[string]string{"addr": "10.0.0.2:8080"}); err != nil {
		t.Fatal(err)
	}
	if err := leader.StepDown(ctx(t)); err != nil {
		t.Fatal(err)
	}
	natstest.WaitFor(t, 5*time.Second, func() bool {
		info, ok := leader.Lease()
		return ok && info.NodeID == follower.Config().NodeID && info.Metadata["addr"] == "10.0.0.2:8080"
	}, "the new leader did not publish the metadata it was given as a follower")

	if err := follower.SetMetadata(ctx(t), map[string]string{"bad key": "x"}); !errors.Is(err, ErrInvalidConfig) {
		t.Errorf("SetMetadata with a bad key = %v, want ErrInvalidConfig", err)
	}
	rec.check(t)
}

func TestSetMetadataBeforeStart(t *testing.T) {
	t.Parallel()
	n, err := NewNode(testConfig("c", "a", "nats://127.0.0.1:1"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := n.SetMetadata(ctx(t), map[string]string{"k": "v"}); !errors.Is(err, ErrNotStarted) {
		t.Errorf("SetMetadata before Start = %v, want ErrNotStarted", err)
	}
}
