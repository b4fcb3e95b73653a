package cluster

import (
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/ozanturksever/go-cluster/internal/natstest"
	"github.com/ozanturksever/go-cluster/internal/store"
	"github.com/ozanturksever/go-cluster/internal/wire"
)

// TestASuspendedLeaderLeadsNoMoreOnResume: the host of a leader is
// suspended past its tenure's deadline (the view's clock, which counts a
// suspension as CLOCK_BOOTTIME does, moved on while the monotonic clock and
// the timers are not). On resume it leads no more at once: IsLeader,
// ValidateLeadership and a fenced write say so, and OnLoseLeadership runs
// at the loop's next look, within a renewal period (design §3.1, §3.3).
// On the monotonic clock alone it trusted the rest of its deadline.
func TestASuspendedLeaderLeadsNoMoreOnResume(t *testing.T) {
	t.Parallel()
	srv, rec, id := setup(t)
	cfg := testConfig(id, "a", srv.URL())
	cfg.LeaseTTL, cfg.RenewInterval = 3*time.Second, 500*time.Millisecond
	a := startNode(t, cfg, rec, nil)
	waitOneLeader(t, []*Node{a}, 10*time.Second)
	if _, err := a.ValidateLeadership(ctx(t)); err != nil {
		t.Fatalf("ValidateLeadership while leading: %v", err)
	}
	before := rec.count("a", "lose")

	a.suspended.Add(int64(2 * cfg.LeaseTTL))
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

// TestASuspensionEndsTheTenureOfAStalledLoop: the loop of a leader is
// stuck (a connection that does not drain, E5) when its host is suspended
// past the deadline; the deadline timer, which sleeps on the monotonic
// clock, looks again every recheckEvery and ends the tenure (its ctx, and
// OnLoseLeadership queued) soon after the resume.
func TestASuspensionEndsTheTenureOfAStalledLoop(t *testing.T) {
	t.Parallel()
	srv, rec, id := setup(t)
	cfg := testConfig(id, "a", srv.URL())
	cfg.LeaseTTL, cfg.RenewInterval = time.Minute, 10*time.Second
	// A bucket of a minute's TTL holding a release, taken at once: no new
	// bucket's wait (P6).
	js, err := jetstream.New(srv.Connect(t))
	if err != nil {
		t.Fatal(err)
	}
	kv, _, err := store.Create(ctx(t), js, id, store.Options{LeaseTTL: cfg.LeaseTTL})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC()
	if _, err := kv.Create(ctx(t), wire.LeaseKey, mustEncode(Lease{Version: wire.Protocol, Epoch: firstEpoch(t, srv.URL(), id), AcquiredAt: now, ExpiresAt: now})); err != nil {
		t.Fatal(err)
	}
	stall := make(chan struct{})
	var stalling atomic.Bool
	var lead *Node
	lead, err = NewNode(cfg, rec.hooks("a", func() int64 { return lead.Epoch() }, nil))
	if err != nil {
		t.Fatal(err)
	}
	lead.beforeAction = func(any) {
		if stalling.Load() {
			<-stall
		}
	}
	if err := lead.Start(ctx(t)); err != nil {
		t.Fatal(err)
	}
	defer func() { close(stall); stopNode(t, lead) }()
	natstest.WaitFor(t, 10*time.Second, lead.IsLeader, "a did not take the release")
	tenure, ok := lead.Tenure()
	if !ok {
		t.Fatal("no tenure while leading")
	}
	stalling.Store(true)
	lead.suspended.Add(int64(2 * cfg.LeaseTTL))
	natstest.WaitFor(t, 5*time.Second, func() bool { return tenure.Ctx.Err() != nil }, "the tenure's ctx lived on after the resume, the loop stuck")
}
