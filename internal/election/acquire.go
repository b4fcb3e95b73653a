package election

// The acquisition: the takeover over the value seen, its epoch (P2), and
// the Confirm it needs before the node leads (P7).

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
		m.confirmLanding(now, a, r.Seen, r.Landing)
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

// confirmLanding leads on a landing in the incarnation the node decided
// in (P7): one a pinned consumer delivered (seen, §3.5), or one a Confirm
// names (asked, judged as any). Else it asks, each retry waiting twice as
// long, up to when the tenure could no longer begin (the deadline counts
// from the write's send time): a lost answer is asked again soon, a slow
// server is waited for.
func (m *Machine) confirmLanding(now time.Time, a *attempt, seen *KVEntry, asked *ConfirmResult) {
	switch a.confirms++; {
	case m.p.Knobs.NoConfirm, seen != nil && seen.Consumer == m.pinned && m.pinned != "" && seen.Rev == a.rev && bytes.Equal(seen.Value, a.value):
		m.lead0(now, a)
	case asked != nil: // an error, even a bucket gone, is asked again
		m.onConfirmed(now, &request{why: toLead, a: a}, *asked)
	default:
		timeout := min(m.p.RequestTimeout<<min(a.confirms-1, 8), max(m.p.RequestTimeout, m.deadlineOf(a.sent, a.ttl).Sub(now)))
		m.send(now, Confirm{Timeout: timeout}, request{why: toLead, a: a})
	}
}

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

// lead0 begins the tenure a confirmed landing grants (P7), with its
// deadline from the write's send time (P8).
func (m *Machine) lead0(now time.Time, a *attempt) {
	m.pending = nil
	deadline := m.deadlineOf(a.sent, a.ttl)
	if !now.Before(deadline) {
		m.logf(slog.LevelWarn, "an acquisition was confirmed after its deadline: not leading", "epoch", a.epoch)
		return
	}
	m.t = &tenure{epoch: a.epoch, rev: a.rev, ttl: a.ttl, acquired: a.sent, deadline: deadline,
		renewDue: a.sent.Add(m.renewEvery(a.ttl))}
	m.conn.askedAt = time.Time{}
	m.emit(Become{Epoch: a.epoch, Rev: a.rev, Deadline: deadline, Cause: a.cause, Seen: a.seen})
	m.reportLeader(now)
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
	if !m.p.Knobs.NoConfirm {
		w.Landing = m.p.RequestTimeout
	}
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

// nextEpoch is P2: over a held or released record at rev, its epoch +1;
// over an unknown value at rev, base + rev + 1; into a key absent at
// lastSeq, base + lastSeq + 1.
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
func (m *Machine) held(epoch int64, ttl time.Duration, acquired, now time.Time) []byte {
	return wire.Lease{NodeID: m.p.NodeID, Epoch: epoch, TTLMillis: ttl.Milliseconds(),
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
