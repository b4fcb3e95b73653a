package election

// The leader: renewals, each acknowledged (P7), the deadline (P8), and the
// drain and release that end a step-down (P11).

import (
	"fmt"
	"time"

	"github.com/ozanturksever/go-cluster/internal/wire"
)

// tenure is this node holding the lease.
type tenure struct {
	epoch    int64
	version  int // of its records (P16): the cluster's, raised by the switch
	rev      uint64
	ttl      time.Duration // fixed for the tenure (I2)
	acquired time.Time     // send time of the acquiring write
	deadline time.Time     // last acknowledged write's send time + ttl - margin
	renewDue time.Time
	checkDue time.Time // the next Confirm, once a TTL, of a tenure the switch may raise (P16, §4.2)
	ended    bool      // by a decision or the deadline; Lose emitted
	renewals int       // consecutive transient failures
}

// drain is a step-down or Stop in progress (P11).
type drain struct {
	stepDown    bool
	next        string
	token       uint64 // the StepDown waiting for the release; 0: none
	hookStarted bool
	hookDone    bool
	until       time.Time // DrainTimeout after OnLoseLeadership began
	attempts    int       // release writes sent
}

// leading says the tenure lives at now.
func (m *Machine) leading(now time.Time) bool {
	return m.t != nil && !m.t.ended && now.Before(m.t.deadline)
}

// lead renews when due, and releases once a drain may; it returns when
// to look again.
func (m *Machine) lead(now time.Time) time.Time {
	t := m.t
	if d := m.drain; d != nil && (d.hookDone || (d.hookStarted && !now.Before(d.until))) {
		d.attempts++
		return m.send(now, Write{Purpose: Release, Rev: t.rev, Value: wire.ReleasedRecord(t.version, t.epoch, t.acquired, now, d.next),
			Timeout: m.p.RequestTimeout}, request{})
	}
	if m.lost.waiting { // a renewal conflict the watch has not explained (P10)
		if now.Before(m.lost.resync) {
			return m.lost.resync
		}
		return m.send(now, Watch{Timeout: m.p.RequestTimeout}, request{})
	}
	if now.Before(t.renewDue) {
		check := m.confirmAt(t)
		if !check.IsZero() && !now.Before(check) {
			t.checkDue = now.Add(t.ttl)
			return m.send(now, Confirm{Timeout: m.p.RequestTimeout}, request{why: toWait})
		}
		next := earliest(t.renewDue, check)
		if d := m.drain; d != nil && d.hookStarted {
			next = earliest(next, d.until)
		}
		return next
	}
	timeout := m.p.RequestTimeout
	if m.drain == nil {
		timeout = min(timeout, t.deadline.Sub(now)/2)
	}
	t.version = max(t.version, m.switchTo(now))
	return m.send(now, Write{Purpose: Renew, Rev: t.rev, Value: m.held(t.epoch, t.version, t.ttl, t.acquired, now),
		Timeout: max(timeout, time.Millisecond)}, request{})
}

// confirmAt is when the leader's next Confirm is due; zero: none. Once a
// TTL, and only while the tenure is below the highest version its node
// speaks and not draining: the switch needs a read of the members within
// a TTL (P16). No safety rests on a leader's Confirm (§4.2): a renewal is
// one request.
func (m *Machine) confirmAt(t *tenure) time.Time {
	if m.drain != nil || t.version >= m.p.hi() {
		return time.Time{}
	}
	return t.checkDue
}

// switchTo is the version the leader's next renewal may carry (P16): what
// every member speaks, read within a TTL; 0 when not read so recently.
func (m *Machine) switchTo(now time.Time) int {
	switch {
	case m.p.Knobs.SwitchEarly:
		return m.p.hi()
	case now.Sub(m.membersAt) > m.t.ttl:
		return 0
	}
	return min(m.p.hi(), m.inc.MembersSpeak) // the switch (P16): what every member speaks
}

// onRenewed takes the answer of a renewal sent at sent: its landing,
// acknowledged, moves the deadline (P7, P8); a conflict waits for the
// watch (P9, P10).
func (m *Machine) onRenewed(now, sent time.Time, r WriteResult) {
	t := m.t
	if t == nil {
		return
	}
	switch {
	case r.Err == nil && m.drain != nil:
		t.rev, t.renewals, t.renewDue = r.Rev, 0, now.Add(m.renewEvery(t.ttl))
	case r.Err == nil:
		t.rev, t.renewals, t.renewDue = r.Rev, 0, sent.Add(m.renewEvery(t.ttl))
		if d := m.deadlineOf(sent, t.ttl); d.After(t.deadline) && !t.ended { // ended: Stop
			t.deadline = d
			m.emit(Extend{Epoch: t.epoch, Deadline: d, Sent: sent})
		}
	case r.Class == Conflict:
		m.lost = lostRace{waiting: true, above: t.rev, resync: now.Add(m.p.RequestTimeout)}
	default:
		t.renewals++
		t.renewDue = now.Add(min(20*time.Millisecond<<min(t.renewals-1, 10), m.renewEvery(t.ttl)/2))
	}
}

// lose ends the live tenure on a decision or its deadline; never while
// draining (the drain ended it already).
func (m *Machine) lose(now time.Time, cause error) {
	m.endTenure(cause)
	m.t, m.lost = nil, lostRace{}
	m.reportLeader(now)
}

// endTenure emits Lose for the live tenure; its callers check it has not
// ended.
func (m *Machine) endTenure(cause error) {
	t := m.t
	t.ended = true
	m.emit(Lose{Epoch: t.epoch, Cause: cause})
}

// beginDrain ends the tenure for a step-down or Stop; the lease is
// renewed until OnLoseLeadership has returned, then released (P11).
func (m *Machine) beginDrain(now time.Time, stepDown bool, next string, token uint64) {
	m.drain = &drain{stepDown: stepDown, next: next, token: token}
	m.endTenure(nil)
	m.reportLeader(now)
}

// onLoseHook times the drain by its OnLoseLeadership: DrainTimeout from
// when it began, or until it returned (§4.4).
func (m *Machine) onLoseHook(now time.Time, e LoseHook) {
	switch d := m.drain; {
	case d == nil || m.t.epoch != e.Epoch:
	case e.Done:
		d.hookDone = true
	case !d.hookStarted:
		d.hookStarted, d.until = true, now.Add(m.p.DrainTimeout)
	}
}

// onReleased: up to three attempts on transient errors.
func (m *Machine) onReleased(now time.Time, r WriteResult) {
	switch {
	case r.Err == nil:
		m.finishDrain(now, nil)
	case r.Class == Transient && m.drain.attempts < 3:
		// the next lead() sends it again
	default:
		m.finishDrain(now, fmt.Errorf("%w: %w", wire.ErrReleaseFailed, r.Err))
	}
}

// finishDrain ends a drain: cooldown after a step-down that released,
// and the caller's answer.
func (m *Machine) finishDrain(now time.Time, err error) {
	d, epoch := m.drain, m.t.epoch
	// A node that stepped down read the bucket last before its tenure (§4.4).
	m.drain, m.t, m.unread = nil, nil, d.stepDown
	if d.stepDown && m.p.Cooldown > 0 { // released or not: the node stepped down (P12)
		m.cooldown = now.Add(m.p.Cooldown)
		m.emit(CooldownKey{Cooldown: m.p.Cooldown})
	}
	if d.token != 0 {
		m.emit(Reply{Token: d.token, Err: err, Epoch: epoch})
	}
	m.reportLeader(now) // the released record names nobody
}
