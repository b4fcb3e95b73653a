package cluster

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/ozanturksever/go-cluster/internal/natstest"
)

// TestE8StopAnotherNodeFromHook: a hook of one node that stops another
// does not wait for the other's hooks (E8): waiting inside a hook could
// wait for a hook that waits for this one. The stop is begun at once and
// the other node stops.
func TestE8StopAnotherNodeFromHook(t *testing.T) {
	t.Parallel()
	srv, rec, id := setup(t)
	b := startNode(t, stableConfig(id, "b", srv.URL()), rec, nil)
	waitOneLeader(t, []*Node{b}, 15*time.Second)

	var once sync.Once
	calling := make(chan *lifeCall, 1)
	a := startNode(t, stableConfig(id, "a", srv.URL()), rec, HookFuncs{LeaderChange: func(_ context.Context, leader string) error {
		if leader == "b" {
			once.Do(func() { lifeCallHere(calling, func() error { return b.Stop(context.Background()) }) })
		}
		return nil
	}})
	var call *lifeCall
	select {
	case call = <-calling:
	case <-time.After(5 * time.Second):
		t.Fatal("a's OnLeaderChange(b) never ran")
	}
	if !call.within(2 * time.Second) {
		t.Fatal("b.Stop called from a's OnLeaderChange has not returned after 2s")
	}
	if !errors.Is(call.err, ErrCalledFromHook) {
		t.Errorf("b.Stop from a's OnLeaderChange = %v after %v, want an error wrapping ErrCalledFromHook", call.err, call.took())
	}
	select {
	case <-b.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("b did not stop")
	}
	natstest.WaitFor(t, 5*time.Second, a.IsLeader, "a did not lead after b stopped")
	rec.check(t)
}
