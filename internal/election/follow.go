package election

// The machine's follower side: expiry on this node's clock and when to
// campaign (§3.2, §4.1, §4.5, §4.6, §5.3, §5.6).

import (
	"log/slog"
	"time"
)

// takeoverWait is W (§3.2, §5.6): this node's LeaseTTL, or the longest TTL
// any record on the key has carried, whichever is longer.
func (m *Machine) takeoverWait() time.Duration {
	if m.knobs.ShortTTLForNonRecords {
		return max(m.cfg.LeaseTTL, m.lv.cur.lease.ttl())
	}
	return max(m.cfg.LeaseTTL, m.lv.maxTTL)
}

// holdUntil is when the lease as seen may be taken over; zero when now.
func (m *Machine) holdUntil() time.Time {
	c := m.lv.cur
	switch {
	case c.released() && c.handedBack, c.expired:
		return time.Time{}
	case !c.present && m.lv.observations == 0 && m.lv.revFloor == 0 && !m.lv.followedNew: // rule 28
		return c.firstSeen.Add(max(m.takeoverWait()-m.bucket.AgeAtOpen, 0))
	case !c.present:
		return c.firstSeen.Add(m.takeoverWait() + m.cfg.RenewInterval)
	}
	return c.firstSeen.Add(m.takeoverWait())
}

// needsFloor says the key no longer carries the epoch or TTL this node
// remembers (§5.3, rule 20).
func (m *Machine) needsFloor() bool {
	c := m.lv.cur
	switch {
	case m.lv.maxEpoch == 0:
		// No epoch to carry, but an absent key in a bucket written before
		// may be a record purged from the stream, with no marker, under a
		// holder that still leads: a floor wakes the nodes that know its
		// epoch and longer TTL, and the holder, which a silent wait would
		// not (rule 55; simulator seeds 914359 and 366271).
		return !c.present && m.lv.revFloor > 0 // rule 55
	case !c.valid:
		return true
	case m.own.blind != 0 && m.mine(c.lease) && c.lease.Epoch == m.own.blind:
		return true // its record that landed blind, not yet covered (rule 35)
	case c.lease.Epoch < m.lv.maxEpoch:
		// A held or released record below an epoch this node has seen
		// led is forged, or the epoch went back: correct it (rule 43).
		return true
	case c.lease.Floor:
		return c.lease.ttl() < m.takeoverWait() // a lower epoch is the case above
	}
	return false
}

// probeDue says the lease as seen has stayed unchanged for half its
// holder's TTL (a floor or a release nobody handed back: half of
// MinLeaseTTL, rule 26); then it is read back every min(RenewInterval, a
// quarter of that) until it expires (rule 21).
func (m *Machine) probeDue(now time.Time) (bool, time.Time) {
	c := m.lv.cur
	if !c.valid || c.expired || (c.released() && c.handedBack) {
		return false, time.Time{}
	}
	span := m.takeoverWait()
	switch {
	case c.released():
		span = MinLeaseTTL
	case c.lease.ttl() > 0:
		span = min(span, c.lease.ttl())
	}
	at := c.firstSeen.Add(span / 2)
	if m.lv.probedRev == c.rev {
		at = laterOf(at, m.lv.probedAt.Add(min(m.cfg.RenewInterval, span/4)))
	}
	return !now.Before(at), at
}

// noteReconnect restarts the expiry count after a reconnect (§3.2).
func (m *Machine) noteReconnect(now time.Time) {
	if m.conn.reconnects != m.conn.seen {
		m.conn.seen = m.conn.reconnects
		m.waitFrom(now)
		m.lv.cur.expired = false
		m.conn.stableSince = now
	}
	if m.conn.stableSince.IsZero() {
		m.conn.stableSince = now
	}
}

// stepFollowing keeps the view (floor, probe, expiry), then campaigns.
func (m *Machine) stepFollowing(now time.Time) (time.Time, bool) {
	if !m.lv.synced {
		return time.Time{}, false
	}
	m.noteReconnect(now)
	if m.campaign && m.needsFloor() && !now.Before(m.tim.retryAt) {
		m.seed(now)
		return time.Time{}, true
	}
	probeAt, asked := m.readBack(now)
	if asked {
		return time.Time{}, true
	}
	expiry := m.holdUntil()
	m.sayColdStart(now, expiry)
	if !expiry.IsZero() && !now.Before(expiry) {
		if !m.conn.connected {
			return now.Add(m.cfg.RenewInterval), false // not seeing renewals is not expiry
		}
		m.lv.cur.expired = true
		m.logf(slog.LevelInfo, "lease expired on this node's clock", "holder", m.lv.cur.lease.NodeID, "revision", m.lv.cur.rev, "present", m.lv.cur.present)
		return time.Time{}, true
	}
	if !m.campaign || m.err != nil {
		return earliest(expiry, probeAt), false
	}
	return m.stepCampaign(now, expiry, probeAt)
}

// sayColdStart logs, once, that a campaigning node waits out a new
// bucket's cold start: an operator sees a first election that takes a
// LeaseTTL, and needs to know it is the design (rule 16), not a fault.
func (m *Machine) sayColdStart(now, until time.Time) {
	c := m.lv.cur
	if !m.campaign || m.tim.coldSaid || c.present || m.lv.observations != 0 || m.lv.revFloor != 0 || m.lv.followedNew || !now.Before(until) {
		return
	}
	m.tim.coldSaid = true
	m.logf(slog.LevelInfo, "new bucket with no lease yet: waiting before the first election, in case a leader of a bucket deleted moments ago is still running (create the bucket ahead of time with go-cluster init to start at once)",
		"wait", until.Sub(now).Round(time.Millisecond), "lease_ttl", m.takeoverWait(), "bucket_age", m.bucket.AgeAtOpen.Round(time.Millisecond))
}

// readBack reads the key's history for a release seen first (rule 27), or
// reads a stalled lease back (rules 21, 26); asked says a request is out.
// Otherwise it returns when the next read-back is due.
func (m *Machine) readBack(now time.Time) (next time.Time, asked bool) {
	if c := m.lv.cur; c.released() && c.firstSight && m.conn.connected {
		m.confirmHandBack(now)
		return time.Time{}, true
	}
	probe, at := m.probeDue(now)
	switch {
	case probe && m.conn.connected:
		m.lv.probedRev, m.lv.probedAt = m.lv.cur.rev, now
		m.resync(now)
		return time.Time{}, true
	case probe:
		return now.Add(m.cfg.RenewInterval), false // cut off: look again later, do not spin
	}
	return at, false
}

// stepCampaign decides whether to write, once the view is up to date.
func (m *Machine) stepCampaign(now, expiry, probeAt time.Time) (time.Time, bool) {
	if now.Before(m.tim.retryAt) {
		return earliest(expiry, m.tim.retryAt), false
	}
	if m.ownStaleLease() {
		m.giveBackStale(now)
		return time.Time{}, true
	}
	if !expiry.IsZero() {
		return earliest(expiry, probeAt, m.askToLead(now)), false
	}
	if wait := m.campaignGate(now); !wait.IsZero() || !m.healthy() {
		return wait, false
	}
	if m.tim.waiting && m.lv.cur.rev <= m.tim.waitAbove {
		if !now.Before(m.tim.resyncAt) {
			m.resync(now)
			return time.Time{}, true
		}
		return m.tim.resyncAt, false
	}
	switch c := m.lv.cur; {
	case !c.present:
		m.takeOver(now, 0)
	case c.released() && c.handedBack && m.handBackNeedsCheck(now):
		m.checkIdentity(now, thenAcquire, c.rev) // seen a while ago, or perhaps held in a buffer: the same bucket? (rules 21, 52)
	case c.released() && c.handedBack:
		m.takeHandBack(now, c.rev)
	default: // expired
		m.takeOver(now, c.rev)
	}
	return time.Time{}, true
}

// learnedLongAgo says the revision of the lease as seen was learned more
// than RenewInterval ago: the bucket may have been created again since,
// with another record at that revision (rules 21, 39).
func (m *Machine) learnedLongAgo(now time.Time) bool {
	return now.Sub(m.lv.cur.learnedAt) > m.cfg.RenewInterval
}

// handBackNeedsCheck says a hand-back's revision may name another record
// in a bucket created since: it was learned a while ago (rule 21), or
// right after a reconnect (rule 52) or a hold of the loop (rule 57).
func (m *Machine) handBackNeedsCheck(now time.Time) bool {
	return m.learnedLongAgo(now) || m.learnedOnReconnect() || m.learnedOnResume()
}

// learnedOnResume says the revision of the lease as seen was learned
// within RenewInterval of the loop resuming from a hold: like a reconnect,
// the entry may have waited in the old watch's buffer while the bucket was
// created again (rule 57; simulator seed 130895, a node paused 1.8 s).
func (m *Machine) learnedOnResume() bool {
	return !m.conn.resumedAt.IsZero() && m.lv.cur.learnedAt.Sub(m.conn.resumedAt) < m.cfg.RenewInterval
}

// learnedOnReconnect says the revision of the lease as seen was learned
// within RenewInterval of the connection coming back: the entry may have
// waited in the old watch's buffer while the bucket was created again,
// with another record at that revision since (rule 52; simulator seed
// 197203, a node paused for 4 s).
func (m *Machine) learnedOnReconnect() bool {
	return m.conn.reconnects > 0 && m.lv.cur.learnedAt.Sub(m.conn.stableSince) < m.cfg.RenewInterval
}

// giveBackStale releases this node's stale record; first, if its
// revision was learned a while ago, it asks whether the bucket is the same
// (rule 39): in one created since, the revision may be another's record.
func (m *Machine) giveBackStale(now time.Time) {
	if m.learnedLongAgo(now) {
		m.checkIdentity(now, thenReleaseStale, m.lv.cur.rev)
		return
	}
	m.releaseStale(now)
}

// ownStaleLease says the lease names this node at the epoch of a tenure
// that has already ended here.
func (m *Machine) ownStaleLease() bool {
	c := m.lv.cur
	return m.own.lastEpoch > 0 && c.valid && m.mine(c.lease) && c.lease.Epoch == m.own.lastEpoch
}

// campaignGate returns the end of a cooldown or of a handover window left
// to another node; zero when this node may campaign now (§4.5).
func (m *Machine) campaignGate(now time.Time) time.Time {
	c := m.lv.cur
	namedNext := c.released() && c.lease.Next == m.cfg.NodeID
	if now.Before(m.hand.cooldownUntil) && !namedNext {
		return m.hand.cooldownUntil
	}
	if c.released() && c.lease.Next != "" && c.lease.Next != m.cfg.NodeID {
		if until := c.firstSeen.Add(m.cfg.RenewInterval); now.Before(until) {
			return until
		}
	}
	return time.Time{}
}

// askToLead asks a holder of lower priority to hand over (§4.6), first
// after the node has been stable max(LeaseTTL, PreemptDelay), then at most
// once per LeaseTTL, and returns when to look again (zero: never).
func (m *Machine) askToLead(now time.Time) time.Time {
	holder := m.lv.cur.lease
	if m.cfg.Priority == 0 || !m.lv.cur.valid || holder.NodeID == "" || holder.NodeID == m.cfg.NodeID ||
		m.cfg.Priority <= holder.Priority || !m.healthy() {
		return time.Time{}
	}
	ready := m.conn.stableSince.Add(max(m.cfg.LeaseTTL, m.cfg.PreemptDelay))
	if !m.conn.askedAt.IsZero() {
		ready = laterOf(ready, m.conn.askedAt.Add(m.cfg.LeaseTTL))
	}
	if now.Before(ready) {
		return ready
	}
	m.conn.askedAt = now
	m.emit(AskToLead{Holder: holder.NodeID, Request: StepDownRequest{To: m.cfg.NodeID, Reason: ReasonPriority, Priority: m.cfg.Priority}})
	return now.Add(m.cfg.LeaseTTL)
}

// laterOf returns the later of a and b.
func laterOf(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}
