package election

// An acquisition's answer, and the Confirm it needs before the node
// leads (P2, P7).

import (
	"bytes"
	"log/slog"
	"time"
)

// onAcquired takes the answer of an acquisition's write.
func (m *Machine) onAcquired(now time.Time, a *attempt, r WriteResult) {
	switch {
	case r.Err == nil:
		m.fails, a.rev = 0, r.Rev
		if m.p.Knobs.NoConfirm {
			m.lead0(now, a)
			return
		}
		m.confirmLanding(now, a)
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

// confirmLanding asks whether a landing is in the incarnation the node
// decided in (P7). Each retry waits twice as long, up to when the tenure
// could no longer begin (the deadline counts from the write's send time):
// a lost answer is asked again soon, a slow server is waited for.
func (m *Machine) confirmLanding(now time.Time, a *attempt) {
	timeout := min(m.p.RequestTimeout<<min(a.confirms, 8), max(m.p.RequestTimeout, m.deadlineOf(a.sent, a.ttl).Sub(now)))
	a.confirms++
	m.send(now, Confirm{Timeout: timeout}, request{why: toLead, a: a})
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
