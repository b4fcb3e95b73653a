package natstest

import (
	"testing"
	"time"
)

// pollInterval is how often WaitFor and the readiness checks poll.
const pollInterval = 5 * time.Millisecond

// WaitFor polls cond (every ~5ms) until it returns true, or fails the test
// with t.Fatalf(format, args...) once timeout has passed. cond is checked one
// last time at the deadline. Use it instead of sleeps. Like t.Fatalf, it must
// be called from the test's goroutine.
func WaitFor(t testing.TB, timeout time.Duration, cond func() bool, format string, args ...any) {
	t.Helper()
	if !poll(timeout, cond) {
		t.Fatalf(format, args...)
	}
}

// poll reports whether cond became true within timeout.
func poll(timeout time.Duration, cond func() bool) bool {
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	tick := time.NewTicker(pollInterval)
	defer tick.Stop()
	for {
		if cond() {
			return true
		}
		select {
		case <-deadline.C:
			return cond()
		case <-tick.C:
		}
	}
}
