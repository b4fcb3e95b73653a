package election

// An acquisition's answer, and the Confirm it needs before the node
// leads (P2, P7).

import (
	"bytes"
	"errors"
	"log/slog"
	"time"
)

// onAcquired takes the answer of an acquisition's write.
func (m *Machine) onAcquired(now time.Time, q *request, a *attempt, r WriteResult) {
	m.state = Following
	switch {
	case r.Err == nil:
		m.fails = 0
		a.rev = r.Rev
		if m.knobs.NoConfirm {
			m.lead0(now, a)
			return
		}
		m.confirmLanding(now, a)
	case errors.Is(r.Err, ErrBucketDeleted):
		m.bucketGone(now, r.Err)
	case r.Class == Conflict:
		m.lostAt(now, m.cur.rev)
	case r.Class == Permanent:
		m.fail(r.Err)
	default:
		// Unknown outcome: the write may still land. If the watch shows
		// it, it is confirmed like any landing (observe); meanwhile back off.
		m.keepPending(a)
		m.retryAt = now.Add(m.backoff())
		m.logf(slog.LevelDebug, "acquisition unanswered", "epoch", a.epoch, "error", r.Err)
	}
}

// confirmLanding asks whether a landing is in the incarnation the node
// decided in (P7). The answer is awaited as long as the tenure could
// still begin: a slow reply costs nothing, the deadline counts from the
// write's send time.
func (m *Machine) confirmLanding(now time.Time, a *attempt) {
	m.state = Confirming
	timeout := max(m.p.RequestTimeout, m.deadlineOf(a.sent, a.ttl).Sub(now))
	m.send(now, confirm{why: toLead, a: a}, Confirm{Timeout: timeout})
}

// keepPending keeps an unanswered acquisition, which may land, with the
// others at its epoch (the key moved past an earlier epoch's): the first
// maxPending of them.
func (m *Machine) keepPending(a *attempt) {
	if len(m.pending) > 0 && m.pending[0].epoch != a.epoch {
		m.pending = nil
	}
	if len(m.pending) < maxPending {
		m.pending = append(m.pending, a)
	}
}

const maxPending = 4

// landed is the unanswered acquisition an entry shows landed, or nil: the
// one whose value it holds (each value has its own send time in it), or
// one not kept, sent after the first, counted from the first.
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
	if e.Rev <= a.over {
		return nil
	}
	a.rev = e.Rev
	return a
}

// lostAt waits for the watch to show a revision above rev (P10).
func (m *Machine) lostAt(now time.Time, rev uint64) {
	m.lost = lostRace{waiting: true, above: rev, resync: now.Add(m.p.RequestTimeout)}
}

// lead0 begins the tenure a confirmed landing grants (P7), with its
// deadline from the write's send time (P8).
func (m *Machine) lead0(now time.Time, a *attempt) {
	m.pending = nil
	deadline := m.deadlineOf(a.sent, a.ttl)
	if !now.Before(deadline) {
		m.logf(slog.LevelWarn, "an acquisition was confirmed after its deadline: not leading", "epoch", a.epoch)
		m.state = Following
		return
	}
	m.t = &tenure{epoch: a.epoch, rev: a.rev, ttl: a.ttl, acquired: a.sent, deadline: deadline,
		renewDue: a.sent.Add(m.renewEvery(a.ttl))}
	m.state = Leading
	m.conn.askedAt = time.Time{}
	m.logf(slog.LevelInfo, "leading", "epoch", a.epoch, "cause", a.cause)
	m.emit(Become{Epoch: a.epoch, Rev: a.rev, Deadline: deadline, Cause: a.cause, Wait: sinceSeen(a, now)})
	m.reportLeader(now)
}

// sinceSeen is how long the node saw the value it took over before its
// tenure began (Metrics.ObserveElection); 0 for a key that did not exist.
func sinceSeen(a *attempt, now time.Time) time.Duration {
	if a.seen.IsZero() {
		return 0
	}
	return now.Sub(a.seen)
}
