package election

import (
	"strings"
	"testing"
	"time"
)

// preferred is node a of priority 2 and PreemptDelay delay (the delay
// waited is at least the LeaseTTL), opened on a record of b (priority 0)
// at revision 5, or on a release when b is "".
func preferred(t *testing.T, delay time.Duration, b string) *harness {
	h := newHarness(t, params("a"))
	h.m.p.Priority, h.m.p.PreemptDelay = 2, delay
	h.open(bucket(5), put(5, record(b, base+3, "")))
	return h
}

// followB runs the machine while b, holding epoch, renews every quarter
// TTL from now: a Tick at every wake it arms, as the driver's timer
// gives, each Confirm answered at once. It returns when the machine first
// asked b to hand over (-1: not by until).
func (h *harness) followB(epoch int64, until time.Duration) time.Duration {
	h.t.Helper()
	renewal := h.now.Add(ttl / 4)
	for h.now.Sub(t0) <= until {
		if at := h.armed(); !at.IsZero() && at.Before(renewal) {
			h.now = at
			h.do(Tick{})
		} else {
			h.now, renewal = renewal, renewal.Add(ttl/4)
			h.do(Entry{KV: put(h.m.cur.rev+1, record("b", epoch, ""))})
		}
		h.answerConfirm()
		if h.has("AskToLead") {
			return h.now.Sub(t0)
		}
		if h.has("Write") {
			h.t.Fatalf("at +%v: a campaigned against b, which renews: [%s]", h.now.Sub(t0), h.kinds())
		}
	}
	return -1
}

// has says the last actions include one of kind.
func (h *harness) has(kind string) bool {
	return strings.Contains(" "+h.kinds()+" ", " "+kind+" ")
}

// answerConfirm answers a Confirm among the last actions: the bucket at
// the revision seen.
func (h *harness) answerConfirm() {
	h.t.Helper()
	if _, ok := h.req.(Confirm); ok && h.has("Confirm") {
		h.do(ConfirmResult{ID: h.reqID(), Bucket: bucket(h.m.cur.rev)})
	}
}

// P13, issue 41 item 5: a preferred node that led, was paused (SIGSTOP)
// past its deadline and found another holder on resume waits its preempt
// delay from the resume, as after a restart: its connection and readiness
// from before the pause say nothing of the time it was stopped.
func TestAPausedLeaderWaitsItsPreemptDelayAgain(t *testing.T) {
	h := preferred(t, 0, "")
	h.do(WriteResult{ID: h.write().ID, Rev: 7})
	h.become()
	// Paused from +0 to +5 s: its renewal due at +0.5 s and its deadline
	// at +1.8 s passed; b took over meanwhile.
	h.at(5 * time.Second).do(Entry{KV: put(8, record("b", base+5, ""))})
	h.want("Lose")
	h.answerConfirm()
	h.none("AskToLead")
	if at, want := h.followB(base+5, 5*time.Second+2*ttl), 5*time.Second+ttl; at != want {
		t.Fatalf("asked b to hand over at +%v, want +%v: its delay (the LeaseTTL) from the resume", at, want)
	}
}

// P13: a follower paused within its preempt delay counts the delay from
// the resume. While it may preempt it looks at least once a
// RenewInterval, so a pause of more than two is seen, though no wake it
// planned otherwise (the half-way check at +1 s) was late by much.
func TestAPausedFollowerWaitsItsPreemptDelayAgain(t *testing.T) {
	const delay, pause = 4 * time.Second, 1200 * time.Millisecond
	h := preferred(t, delay, "b")
	h.answerConfirm()
	h.at(pause).do(Entry{KV: put(6, record("b", base+3, ""))}) // b's renewal, delivered at the resume
	h.answerConfirm()
	if at := h.followB(base+3, pause+delay+ttl); at != pause+delay {
		t.Fatalf("asked b to hand over at +%v, want +%v: its delay from the resume", at, pause+delay)
	}
}

// P13's control: a node not paused, looking when it planned to, asks
// once its delay has passed since it synced, not later.
func TestANodeNotPausedAsksAfterItsDelay(t *testing.T) {
	const delay = 3 * time.Second
	h := preferred(t, delay, "b")
	h.answerConfirm()
	if at := h.followB(base+3, delay+ttl); at != delay {
		t.Fatalf("asked b to hand over at +%v, want +%v", at, delay)
	}
}
