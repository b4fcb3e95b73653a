package cluster

// The machine's follower side: expiry on this node's clock and when to
// campaign (follow.go's rules, §3.2, §4.1, §4.5, §4.6, §5.3, §5.6).

import "time"

// takeoverWait is W (§3.2, §5.6): this node's LeaseTTL, or the longest TTL
// any record on the key has carried, whichever is longer.
func (m *machine) takeoverWait() time.Duration {
	if m.knobs.shortTTLForNonRecords {
		return max(m.cfg.LeaseTTL, m.lv.cur.lease.ttl())
	}
	return max(m.cfg.LeaseTTL, m.lv.maxTTL)
}

// holdUntil is when the lease as seen may be taken over; zero when now.
func (m *machine) holdUntil() time.Time {
	c := m.lv.cur
	switch {
	case c.released() && c.handedBack, c.expired:
		return time.Time{}
	case !c.present && m.lv.observations == 0 && m.bucket.lastSeqAtOpen == 0:
		return c.firstSeen.Add(max(m.takeoverWait()-m.bucket.ageAtOpen, 0))
	case !c.present:
		return c.firstSeen.Add(m.takeoverWait() + m.cfg.RenewInterval)
	}
	return c.firstSeen.Add(m.takeoverWait())
}

// needsFloor says the key no longer carries the epoch or TTL this node
// remembers (§5.3, rule 20).
func (m *machine) needsFloor() bool {
	c := m.lv.cur
	switch {
	case m.lv.maxEpoch == 0:
		return false
	case !c.valid:
		return true
	case c.lease.Floor:
		return c.lease.Epoch < m.lv.maxEpoch || c.lease.ttl() < m.takeoverWait()
	}
	return false
}

// probeDue says a held record has stayed unchanged for half its holder's
// TTL, and was not read back yet.
func (m *machine) probeDue(now time.Time) (bool, time.Time) {
	c := m.lv.cur
	if !c.valid || c.lease.NodeID == "" || c.expired || m.lv.probedRev == c.rev {
		return false, time.Time{}
	}
	at := c.firstSeen.Add(max(c.lease.ttl(), m.cfg.LeaseTTL) / 2)
	return !now.Before(at), at
}

// noteReconnect restarts the expiry count after a reconnect (§3.2).
func (m *machine) noteReconnect(now time.Time) {
	if m.conn.reconnects != m.conn.seen {
		m.conn.seen = m.conn.reconnects
		m.lv.cur.firstSeen = now
		m.lv.cur.expired = false
		m.conn.stableSince = now
	}
	if m.conn.stableSince.IsZero() {
		m.conn.stableSince = now
	}
}

// stepFollowing keeps the view (floor, probe, expiry), then campaigns.
func (m *machine) stepFollowing(now time.Time) (time.Time, bool) {
	if !m.lv.synced {
		return time.Time{}, false
	}
	m.noteReconnect(now)
	if m.campaign && m.needsFloor() && !now.Before(m.tim.retryAt) {
		m.seed(now)
		return time.Time{}, true
	}
	probe, probeAt := m.probeDue(now)
	switch {
	case probe && m.conn.connected:
		m.lv.probedRev = m.lv.cur.rev
		m.resync(now)
		return time.Time{}, true
	case probe:
		// Due, but cut off: the reconnect (evConn) brings the machine
		// back. (follow.go returns the past probe time here, and its loop
		// spins until reconnect or expiry.)
		probeAt = time.Time{}
	}
	expiry := m.holdUntil()
	if !expiry.IsZero() && !now.Before(expiry) {
		if !m.conn.connected {
			return now.Add(m.cfg.RenewInterval), false // not seeing renewals is not expiry
		}
		m.lv.cur.expired = true
		return time.Time{}, true
	}
	if !m.campaign || m.err != nil {
		return earliest(expiry, probeAt), false
	}
	return m.stepCampaign(now, expiry, probeAt)
}

// stepCampaign decides whether to write, once the view is up to date.
func (m *machine) stepCampaign(now, expiry, probeAt time.Time) (time.Time, bool) {
	if now.Before(m.tim.retryAt) {
		return earliest(expiry, m.tim.retryAt), false
	}
	if m.ownStaleLease() {
		m.releaseStale(now)
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
	case c.released() && c.handedBack:
		m.acquire(now, c.rev)
	default: // expired
		m.takeOver(now, c.rev)
	}
	return time.Time{}, true
}

// ownStaleLease says the lease names this node at the epoch of a tenure
// that has already ended here.
func (m *machine) ownStaleLease() bool {
	c := m.lv.cur
	return m.own.lastEpoch > 0 && c.valid && c.lease.NodeID == m.cfg.NodeID && c.lease.Epoch == m.own.lastEpoch
}

// campaignGate returns the end of a cooldown or of a handover window left
// to another node; zero when this node may campaign now (§4.5).
func (m *machine) campaignGate(now time.Time) time.Time {
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

// askToLead asks a holder of lower priority to hand over (§4.6), and
// returns when to look again (zero: never).
func (m *machine) askToLead(now time.Time) time.Time {
	holder := m.lv.cur.lease
	if m.cfg.Priority == 0 || !m.lv.cur.valid || holder.NodeID == "" || holder.NodeID == m.cfg.NodeID ||
		m.cfg.Priority <= holder.Priority || !m.healthy() {
		return time.Time{}
	}
	ready := m.conn.stableSince.Add(m.cfg.LeaseTTL)
	if !m.conn.askedAt.IsZero() {
		ready = laterOf(ready, m.conn.askedAt.Add(m.cfg.LeaseTTL))
	}
	if now.Before(ready) {
		return ready
	}
	m.conn.askedAt = now
	m.emit(actAskToLead{holder: holder.NodeID, req: StepDownRequest{To: m.cfg.NodeID, Reason: reasonPriority, Priority: m.cfg.Priority}})
	return now.Add(m.cfg.LeaseTTL)
}
