package cluster

import (
	"context"
	"testing"
	"time"

	"github.com/ozanturksever/go-cluster/internal/natstest"
)

// TestTenureDeadline: while leading, Tenure's deadline is at most
// LeaseTTL - SafetyMargin ahead and renewals keep moving it; not leading,
// there is no tenure.
func TestTenureDeadline(t *testing.T) {
	t.Parallel()
	srv, rec, id := setup(t)
	n := startNodes(t, srv, rec, id, "n1")[0]
	if _, ok := n.Tenure(); ok && !n.IsLeader() {
		t.Fatal("a deadline before leading")
	}
	waitOneLeader(t, []*Node{n}, 10*time.Second)
	cfg := n.Config()
	tenure, ok := n.Tenure()
	first := tenure.Deadline
	if !ok {
		t.Fatal("no deadline while leading")
	}
	if left := time.Until(first); left <= 0 || left > cfg.LeaseTTL-cfg.SafetyMargin {
		t.Fatalf("deadline %v ahead, want within (0, %v]", left, cfg.LeaseTTL-cfg.SafetyMargin)
	}
	natstest.WaitFor(t, 5*cfg.RenewInterval, func() bool {
		t, ok := n.Tenure()
		return ok && t.Deadline.After(first)
	}, "renewals did not move the deadline")
	if err := n.StepDown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, ok := n.Tenure(); ok {
		t.Fatal("a deadline after StepDown")
	}
}
