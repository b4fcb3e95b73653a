package cluster

import (
	"errors"
	"testing"
	"time"

	"github.com/ozanturksever/go-cluster/internal/natstest"
)

// TestASuspendedLeaderLeadsNoMoreOnResume: the host of a leader is
// suspended past its tenure's deadline (the view's clock, which counts a
// suspension as CLOCK_BOOTTIME does, moved on while the monotonic clock and
// the timers are not). On resume it leads no more at once: IsLeader,
// ValidateLeadership and a fenced write say so, and OnLoseLeadership runs
// at the loop's next look, within a renewal period (design §3.1, §3.3).
// On the monotonic clock alone it trusted the rest of its deadline.
func TestASuspendedLeaderLeadsNoMoreOnResume(t *testing.T) {
	srv, rec, id := setup(t)
	cfg := testConfig(id, "a", srv.URL())
	cfg.LeaseTTL, cfg.RenewInterval = 3*time.Second, 500*time.Millisecond
	a := startNode(t, cfg, rec, nil)
	waitOneLeader(t, []*Node{a}, 10*time.Second)
	if _, err := a.ValidateLeadership(ctx(t)); err != nil {
		t.Fatalf("ValidateLeadership while leading: %v", err)
	}
	before := rec.count("a", "lose")

	a.view.Suspend(2 * cfg.LeaseTTL)
	resumed := time.Now()
	if a.IsLeader() {
		t.Error("IsLeader after a suspension past the deadline; want false at once")
	}
	if _, err := a.State().Put(ctx(t), "k", []byte("v")); !errors.Is(err, ErrNotLeader) {
		t.Errorf("a fenced write after the suspension = %v; want ErrNotLeader", err)
	}
	natstest.WaitFor(t, 5*time.Second, func() bool { return rec.count("a", "lose") > before },
		"no OnLoseLeadership after the suspension")
	if d := time.Since(resumed); d > cfg.RenewInterval+time.Second {
		t.Logf("OnLoseLeadership %v after the resume (the loop's next look is at most a renewal period away)", d)
	}
	if _, err := a.ValidateLeadership(ctx(t)); err == nil {
		// it may lead again in a new tenure: then at a higher epoch
		t.Logf("ValidateLeadership after the resume: a leads again at epoch %d", a.Epoch())
	}
	rec.check(t)
}
