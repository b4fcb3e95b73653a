package chaos

import (
	"context"
	"strings"
	"testing"
	"time"
)

// The checker must catch what it is there to catch: these feed it
// violations on purpose.

func tenure(c *Checker, inst string) (*Tenure, context.CancelFunc) {
	ctx, cancel := context.WithCancel(context.Background())
	return c.Become(inst, ctx), cancel
}

func wantViolation(t *testing.T, got []string, substr string) {
	t.Helper()
	for _, v := range got {
		if strings.Contains(v, substr) {
			return
		}
	}
	t.Errorf("no violation containing %q in %q", substr, got)
}

func TestCheckerAcceptsCleanHistory(t *testing.T) {
	c := NewChecker()
	a, endA := tenure(c, "a#1")
	c.Proven(a, 1)
	endA()
	c.Lose("a#1")
	b, endB := tenure(c, "b#1")
	c.Proven(b, 2)
	c.Proven(b, 2)
	endB()
	c.Lose("b#1")
	waitEnded(t, c)
	if v := c.Check(true); len(v) != 0 {
		t.Errorf("violations in a clean history: %q", v)
	}
}

func TestCheckerCatchesOverlap(t *testing.T) {
	c := NewChecker()
	a, endA := tenure(c, "a#1")
	c.Proven(a, 1)
	b, endB := tenure(c, "b#1") // a still live
	c.Proven(b, 2)
	endA()
	endB()
	c.Lose("a#1")
	c.Lose("b#1")
	waitEnded(t, c)
	wantViolation(t, c.Check(true), "tenures overlap")
}

func TestCheckerCatchesOverlapWithAnEarlierLongTenure(t *testing.T) {
	c := NewChecker()
	_, endA := tenure(c, "a#1") // a long tenure
	_, endB := tenure(c, "b#1")
	endB()
	time.Sleep(time.Millisecond) // distinct start times, not a wait for a condition
	_, endC := tenure(c, "c#1")
	endC()
	endA()
	waitEnded(t, c)
	if v := c.Check(false); len(v) < 2 {
		t.Errorf("want two overlaps with a's tenure, got %q", v)
	}
}

func TestCheckerCatchesEpochGoingBack(t *testing.T) {
	c := NewChecker()
	a, endA := tenure(c, "a#1")
	c.Proven(a, 5)
	endA()
	c.Lose("a#1")
	b, endB := tenure(c, "b#1")
	c.Proven(b, 5)
	endB()
	c.Lose("b#1")
	waitEnded(t, c)
	wantViolation(t, c.Check(true), "epoch did not increase")
}

func TestCheckerCatchesEpochChangeWithinTenure(t *testing.T) {
	c := NewChecker()
	a, endA := tenure(c, "a#1")
	c.Proven(a, 5)
	c.Proven(a, 6)
	endA()
	c.Lose("a#1")
	wantViolation(t, c.Check(false), "epoch changed within one tenure")
}

func TestCheckerCatchesHooksOutOfOrder(t *testing.T) {
	c := NewChecker()
	c.Lose("a#1") // lose before any become
	wantViolation(t, c.Check(false), "hooks out of order")

	c2 := NewChecker()
	_, end := tenure(c2, "b#1")
	end()
	waitEnded(t, c2)
	wantViolation(t, c2.Check(true), "without OnLoseLeadership")
}

func TestCheckerCatchesTenureLiveAtTheEnd(t *testing.T) {
	c := NewChecker()
	_, end := tenure(c, "a#1")
	defer end()
	wantViolation(t, c.Check(true), "still live")
}

func TestCheckerSkipsStillbornTenures(t *testing.T) {
	c := NewChecker()
	a, endA := tenure(c, "a#1")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	late := c.Become("b#1", ctx) // hooks stalled past the end of b's tenure
	c.Lose("b#1")
	if !late.Stillborn {
		t.Fatal("not marked stillborn")
	}
	endA()
	c.Lose("a#1")
	_ = a
	waitEnded(t, c)
	if v := c.Check(true); len(v) != 0 {
		t.Errorf("a stillborn tenure counted as overlap: %q", v)
	}
}

// waitEnded waits until every cancelled tenure has its end recorded (the
// AfterFunc runs on its own goroutine).
func waitEnded(t *testing.T, c *Checker) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		done := true
		c.mu.Lock()
		for _, ten := range c.tenures {
			if !ten.live() && ten.End.IsZero() {
				done = false
			}
		}
		c.mu.Unlock()
		if done {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("tenure ends not recorded")
		}
		time.Sleep(time.Millisecond)
	}
}
