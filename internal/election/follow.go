package election

// The follower: how long a value is waited out (P3-P6), when this node
// may campaign (P12-P14), and the takeover it then writes (P2).

import (
	"log/slog"
	"time"
)

// ceiling is the longest TTL a holder of this incarnation may be using
// (I2): the bucket's lease_ttl_max, its lease_ttl, and every TTL seen in
// a record; this node's own when the bucket says nothing.
func (m *Machine) ceiling() time.Duration {
	if m.p.Knobs.OwnTTL {
		return m.p.LeaseTTL
	}
	c := max(m.inc.MaxTTL, m.inc.LeaseTTL, m.ttlSeen)
	if c == 0 {
		c = m.p.LeaseTTL
	}
	return c
}

// holdFor is how long the value seen is waited out from first sight:
// a held record for its own TTL, a released one not at all, an unknown
// value or an absent key for the ceiling (less the bucket's age where
// nothing was ever written, P6).
func (m *Machine) holdFor() time.Duration {
	c := m.cur
	switch c.kind {
	case Released:
		return 0
	case Held:
		if ttl := ttlOf(c.d.lease); ttl > 0 {
			return ttl
		}
	case Absent:
		if c.lastSeq == 0 {
			return max(c.ceiling-c.age, 0)
		}
	}
	return c.ceiling
}

// follow waits out the value seen and campaigns when it may; it returns
// when to look again.
func (m *Machine) follow(now time.Time) time.Time {
	m.reportLeader(now)
	if a := m.landing; a != nil { // an unanswered acquisition showed up on the watch
		m.landing = nil
		m.confirmLanding(now, a)
		return time.Time{}
	}
	c := m.cur
	expiry := c.first.Add(m.holdFor())
	checkAt := m.checkAt()
	if !m.viewChecked || (!checkAt.IsZero() && !now.Before(checkAt)) {
		return m.send(now, Confirm{Timeout: m.p.RequestTimeout}, request{why: toWait})
	}
	var next time.Time // the next wake that is not yet due
	if now.Before(expiry) {
		next = earliest(expiry, checkAt, m.askToLead(now)) // the known leader changes at expiry, if nothing else
	}
	gate := m.campaignGate(now)
	switch {
	case m.p.Observer || !m.conn.connected:
		return next
	case m.lost.waiting:
		if now.Before(m.lost.resync) {
			return earliest(next, m.lost.resync)
		}
		return m.send(now, Watch{Timeout: m.p.RequestTimeout}, request{})
	case now.Before(expiry):
		return next
	case !gate.IsZero():
		return gate
	}
	m.takeOver(now)
	return time.Time{}
}

// waitsTheCeiling says the value seen is waited out for the ceiling
// (P4): an unknown value, an absent key, or a held record that does not
// say its TTL.
func (c seen) waitsTheCeiling() bool {
	return c.kind == Unknown || c.kind == Absent || (c.kind == Held && c.d.lease.TTLMillis == 0)
}

// checkAt is when the value seen is confirmed (zero: it has been, or
// needs not be). An unknown value or an absent key is confirmed at first
// sight: that Confirm gives its ceiling (P4). A held record still
// unchanged half way through its wait is confirmed too, only to save
// time (P15): a watch that moved to a bucket created again without a
// word shows that bucket's records judged by the old one's base, and
// would cost a whole wait and a failed landing to find out.
func (m *Machine) checkAt() time.Time {
	c := m.cur
	switch {
	case c.confirmed:
	case c.waitsTheCeiling():
		return c.first
	case c.kind == Held:
		return c.first.Add(m.holdFor() / 2)
	}
	return time.Time{}
}

// campaignGate is when this node may campaign as far as readiness,
// cooldown, a named successor and backoff go; zero: now.
func (m *Machine) campaignGate(now time.Time) time.Time {
	c := m.cur
	named := c.kind == Released && c.d.lease.Next != ""
	var at time.Time
	switch {
	case !m.ready:
		return now.Add(m.p.RenewInterval) // a Readiness event wakes it sooner
	case named && c.d.lease.Next != m.p.NodeID && now.Before(c.first.Add(m.p.RenewInterval)):
		at = c.first.Add(m.p.RenewInterval) // the named node's window (P12)
	case !(named && c.d.lease.Next == m.p.NodeID) && now.Before(m.cooldown):
		at = m.cooldown
	}
	if now.Before(m.retryAt) {
		at = m.retryAt // the wake after it looks again
	}
	return at
}

// takeOver writes the acquisition over the value seen (P2).
func (m *Machine) takeOver(now time.Time) {
	c := m.cur
	epoch, err := nextEpoch(c.kind, c.d.lease.Epoch, c.rev, c.lastSeq, m.inc.base())
	if err != nil {
		m.fail(err)
		return
	}
	ttl := m.p.LeaseTTL // the tenure keeps the bucket's TTL (I2), this node's when it says nothing
	if m.inc.LeaseTTL > 0 && !m.p.Knobs.OwnTTL {
		ttl = m.inc.LeaseTTL
	}
	a := &attempt{epoch: epoch, ttl: ttl, sent: now, cause: CauseExpired, seen: c.first}
	a.value = m.held(epoch, a.ttl, now, now)
	w := Write{Purpose: Acquire, Rev: c.rev, Value: a.value, Timeout: m.p.RequestTimeout}
	switch c.kind {
	case Absent:
		a.cause, a.seen = CauseCreated, time.Time{}
		w.Create, w.LastSeq, w.Rev = true, c.lastSeq, 0
	case Released:
		a.cause = CauseReleased
	}
	m.logf(slog.LevelDebug, "campaigning", "over", c.kind.String(), "revision", c.rev, "epoch", epoch)
	m.send(now, w, request{a: a})
}

// askToLead asks a holder of lower priority to hand over (P13), once
// this node has been connected, synced and ready for the preempt delay,
// and at most once a LeaseTTL; it returns when to ask next.
func (m *Machine) askToLead(now time.Time) time.Time {
	h := m.cur.d.lease
	if m.cur.kind != Held || m.p.Observer || m.p.Priority <= h.Priority || h.NodeID == m.p.NodeID || !m.ready || m.conn.stableSince.IsZero() {
		return time.Time{}
	}
	at := m.conn.stableSince.Add(max(m.p.LeaseTTL, m.p.PreemptDelay))
	if again := m.conn.askedAt.Add(m.p.LeaseTTL); !m.conn.askedAt.IsZero() && again.After(at) {
		at = again
	}
	if now.Before(at) {
		return at
	}
	m.conn.askedAt = now
	m.emit(AskToLead{Holder: h.NodeID, Priority: m.p.Priority})
	return now.Add(m.p.LeaseTTL)
}
