package election

// The key as seen (P1, P3): entries, the watch's current value, a
// reconnect, another incarnation; and the leader this node reports.

import (
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/ozanturksever/go-cluster/internal/wire"
)

// observe takes an entry the watch delivered.
func (m *Machine) observe(now time.Time, e KVEntry) {
	if m.cur.kind != None && m.cur.kind != Absent && e.Rev <= m.cur.rev {
		return // older than what is seen
	}
	d := judgeRange(e, m.inc.base(), !m.p.Knobs.NoRangeCheck)
	m.learn(e, d)
	m.judgeForTenure(now, e.Rev, d)
	if a := m.landed(d, e); a != nil {
		m.pending, m.landing = nil, a // an unanswered acquisition landed: confirm it
	}
	m.cur = seen{kind: d.kind, rev: e.Rev, d: d, first: now}
	if m.lost.waiting && e.Rev > m.lost.above {
		m.lost = lostRace{}
	}
}

// judgeForTenure is P9: a revision above the live tenure's is its own
// late write, adopted (the deadline does not move for it), or ends it.
func (m *Machine) judgeForTenure(now time.Time, rev uint64, d decoded) {
	switch t := m.t; {
	case t == nil || t.ended || rev <= t.rev:
	case m.ownLateWrite(d, t.epoch):
		t.rev = rev
	default:
		m.lose(now, fmt.Errorf("%w: revision %d is not this tenure's (%s)", ErrEpochMismatch, rev, d.kind))
	}
}

// learn notes what an entry tells beyond the value: a TTL, a record of
// another protocol version (which Start refuses; seen while running, it
// is unknown, P1).
func (m *Machine) learn(e KVEntry, d decoded) {
	switch {
	case d.kind == Unknown && d.lease.Epoch != 0 && d.lease.Version != wire.Protocol:
		m.logf(slog.LevelError, "the lease key holds a record of another protocol version: old and new nodes must not run together", "revision", e.Rev, "version", max(d.lease.Version, 1))
	case d.kind == Unknown:
		m.logf(slog.LevelWarn, "the lease key holds no record of this protocol: waited out for the longest TTL", "revision", e.Rev, "why", d.why)
	case d.kind == Held:
		m.ttlSeen = max(m.ttlSeen, ttlOf(d.lease))
	}
}

// ownLateWrite says a judged entry is this process's own held record at
// epoch: a write whose answer it did not get.
func (m *Machine) ownLateWrite(d decoded, epoch int64) bool {
	return d.kind == Held && d.lease.NodeID == m.p.NodeID && d.lease.Instance == m.p.Instance && d.lease.Epoch == epoch
}

// onSynced: the watch delivered the key's current value; none means the
// key is absent, at a last sequence a Confirm will give (P4).
func (m *Machine) onSynced(now time.Time) {
	m.synced = true
	if m.cur.kind == None {
		m.cur = seen{kind: Absent, first: now}
	}
	if !m.caughtUp {
		m.caughtUp = true
		m.conn.stableSince = now
	}
}

// onConn: a reconnect restarts every wait (P3), and an unknown value or
// an absent key needs its ceiling read again; a disconnected node
// declares nothing expired.
func (m *Machine) onConn(now time.Time, c Conn) {
	m.conn.connected = c.Connected
	if c.Reconnects != m.conn.reconnects {
		m.conn.reconnects = c.Reconnects
		m.prev = seen{}
		if m.cur.kind != None {
			m.cur.first, m.cur.confirmed = now, false
		}
	}
	if !c.Connected {
		m.conn.stableSince = time.Time{}
	} else if m.conn.stableSince.IsZero() {
		m.conn.stableSince = now
	}
}

// learnCeiling takes the Confirm after first sight of an unknown value
// or an absent key (P4, P6).
func (m *Machine) learnCeiling(now time.Time, b Incarnation) {
	c := &m.cur
	c.confirmed = true
	if !c.waitsTheCeiling() {
		return
	}
	c.ceiling, c.age = m.ceiling(), b.Age
	if c.kind == Absent {
		// Absent at this last sequence: a Create is checked against it.
		// The wait counts from this answer, or from when the watch a
		// reopen replaced first showed the value at that sequence (P3:
		// removed since, nothing written).
		c.lastSeq, c.first = b.LastSeq, now
		if p := m.prev; p.kind != None && p.kind != Absent && b.LastSeq == p.rev && p.first.Before(now) {
			c.first = p.first
		}
		if wait := c.ceiling - c.age; b.LastSeq == 0 && wait > 0 && !m.p.Observer {
			// P6 is the design, not a fault: an operator needs to know.
			m.logf(slog.LevelInfo, "new bucket with no lease yet: waiting before the first election, in case a leader of a bucket deleted moments ago is still running (create the bucket ahead of time with go-cluster init to start at once)",
				"wait", wait.Round(time.Millisecond), "bucket_age", c.age.Round(time.Millisecond))
		}
	}
}

// moveTo follows another incarnation of the bucket: a leader demotes at
// once, and every wait starts again on a new watch (P7).
func (m *Machine) moveTo(now time.Time, b Incarnation) {
	m.logf(slog.LevelWarn, "the bucket was deleted and created again: following the new one", "created", b.Created)
	m.forget(now, errors.New("the bucket was deleted and created again"))
	m.inc, m.incKnown = b, true
	m.ttlSeen = 0
}

// forget drops what was seen of an incarnation no longer followed.
func (m *Machine) forget(now time.Time, cause error) {
	if m.t != nil && !m.t.ended {
		m.lose(now, cause)
	}
	m.watching, m.synced = false, false
	m.prev, m.cur, m.lost, m.landing, m.pending = seen{}, seen{}, lostRace{}, nil, nil
	m.dropWatchEvents()
	if m.t == nil && !m.stopped {
		m.caughtUp = false
	}
}

// reportLeader emits LeaderChange when the leader this node knows changed.
func (m *Machine) reportLeader(now time.Time) {
	if l := m.knownLeader(now); l != m.known {
		m.known = l
		m.emit(LeaderChange{Leader: l})
	}
}

// knownLeader is itself while it leads, the holder of a held record not
// yet expired on this clock, or "".
func (m *Machine) knownLeader(now time.Time) string {
	if m.leading(now) {
		return m.p.NodeID
	}
	if m.cur.kind == Held && now.Before(m.cur.first.Add(m.holdFor())) {
		return m.cur.d.lease.NodeID
	}
	return ""
}

func ttlOf(l wire.Lease) time.Duration { return time.Duration(l.TTLMillis) * time.Millisecond }
