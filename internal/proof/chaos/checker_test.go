package chaos

import (
	"context"
	"fmt"
	"math"
	"slices"
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

// Negative controls for the out-of-band faults: each feeds the checker a
// history that the bugs those faults hunt for would produce, and asserts
// that it is reported. A checker that passes these cannot pass a broken
// run by accident.

// history records tenures one after another, each ended before the next
// begins; epochs[i] is proven (or claimed, when claimed is set) in tenure i.
func history(t *testing.T, claimed bool, epochs ...int64) []string {
	t.Helper()
	c := NewChecker()
	for i, e := range epochs {
		inst := fmt.Sprintf("n%d#1", i)
		ten, end := tenure(c, inst)
		if claimed {
			c.Claimed(ten, e)
		} else {
			c.Proven(ten, e)
		}
		end()
		c.Lose(inst)
		waitEnded(t, c)
		time.Sleep(time.Millisecond) // distinct start times, not a wait for a condition
	}
	return c.Check(true)
}

func TestNegativeControlOverlapIsReported(t *testing.T) {
	// Two leaders: a long-TTL leader partitioned past a short-TTL
	// follower's takeover.
	c := NewChecker()
	a, endA := tenure(c, "long#1")
	c.Claimed(a, 7)
	b, endB := tenure(c, "short#1")
	c.Claimed(b, 8)
	endB()
	c.Lose("short#1")
	endA()
	c.Lose("long#1")
	waitEnded(t, c)
	wantViolation(t, c.Check(true), "tenures overlap: short#1 (epoch 8)")
}

func TestNegativeControlEpochRestartAfterRecreateIsReported(t *testing.T) {
	// A recreated bucket or a compacted key: revisions and epochs restart.
	got := history(t, false, 41, 42, 1, 2)
	if len(got) != 2 {
		t.Errorf("want 2 regressions (1 and 2 are not above 42), got %q", got)
	}
	wantViolation(t, got, "epoch did not increase (regression): n2#1")
	wantViolation(t, got, "not above epoch 42 of n1#1")
}

func TestNegativeControlRegressionBelowAnEarlierMaximumIsReported(t *testing.T) {
	// 8 is above its predecessor 7 but not above 9, handed out before.
	got := history(t, false, 5, 9, 7, 8)
	wantViolation(t, got, "n2#1 led")
	wantViolation(t, got, "n3#1 led")
	if len(got) != 2 {
		t.Errorf("want 2 regressions, got %q", got)
	}
}

func TestNegativeControlRepeatedEpochIsReported(t *testing.T) {
	wantViolation(t, history(t, true, 3, 3), "epoch did not increase")
}

func TestNegativeControlWrappedEpochIsReported(t *testing.T) {
	// A forged record at math.MaxInt64 taken over with epoch+1.
	got := history(t, false, 4, math.MaxInt64, math.MinInt64)
	wantViolation(t, got, "epoch wrapped: n2#1")
	// Also when the wrapped tenure is the first the checker sees, and when
	// only Node.Epoch told its epoch (it ended before proving one).
	wantViolation(t, history(t, true, math.MinInt64), "epoch wrapped: n0#1")
}

func TestNegativeControlClaimedAndProvenEpochsMustAgree(t *testing.T) {
	c := NewChecker()
	a, end := tenure(c, "a#1")
	c.Claimed(a, 5)
	c.Proven(a, 6)
	end()
	c.Lose("a#1")
	wantViolation(t, c.Check(false), "epoch changed within one tenure: 5 then 6 (ValidateLeadership)")
}

func TestCheckerAcceptsIncreasingEpochsWithGaps(t *testing.T) {
	// Epochs may skip (a node acquires above the revision after garbage);
	// they must only never go back.
	if got := history(t, false, 1, 2, 17, 18, math.MaxInt64); len(got) != 0 {
		t.Errorf("violations in an increasing history: %q", got)
	}
}

func TestParseKinds(t *testing.T) {
	got, err := ParseKinds("out-of-band, cut")
	if err != nil {
		t.Fatal(err)
	}
	want := []FaultKind{FaultGarbage, FaultBucketRecreate, FaultCompaction, FaultTTLGarbage, FaultCut}
	if !slices.Equal(got, want) {
		t.Errorf("ParseKinds = %v, want %v", got, want)
	}
	if got, err := ParseKinds(""); err != nil || len(got) != 0 {
		t.Errorf(`ParseKinds("") = %v, %v; want none (the default applies)`, got, err)
	}
	for _, bad := range []string{"forged-max", "cut,nonsense"} {
		if _, err := ParseKinds(bad); err == nil {
			t.Errorf("ParseKinds(%q) accepted", bad)
		}
	}
}
