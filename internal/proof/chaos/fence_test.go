package chaos

import (
	"testing"
	"time"
)

var t0 = time.Now()

func at(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }

func TestFenceAcceptsOnlyEpochsAtLeastTheHighest(t *testing.T) {
	f := NewFence()
	for _, w := range []struct {
		tenure string
		epoch  int64
		ok     bool
	}{
		{"a", 1, true}, {"a", 1, true}, {"b", 2, true}, {"a", 1, false}, {"b", 2, true}, {"c", 7, true}, {"b", 2, false},
	} {
		if ok, _, _ := f.Write(w.tenure, at(0), w.epoch); ok != w.ok {
			t.Errorf("Write(%s, %d) = %v, want %v", w.tenure, w.epoch, ok, w.ok)
		}
	}
	if s := f.Stats(); s.Accepted != 5 || s.Refused != 2 || s.Highest != 7 {
		t.Errorf("stats %+v", s)
	}
	if v := f.Violations(); len(v) != 0 {
		t.Errorf("violations: %q", v)
	}
}

func TestFenceCatchesAnEpochUsedTwice(t *testing.T) {
	f := NewFence()
	f.Write("a#1", at(0), 3)
	f.Write("b#1", at(10), 3)
	wantViolation(t, f.Violations(), "used by two tenures")
}

func TestFenceReplaysZombiesAsStaleWrites(t *testing.T) {
	f := NewFence()
	f.Write("a#1", at(0), 3)
	f.Zombie("a#1", at(100), 3)
	f.Write("b#1", at(50), 4) // started before a ended: not a successor, no replay
	if s := f.Stats(); s.StaleWrites != 0 {
		t.Fatalf("replayed for a tenure that is not a successor: %+v", s)
	}
	f.Write("c#1", at(200), 5)
	if s := f.Stats(); s.StaleWrites != 1 || s.Refused != 1 {
		t.Errorf("stale write not replayed and refused: %+v", s)
	}
	if v := f.Violations(); len(v) != 0 {
		t.Errorf("violations: %q", v)
	}
}

func TestFenceCatchesAStaleWriteAccepted(t *testing.T) {
	// The successor got a lower epoch than its predecessor (epochs went
	// back): its writes are refused and the stale leader's are accepted.
	f := NewFence()
	f.Write("a#1", at(0), 3)
	f.Zombie("a#1", at(100), 3)
	f.Write("b#1", at(200), 2)
	wantViolation(t, f.Violations(), "stale write of a#1 with epoch 3 accepted")
}
