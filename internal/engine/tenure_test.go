package engine

import (
	"context"
	"testing"
	"time"
)

// The view's Tenure, which every query of leadership and every fenced
// write reads, refuses a tenure past its deadline even while its ctx is
// live: the loop, or the deadline timer, may not
// have ended it yet (design §3.3; issue 25: removing the check in the
// view passed every test). The view alone, no timing.
func TestViewRefusesATenurePastItsDeadline(t *testing.T) {
	v := newNodeView("a", nil, nil)
	now := time.Now()
	v.begin(&Tenure{Ctx: context.Background(), Epoch: 7, Rev: 3, Deadline: now.Add(time.Millisecond)})
	if v.Tenure(now) == nil {
		t.Fatal("a live tenure before its deadline is no Tenure")
	}
	at := now.Add(time.Millisecond) // the deadline itself: over
	if v.Tenure(at) != nil {
		t.Error("Tenure gives a tenure at its deadline though its ctx is live")
	}
}
