package election

// The acquisition: the takeover over the value seen, its epoch (P2), and
// the tenure its acknowledged landing begins (P7, P8).

import (
	"bytes"
	"fmt"
	"log/slog"
	"math"
	"time"

	"github.com/ozanturksever/go-cluster/internal/wire"
)

// onAcquired takes the answer of an acquisition's write.
func (m *Machine) onAcquired(now time.Time, a *attempt, r WriteResult) {
	switch {
	case r.Err == nil:
		m.fails, a.rev = 0, r.Rev
		m.lead0(now, a)
	case m.p.Knobs.NoAck:
		a.rev = m.cur.rev + 1
		m.lead0(now, a)
	case r.Class == Conflict:
		m.lost = lostRace{waiting: true, above: m.cur.rev, resync: now.Add(m.p.RequestTimeout)}
	default:
		// Unknown outcome: the write may land, and if the watch shows it,
		// it is confirmed like any landing (observe). Kept with the first
		// maxPending at its epoch (the key moved past an earlier epoch's).
		if len(m.pending) > 0 && m.pending[0].epoch != a.epoch {
			m.pending = nil
		}
		if len(m.pending) < maxPending {
			m.pending = append(m.pending, a)
		}
		m.retryAt = now.Add(m.backoff())
	}
}

const maxPending = 4

// landed is the unanswered acquisition an entry shows landed, or nil: the
// one whose value it holds (each value has its own send time in it), or
// one not kept, sent after the first, counted from the first. Its
// revision is above what it was written over: epochs grow (Claim B).
func (m *Machine) landed(d decoded, e KVEntry) *attempt {
	if len(m.pending) == 0 || !m.ownLateWrite(d, m.pending[0].epoch) {
		return nil
	}
	a := m.pending[0]
	for _, p := range m.pending {
		if bytes.Equal(p.value, e.Value) {
			a = p
			break
		}
	}
	a.rev = e.Rev
	return a
}

// lead0 begins the tenure an acknowledged landing grants (P7), with its
// deadline from the write's send time (P8).
func (m *Machine) lead0(now time.Time, a *attempt) {
	m.pending = nil
	deadline := m.deadlineOf(a.sent, a.ttl)
	if !now.Before(deadline) {
		m.logf(slog.LevelWarn, "an acquisition was acknowledged after its deadline: not leading", "epoch", a.epoch)
		return
	}
	m.t = &tenure{epoch: a.epoch, version: a.version, rev: a.rev, ttl: a.ttl, acquired: a.sent, deadline: deadline,
		renewDue: a.sent.Add(m.renewEvery(a.ttl)), checkDue: a.sent.Add(a.ttl)}
	m.conn.askedAt = time.Time{}
	m.emit(Become{Epoch: a.epoch, Rev: a.rev, Sent: a.sent, Deadline: deadline, TTL: a.ttl, Renew: m.renewEvery(a.ttl), Cause: a.cause, Seen: a.seen})
	m.reportLeader(now)
}

// takeOver writes the acquisition over the value seen (P2).
func (m *Machine) takeOver(now time.Time) {
	c := m.cur
	epoch, err := nextEpoch(c.kind, c.d.lease.Epoch, m.inc.index(c.rev), m.inc.index(c.lastSeq), m.inc.base())
	if err != nil {
		m.fail(err)
		return
	}
	a := &attempt{epoch: epoch, version: m.writeVersion(), ttl: m.tenureTTL(), sent: now, cause: CauseExpired, seen: c.first}
	a.value = m.held(epoch, a.version, a.ttl, now, now)
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

// writeVersion is the protocol a takeover writes (P16): the record's it
// replaces, or over an absent key or unknown value the highest this node
// speaks that every member names, read within a TTL (follow asks first).
func (m *Machine) writeVersion() int {
	if k := m.cur.kind; k == Held || k == Released {
		return m.cur.d.lease.Version
	}
	return max(wire.Protocol, min(m.p.hi(), m.inc.MembersSpeak))
}

// tenureTTL is the TTL a tenure begun now keeps (I2): the bucket's (this
// node's if it says none), at most the cluster's ceiling.
func (m *Machine) tenureTTL() time.Duration {
	ttl := m.p.LeaseTTL
	if m.inc.LeaseTTL > 0 && !m.p.Knobs.OwnTTL {
		ttl = m.inc.LeaseTTL
	}
	if c := m.inc.ClusterMaxTTL; c > 0 && !m.p.Knobs.NoClusterTTL && !m.p.Knobs.OwnTTL {
		ttl = min(ttl, c)
	}
	return ttl
}

// nextEpoch is P2: over a held or released record, its epoch +1; over an
// unknown value at index rev, base + rev + 1; into a key absent at index
// lastSeq, base + lastSeq + 1 (indices count the incarnation's sequences
// from its first, Incarnation.index).
func nextEpoch(kind Kind, epoch int64, rev, lastSeq uint64, base int64) (int64, error) {
	from := epoch
	switch kind {
	case Unknown:
		from = addSeq(base, rev)
	case Absent:
		from = addSeq(base, lastSeq)
	}
	if from == math.MaxInt64 {
		return 0, fmt.Errorf("%w: no epoch above %d", wire.ErrEpochExhausted, from)
	}
	return from + 1, nil
}

// addSeq is base + seq, saturating at the largest int64.
func addSeq(base int64, seq uint64) int64 {
	if seq > uint64(math.MaxInt64-base) {
		return math.MaxInt64
	}
	return base + int64(seq)
}

// held encodes a held record of this node.
func (m *Machine) held(epoch int64, version int, ttl time.Duration, acquired, now time.Time) []byte {
	return wire.Lease{Version: version, NodeID: m.p.NodeID, Epoch: epoch, TTLMillis: ttl.Milliseconds(),
		AcquiredAt: acquired.UTC(), ExpiresAt: now.Add(ttl).UTC(), Priority: m.p.Priority,
		Metadata: m.p.Metadata, Instance: m.p.Instance}.Encode()
}

// renewEvery is the renewal interval of a tenure of ttl: this node's,
// at most a third of it.
func (m *Machine) renewEvery(ttl time.Duration) time.Duration {
	return min(m.p.RenewInterval, ttl/3)
}

// deadlineOf is a write's send time + ttl - margin, the margin scaled
// from this node's SafetyMargin to ttl (P8).
func (m *Machine) deadlineOf(sent time.Time, ttl time.Duration) time.Time {
	margin := m.p.SafetyMargin
	if m.p.LeaseTTL > 0 && ttl != m.p.LeaseTTL {
		// in float64: SafetyMargin times ttl, in ns, overflows an int64
		margin = time.Duration(math.Ceil(float64(m.p.SafetyMargin) / float64(m.p.LeaseTTL) * float64(ttl)))
	}
	return sent.Add(ttl - margin)
}
