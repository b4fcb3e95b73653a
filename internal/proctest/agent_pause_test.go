package proctest

import (
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/ozanturksever/go-cluster/internal/natstest"
)

// TestAgentResumedFromAPauseWaitsItsPreemptDelay (issue 41, item 5): the
// leading agent a (priority 100) is paused (SIGSTOP, no watchdog) past
// its lease, b (50) takes over, and a is resumed (SIGCONT). a must wait
// its preempt_delay before it takes leadership back, like a node coming
// back from a restart: its connection and readiness from before the
// pause say nothing of the time it was stopped. The election sees the
// pause as a look far later than it planned (docs/design.md §4.6, P13).
func TestAgentResumedFromAPauseWaitsItsPreemptDelay(t *testing.T) {
	t.Parallel()
	const ttl, delay = 2 * time.Second, 4 * time.Second
	dir, a, _ := startPreemptPair(t, ttl, delay, true)
	// a has been ready and connected far longer than its preempt_delay
	// before the pause: what a resumed node must not count.
	time.Sleep(delay)

	a.signal(syscall.SIGSTOP)
	t.Cleanup(func() { a.signal(syscall.SIGCONT) }) // killable at cleanup
	natstest.WaitFor(t, 5*ttl, func() bool { return lastLeader(t, dir) == "b" }, "b did not take over from the paused a")
	// Read before the signal: a cannot run before it is sent, while a
	// reading after it may come late on a busy machine (the check failed
	// once with 'a took leadership back 3.989s after it was resumed').
	resumed := time.Now()
	a.signal(syscall.SIGCONT)

	natstest.WaitFor(t, delay+4*ttl, func() bool { return lastLeader(t, dir) == "a" }, "a (priority 100) did not take leadership back from b (50) after its pause")
	back := readStamped(t, filepath.Join(dir, "leaders.log"))
	took := back[len(back)-1].at.Sub(resumed)
	if took < delay {
		t.Fatalf("a took leadership back %v after it was resumed: before its preempt_delay (%v)", took.Round(time.Millisecond), delay)
	}
	if !a.logged("did not run for a while") {
		t.Error("a did not log that it saw its pause")
	}
	t.Logf("a took leadership back %v after it was resumed (preempt_delay %v, lease_ttl %v)", took.Round(time.Millisecond), delay, ttl)
}
