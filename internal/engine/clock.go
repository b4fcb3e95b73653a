package engine

import (
	"sync/atomic"
	"time"
)

// clock is the time a node decides by (docs/design.md §3.1): the
// monotonic clock's reading when the view was made, moved on by the time
// since as CLOCK_BOOTTIME counts it, which, unlike the monotonic clock,
// goes on while the system is suspended. A leader whose host was
// suspended past its deadline leads no more on resume: IsLeader, fenced
// writes and ValidateLeadership read this clock. Timers run on the
// monotonic clock, stopped while suspended, so the tenure's own end (its
// hook) comes at the loop's next look, at most a renewal period after the
// resume; followers' waits count the suspension, which is real time their
// holders' deadlines count too.
type clock struct {
	origin    time.Time
	boot0     time.Duration
	suspended *atomic.Int64 // ns added, as by a suspension (Config.Suspended: tests)
}

// newClock reads the boot clock first: its now is then never behind the
// monotonic clock's, and a deadline on it comes no later (safe).
func newClock() *clock {
	boot0 := bootTime()
	return &clock{origin: time.Now(), boot0: boot0, suspended: new(atomic.Int64)}
}

func (c *clock) now() time.Time {
	return c.origin.Add(bootTime() - c.boot0 + time.Duration(c.suspended.Load()))
}

// processStart is when the package was loaded: the origin of bootTime
// where there is no CLOCK_BOOTTIME. Set once, never changed.
var processStart = time.Now()
