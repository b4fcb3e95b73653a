package natstest

import (
	"sync/atomic"
	"testing"
	"time"
)

func TestWaitForReturnsOnceTrue(t *testing.T) {
	var n atomic.Int32
	WaitFor(t, time.Second, func() bool { return n.Add(1) >= 3 }, "never true")
	if got := n.Load(); got != 3 {
		t.Fatalf("cond called %d times, want 3", got)
	}
}

func TestWaitForFailsAfterTimeout(t *testing.T) {
	f := &fakeTB{TB: t}
	start := time.Now()
	f.run(func() {
		WaitFor(f, 50*time.Millisecond, func() bool { return false }, "gave up after %d", 50)
	})
	if d := time.Since(start); d < 50*time.Millisecond {
		t.Fatalf("gave up after %v, before the timeout", d)
	}
	if len(f.failures) != 1 || f.failures[0] != "gave up after 50" {
		t.Fatalf("failures = %q", f.failures)
	}
}
