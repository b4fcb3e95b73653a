package cluster

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ozanturksever/go-cluster/internal/natstest"
	"github.com/ozanturksever/go-cluster/internal/wire"
)

// TenureEpoch gives a hook its own tenure's epoch even when the hook runs
// after that tenure ended and the lease moved on: Node.Epoch has changed by
// then, and a late hook that fenced with it would use another tenure's
// token.
func TestTenureEpochIsFixedForTheTenure(t *testing.T) {
	t.Parallel()
	srv, rec, id := setup(t)
	var gate atomic.Bool
	release := make(chan struct{})
	tenures := make(chan context.Context, 4)
	hooks := HookFuncs{
		LeaderChange: func(context.Context, string) error {
			if gate.Load() {
				<-release // holds the dispatcher: the next OnBecomeLeader waits behind
			}
			return nil
		},
		BecomeLeader: func(ctx context.Context) error { tenures <- ctx; return nil },
	}
	cfg := testConfig(id, "a", srv.URL())
	cfg.Cooldown = 50 * time.Millisecond
	a := startNode(t, cfg, rec, hooks)
	first := firstEpoch(t, srv.URL(), id)
	if e, ok := TenureEpoch(<-tenures); !ok || e != first {
		t.Fatalf("TenureEpoch of the first tenure = %d, %v; want %d", e, ok, first)
	}
	if _, ok := TenureEpoch(context.Background()); ok {
		t.Error("TenureEpoch found an epoch in a ctx that is no tenure")
	}
	natstest.WaitFor(t, 5*time.Second, func() bool { return rec.count("a", "leader:a") == 1 }, "OnLeaderChange(a) not called")
	gate.Store(true)
	if err := a.StepDown(ctx(t)); err != nil { // releases the first epoch; a leads again at the second after its cooldown
		t.Fatal(err)
	}
	natstest.WaitFor(t, 5*time.Second, func() bool { return a.IsLeader() && a.Epoch() == first+1 }, "a did not lead again")
	kv := openKV(t, srv.URL(), id)
	if _, err := kv.Put(ctx(t), wire.LeaseKey, []byte(fmt.Sprintf(`{"v":3,"node_id":"x","epoch":%d}`, first+2))); err != nil {
		t.Fatal(err)
	}
	natstest.WaitFor(t, 5*time.Second, func() bool { return !a.IsLeader() && a.Epoch() == first+2 }, "a did not see the forged record")
	close(release)
	late := <-tenures
	if e, _ := TenureEpoch(late); e != first+1 {
		t.Errorf("TenureEpoch in the late OnBecomeLeader = %d, want %d (Epoch() says %d)", e, first+1, a.Epoch())
	}
	if late.Err() == nil {
		t.Error("the late hook's tenure ctx is live")
	}
}

// Node.Tenure reads the tenure's ctx, epoch and deadline together: the
// ctx is the one OnBecomeLeader got, the epoch the one ValidateLeadership
// proves, and once the tenure ends it says so, with the ctx cancelled.
func TestNodeTenureIsOneConsistentRead(t *testing.T) {
	t.Parallel()
	srv, rec, id := setup(t)
	tenures := make(chan context.Context, 1)
	a := startNode(t, testConfig(id, "a", srv.URL()), rec, HookFuncs{BecomeLeader: func(ctx context.Context) error { tenures <- ctx; return nil }})
	if _, ok := a.Tenure(); ok && !a.IsLeader() {
		t.Fatal("Tenure says a leads before it does")
	}
	hookCtx := receive(t, tenures, 10*time.Second, "OnBecomeLeader")
	ten, ok := a.Tenure()
	if !ok {
		t.Fatal("Tenure says a does not lead after OnBecomeLeader")
	}
	proven, err := a.ValidateLeadership(ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	if hookEpoch, _ := TenureEpoch(hookCtx); ten.Epoch != proven || ten.Epoch != hookEpoch || ten.Ctx != hookCtx {
		t.Errorf("Tenure = epoch %d, ctx of the hook %v; want %d (ValidateLeadership), %d (TenureEpoch)", ten.Epoch, ten.Ctx == hookCtx, proven, hookEpoch)
	}
	if !ten.Deadline.After(time.Now()) {
		t.Errorf("Tenure's deadline %v has passed", ten.Deadline)
	}
	if err := a.StepDown(ctx(t)); err != nil {
		t.Fatal(err)
	}
	if _, ok := a.Tenure(); ok {
		t.Error("Tenure says a leads after StepDown")
	}
	if ten.Ctx.Err() == nil {
		t.Error("the ended tenure's ctx is live")
	}
}
