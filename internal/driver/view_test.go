package driver

import (
	"context"
	"testing"
	"time"
)

// Leading and the fenced writes' Fence refuse a tenure past its deadline
// even while its ctx is live: the loop, or the deadline timer, may not
// have ended it yet (design §3.3; issue 25: removing the check in the
// view passed every test). The view alone, no timing.
func TestViewRefusesATenurePastItsDeadline(t *testing.T) {
	v := NewView("a", nil, nil)
	now := time.Now()
	v.begin(context.Background(), 7, 3, now.Add(time.Millisecond))
	if !v.Leading(now) {
		t.Fatal("a live tenure before its deadline is not leading")
	}
	if _, _, ok := v.Fence(now); !ok {
		t.Fatal("a live tenure before its deadline gives no tenure for a fenced write")
	}
	if _, ok := v.Tenure(now); !ok {
		t.Fatal("a live tenure before its deadline is no Tenure")
	}
	at := now.Add(time.Millisecond) // the deadline itself: over
	if v.Leading(at) {
		t.Error("a tenure at its deadline still leads though its ctx is live")
	}
	if _, _, ok := v.Fence(at); ok {
		t.Error("a fenced write would be checked on a tenure past its deadline")
	}
	if _, ok := v.Tenure(at); ok {
		t.Error("Tenure gives a tenure past its deadline")
	}
}
