package election

// The follower: the key as seen (P1, P3, P9), how long a value is waited
// out (P3-P6), and when this node may campaign (P12-P14).

import (
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/ozanturksever/go-cluster/internal/wire"
)

// ceiling is the longest TTL a holder may be using (I2): the cluster's,
// the bucket's, every TTL seen in a record; this node's own if none says.
func (m *Machine) ceiling() time.Duration {
	if m.p.Knobs.OwnTTL {
		return m.p.LeaseTTL
	}
	c := max(m.inc.MaxTTL, m.inc.LeaseTTL, m.ttlSeen)
	if !m.p.Knobs.NoClusterTTL {
		c = max(c, m.inc.ClusterMaxTTL)
	}
	if c == 0 {
		c = m.p.LeaseTTL
	}
	return c
}

// holdFor is how long the value seen is waited out from first sight: a
// held record its TTL, a release nothing, else the ceiling (less age, P6).
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
		if c.lastSeq == m.inc.zero() {
			return max(c.ceiling-c.age, 0)
		}
	}
	return c.ceiling
}

// follow waits out the value seen and campaigns when it may.
func (m *Machine) follow(now time.Time) time.Time {
	m.reportLeader(now)
	c := m.cur
	expiry := c.first.Add(m.holdFor())
	checkAt := m.checkAt()
	if !checkAt.IsZero() && !now.Before(checkAt) {
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
	case m.unread || (c.kind == Absent || c.kind == Unknown) && m.p.hi() > wire.Protocol && now.Sub(m.membersAt) > m.tenureTTL():
		return m.send(now, Confirm{Timeout: m.p.RequestTimeout}, request{why: toWrite}) // what every member speaks now (P16); the bucket, after a step-down (§4.4)
	}
	m.takeOver(now)
	return time.Time{}
}

// waitsTheCeiling: an unknown value, an absent key, a held record without
// its TTL (P4).
func (c seen) waitsTheCeiling() bool {
	return c.kind == Unknown || c.kind == Absent || (c.kind == Held && c.d.lease.TTLMillis == 0)
}

// checkAt is when the value seen is confirmed (zero: it has been, or
// needs not be): no value is taken over before a Confirm after its first
// sight (P7, C4). A new tenure's record at first sight, and again half
// way through its wait (P15); anything else at first sight (P4), but a
// hand-back of a tenure so confirmed (P5).
func (m *Machine) checkAt() time.Time {
	c := m.cur
	switch {
	case c.handBack:
	case m.p.Knobs.NoCheck && !c.waitsTheCeiling():
	case c.kind == Held && c.tenureOK && !c.waitsTheCeiling():
		if half := c.first.Add(m.holdFor() / 2); c.checked.Before(half) {
			return half
		}
	case c.checked.IsZero() && c.kind != None:
		return c.first
	}
	return time.Time{}
}

// next is the value seen after the current one, d at rev, first seen now:
// a renewal of a confirmed tenure is confirmed, a release of it a hand-back.
func (m *Machine) next(d decoded, rev uint64, now time.Time) seen {
	p := m.cur
	m.seenRev = max(m.seenRev, rev)
	same := p.kind == Held && p.tenureOK && p.d.lease.Epoch == d.lease.Epoch
	return seen{kind: d.kind, rev: rev, d: d, first: now,
		tenureOK: same && d.kind == Held && p.d.lease.NodeID == d.lease.NodeID && p.d.lease.Instance == d.lease.Instance,
		handBack: same && d.kind == Released}
}

// campaignGate is when this node may campaign as far as readiness,
// cooldown, a named successor and backoff go; zero: now.
func (m *Machine) campaignGate(now time.Time) time.Time {
	c := m.cur
	named := c.kind == Released && c.d.lease.Next != ""
	var at time.Time
	switch {
	case !m.ready || m.beyond() != 0:
		return now.Add(m.p.RenewInterval) // a Readiness event or a new record wakes it sooner
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

// beyond is the version of a record the key holds that this node does
// not speak, above its own; 0 for none. The node never writes over it
// (P16).
func (m *Machine) beyond() int {
	if v := m.cur.d.lease.Version; m.cur.kind == Unknown && v > m.p.hi() {
		return v
	}
	return 0
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

// Kind is what the key holds, as one node sees it.
type Kind int

// The kinds of value (P1).
const (
	None     Kind = iota // nothing seen yet
	Absent               // no entry: absent at a stream sequence
	Held                 // a record naming a holder
	Released             // a record naming none: a hand-back
	Unknown              // anything else: garbage, a marker, another version, an epoch out of range
)

func (k Kind) String() string {
	return [...]string{"none", "absent", "held", "released", "unknown"}[k]
}

// decoded is one value of the key judged by P1.
type decoded struct {
	kind  Kind
	lease wire.Lease // Version 0: protocol 1, or no record at all
	why   string     // why it is unknown
}

// judgeRange applies P1 to a watch entry as a value of incarnation inc:
// its epoch above inc's base by at most the entry's index; ranged false
// leaves the range unchecked (Knobs.NoRangeCheck).
func judgeRange(e KVEntry, inc Incarnation, ranged bool, hi int) decoded {
	base, idx := inc.base(), inc.index(e.Rev)
	if e.Op != Put {
		return decoded{kind: Unknown, why: "a delete or purge marker"}
	}
	l, err := wire.DecodeLease(e.Value, e.Rev)
	if err != nil {
		return decoded{kind: Unknown, why: err.Error()}
	}
	d := decoded{lease: l}
	switch {
	case l.Version < wire.Protocol || l.Version > hi:
		d.kind, d.why = Unknown, fmt.Sprintf("written by protocol %d", l.Version)
	case ranged && (l.Epoch <= base || uint64(l.Epoch-base) > idx):
		d.kind, d.why = Unknown, fmt.Sprintf("epoch %d outside (%d, %d]", l.Epoch, base, addSeq(base, idx))
	case l.NodeID == "":
		d.kind = Released
	default:
		d.kind = Held
	}
	return d
}

// observe takes an entry the watch delivered.
func (m *Machine) observe(now time.Time, e KVEntry) {
	if m.cur.kind != None && m.cur.kind != Absent && e.Rev <= m.cur.rev {
		return // older than what is seen
	}
	d := judgeRange(e, m.inc, !m.p.Knobs.NoRangeCheck, m.p.hi())
	m.learn(e, d)
	m.judgeForTenure(now, e.Rev, d)
	m.cur = m.next(d, e.Rev, now)
	if m.lost.waiting && e.Rev > m.lost.above {
		m.lost = lostRace{}
	}
	if a := m.landed(d, e); a != nil { // an unanswered acquisition landed: its value is its own (P7)
		m.lead0(now, a)
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
		m.lose(now, fmt.Errorf("%w: revision %d is not this tenure's (%s)", wire.ErrEpochMismatch, rev, d.kind))
	}
}

// learn notes what an entry tells beyond the value: a TTL, or a record
// of another protocol version (Start refuses it; seen later, unknown: P1).
func (m *Machine) learn(e KVEntry, d decoded) {
	switch {
	case d.kind == Unknown && d.lease.Version > m.p.hi():
		if m.beyond() == d.lease.Version {
			return // said when the key first held this version: not at every renewal
		}
		m.logf(slog.LevelError, "the lease key holds a record of a protocol this node does not speak: following, not ready, until it is replaced (P16)", "revision", e.Rev, "version", d.lease.Version, "speaks", m.p.hi())
	case d.kind == Unknown && d.lease.Epoch != 0 && d.lease.Version < wire.Protocol:
		m.logf(slog.LevelError, "the lease key holds a record of an older protocol: waited out (go-cluster init --upgrade)", "revision", e.Rev, "version", max(d.lease.Version, 1))
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
		if m.cur.kind != None {
			m.cur.first, m.cur.checked = now, time.Time{}
		}
	}
	if !c.Connected {
		m.conn.stableSince = time.Time{}
	} else if m.conn.stableSince.IsZero() {
		m.conn.stableSince = now
	}
}

// seePause: a look over a renewal period late follows a pause, a reconnect to P13.
func (m *Machine) seePause(now time.Time) {
	if late := now.Sub(m.wake); !m.wake.IsZero() && late > m.renewEvery(m.tenureTTL()) && m.p.Priority > 0 && !m.conn.stableSince.IsZero() {
		m.conn.stableSince = now
		m.logf(slog.LevelWarn, "this process did not run for a while (paused, suspended or stalled): it asks a leader of lower priority to hand over only after its preempt delay again", "late", late.Round(time.Millisecond))
	}
}

// learnCeiling takes the Confirm after first sight of an unknown value
// or an absent key (P4, P6).
func (m *Machine) learnCeiling(now time.Time, b Incarnation) {
	c := &m.cur
	c.tenureOK, c.checked = c.kind == Held, now
	if !c.waitsTheCeiling() {
		return
	}
	c.ceiling, c.age = m.ceiling(), b.Age
	if c.kind == Absent {
		// Absent at this last sequence: a Create is checked against it,
		// and the wait counts from this answer.
		c.lastSeq, c.first = b.LastSeq, now
		if wait := c.ceiling - c.age; b.LastSeq == b.zero() && wait > 0 && !m.p.Observer {
			// P6 is the design, not a fault: an operator needs to know.
			m.logf(slog.LevelInfo, "new bucket with no lease yet: waiting before the first election, in case a leader of a bucket deleted moments ago is still running (a bucket go-cluster init made at least that long before needs no wait)",
				"wait", wait.Round(time.Millisecond), "bucket_age", c.age.Round(time.Millisecond))
		}
	}
}

// moveTo follows another incarnation of the bucket: a leader demotes at
// once, and every wait starts again on a new watch (P7).
func (m *Machine) moveTo(now time.Time, b Incarnation) {
	m.logf(slog.LevelWarn, "the bucket was deleted and created again: following the new one", "created", b.Created)
	m.forget(now, errors.New("the bucket was deleted and created again"))
	m.inc, m.incKnown, m.ttlSeen, m.membersAt, m.unread = b, true, 0, now, false
	m.seenRev = 0 // a restore's revisions go back (§5.8)
}

// forget drops what was seen of an incarnation no longer followed.
func (m *Machine) forget(now time.Time, cause error) {
	if m.t != nil && !m.t.ended {
		m.lose(now, cause)
	}
	m.watching, m.synced = false, false
	m.cur, m.lost, m.pending = seen{}, lostRace{}, nil
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
