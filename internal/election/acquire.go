package election

// An acquisition's answer, and the Confirm it needs before the node
// leads (P2, P7).

import (
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
		// An earlier unanswered attempt at the same epoch is kept: the
		// record the watch shows may be its write, so its tenure counts
		// from the earlier send time.
		if m.pending == nil || m.pending.epoch != a.epoch {
			m.pending = a
		}
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
	m.emit(Become{Epoch: a.epoch, Rev: a.rev, Deadline: deadline, Cause: a.cause, Wait: a.wait})
	m.reportLeader(now)
}
