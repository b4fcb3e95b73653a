package agent

import (
	"errors"
	"testing"
	"time"
)

// TestStartGate: a start error is said the first time, not while it
// repeats, again after repeatStartError with the count of repeats, at
// once when it changes, and at once after a start.
func TestStartGate(t *testing.T) {
	var g startGate
	t0 := time.Unix(1000, 0)
	dup, perm := errors.New("duplicate"), errors.New("permission denied")
	step := func(err error, at time.Duration, wantSay bool, wantRepeats int) {
		t.Helper()
		if say, repeats := g.failed(err, t0.Add(at)); say != wantSay || repeats != wantRepeats {
			t.Fatalf("at %v, %v: said %v with %d repeats, want %v with %d", at, err, say, repeats, wantSay, wantRepeats)
		}
	}
	step(dup, 0, true, 0)
	for i := 1; i <= 5; i++ {
		step(dup, time.Duration(i)*retryConnect, false, 0)
	}
	step(dup, repeatStartError, true, 5)
	step(dup, repeatStartError+retryConnect, false, 0)
	step(perm, repeatStartError+2*retryConnect, true, 0)
	step(perm, repeatStartError+3*retryConnect, false, 0)
	g.started()
	step(perm, repeatStartError+4*retryConnect, true, 0)
}
