package cluster

import (
	"context"
	"testing"
	"time"
)

// IsLeader and the fenced writes' tenure refuse a tenure past its
// deadline even while its ctx is live: the loop, or the deadline timer,
// may not have ended it yet (design §3.3; issue 25: removing the check in
// view.go passed every test). The view alone, no timing.
func TestViewRefusesATenurePastItsDeadline(t *testing.T) {
	v := newView()
	now := time.Now()
	v.tenureCtx, v.tenureEpoch, v.tenureRev = context.Background(), 7, 3
	v.deadline = now.Add(time.Millisecond)
	if !v.leading(now) {
		t.Fatal("a live tenure before its deadline is not leading")
	}
	if _, _, ok := v.tenure(now); !ok {
		t.Fatal("a live tenure before its deadline gives no tenure for a fenced write")
	}
	at := now.Add(time.Millisecond) // the deadline itself: over
	if v.leading(at) {
		t.Error("a tenure at its deadline still leads though its ctx is live")
	}
	if _, _, ok := v.tenure(at); ok {
		t.Error("a fenced write would be checked on a tenure past its deadline")
	}
}
