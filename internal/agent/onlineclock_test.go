package agent

import (
	"testing"
	"time"
)

// TestOnlineClockStopsWhileOffline: the clock does not run while
// disconnected, nor for the grace after a reconnect; a loss within the
// grace extends the period.
func TestOnlineClockStopsWhileOffline(t *testing.T) {
	t0 := time.Unix(1000, 0)
	at := func(d time.Duration) time.Time { return t0.Add(d) }
	c := &onlineClock{grace: 500 * time.Millisecond}
	online := func(wall time.Duration) time.Duration { return c.now(at(wall)).Sub(t0) }
	if got := online(time.Second); got != time.Second {
		t.Fatalf("connected throughout: %v, want 1s", got)
	}
	c.disconnected(at(2 * time.Second))
	if got := online(7 * time.Second); got != 2*time.Second {
		t.Fatalf("5s offline: %v, want 2s", got)
	}
	c.connected(at(8 * time.Second))
	if got := online(8*time.Second + 400*time.Millisecond); got != 2*time.Second {
		t.Fatalf("within the grace: %v, want 2s", got)
	}
	if got := online(9 * time.Second); got != 2*time.Second+500*time.Millisecond {
		t.Fatalf("after the grace: %v, want 2.5s", got)
	}
	c.disconnected(at(10 * time.Second))
	c.connected(at(10*time.Second + 100*time.Millisecond))
	c.disconnected(at(10*time.Second + 200*time.Millisecond)) // within the grace
	c.connected(at(11 * time.Second))
	if got := online(12 * time.Second); got != 4*time.Second { // 2 + 1.5 (8.5 to 10) + 0.5 (11.5 to 12)
		t.Fatalf("after a loss within the grace: %v, want 4s", got)
	}
}
