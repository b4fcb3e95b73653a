package cluster

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/ozanturksever/go-cluster/internal/natstest"
)

// A node whose ReadinessCheck fails from the first call never campaigns:
// not alone, not beside ready nodes, not after a handover is offered. It
// reports why through Ready.
func TestNotReadyFromTheStartNeverLeads(t *testing.T) {
	t.Parallel()
	srv, rec, id := setup(t)
	failing := func(context.Context) error { return errors.New("database unreachable") }
	cfg := testConfig(id, "sick", srv.URL())
	cfg.ReadinessCheck, cfg.ReadinessInterval = failing, 50*time.Millisecond
	sick := startNode(t, cfg, rec, nil)
	natstest.WaitFor(t, 2*time.Second, func() bool { return sick.Ready() != nil && errors.Is(sick.Ready(), ErrNotReady) }, "Ready() = %v, want ErrNotReady", sick.Ready())
	// Alone: the key is free, and it still does not take it.
	holdFor(t, 2*testTTL, func() bool { return !sick.IsLeader() }, "a node that never passed its check stays out")
	if err := sick.Ready(); err == nil || err.Error() == "" || !errors.Is(err, ErrNotReady) {
		t.Fatalf("Ready() = %v", err)
	}

	// Beside a ready node: the ready one leads, and keeps leading across
	// its own step-down (the sick node is the only other candidate).
	okCfg := testConfig(id, "ok", srv.URL())
	okCfg.ReadinessCheck = func(context.Context) error { return nil }
	okCfg.Cooldown = 100 * time.Millisecond
	ok := startNode(t, okCfg, rec, nil)
	natstest.WaitFor(t, 5*time.Second, ok.IsLeader, "the ready node did not lead")
	if err := ok.Ready(); err != nil {
		t.Fatalf("ready node: Ready() = %v", err)
	}
	if err := ok.StepDown(ctx(t)); err != nil {
		t.Fatal(err)
	}
	holdFor(t, testTTL, func() bool { return !sick.IsLeader() }, "the sick node does not take a released lease")
	natstest.WaitFor(t, 5*time.Second, ok.IsLeader, "the ready node did not lead again after its cooldown")
	if rec.count("sick", "become") != 0 {
		t.Errorf("the node that never passed its readiness check led %d times", rec.count("sick", "become"))
	}
	rec.check(t)
}
