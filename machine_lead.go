package cluster

// The machine's leader side: the tenure, renewals, the deadline, conflicts,
// drain and release (lead.go's rules, §3.3, §4.2, §4.4, §5.4).

import (
	"fmt"
	"log/slog"
	"time"
)

// deadline is when a tenure whose last write was sent at sent ends.
func (m *machine) deadline(sent time.Time) time.Time {
	return sent.Add(m.cfg.LeaseTTL - m.cfg.SafetyMargin)
}

// become starts a tenure won with a write sent at sent. OnBecomeLeader is
// queued before the deadline counts (§6.4). cause and wait describe the
// election, for the metrics.
func (m *machine) become(epoch int64, rev uint64, sent time.Time, cause ElectionCause, wait time.Duration) {
	m.own.t = &mTenure{epoch: epoch, rev: rev, acquiredAt: sent}
	m.tim.waiting, m.own.pending = false, nil
	m.lv.maxEpoch = max(m.lv.maxEpoch, epoch)
	m.extend(sent)
	m.emit(actBecome{epoch: epoch, rev: rev, deadline: m.own.t.deadline, cause: cause, wait: wait})
}

// electionCause says what the write over rev won: a key created, a
// released lease, or an expired one.
func (m *machine) electionCause(rev uint64) ElectionCause {
	switch {
	case rev != 0 && m.lv.cur.released():
		return ElectionReleased
	case rev != 0:
		return ElectionExpired
	}
	return ElectionCreated
}

// electionWait is how long the node saw what it took over before it won
// (the answer to the write that won, at won): the cluster's time without
// a live tenure as this node saw it (Metrics.ObserveElection). A
// handed-back release is written over in the same step that saw it: its
// wait is the acquire's round trip.
func (m *machine) electionWait(rev uint64, won time.Time) time.Duration {
	if rev == 0 {
		return 0
	}
	return won.Sub(m.lv.cur.firstSeen)
}

// extend moves the deadline after a write sent at sent succeeded.
func (m *machine) extend(sent time.Time) {
	t := m.own.t
	t.lastSent, t.failures = sent, 0
	t.renewDue = sent.Add(m.cfg.RenewInterval)
	if !t.ended && !t.cancelled {
		t.deadline = m.deadline(sent)
	}
}

// stepHolding renews, and releases once a drain is done.
func (m *machine) stepHolding(now time.Time) (time.Time, bool) {
	t := m.own.t
	if !t.ended && !m.leading(now) {
		m.lose(now, m.expiredCause(now, t))
		return time.Time{}, true
	}
	if d := m.hand.drain; d != nil && (d.hookDone || (!d.deadline.IsZero() && !now.Before(d.deadline))) {
		if !d.hookDone {
			m.logf(slog.LevelWarn, "OnLoseLeadership still running after DrainTimeout; releasing the lease anyway", "drain_timeout", m.cfg.DrainTimeout)
		}
		m.release(now)
		return time.Time{}, true
	}
	if !now.Before(t.renewDue) {
		m.renew(now)
		return time.Time{}, true
	}
	next := t.renewDue
	if d := m.hand.drain; d != nil {
		next = earliest(next, d.deadline)
	}
	return next, false
}

func (m *machine) expiredCause(now time.Time, t *mTenure) error {
	return fmt.Errorf("%w: no renewal succeeded since %v ago", ErrLeaseExpired, now.Sub(t.lastSent).Round(time.Millisecond))
}

// renew proves tenure with a CAS on the revision last written.
func (m *machine) renew(now time.Time) {
	t := m.own.t
	timeout := m.renewalTimeout(now)
	q := &mRequest{purpose: writeRenew, rev: t.rev, sent: now, until: now.Add(timeout)}
	m.write(q, m.heldRecord(t.epoch, t.acquiredAt, now), timeout)
}

// minAttempt is the shortest renewal attempt renewalTimeout makes; below
// twice that, the last attempt gets all the time that is left.
const minAttempt = 5 * time.Millisecond

// renewalTimeout bounds a renewal by RequestTimeout and by half the time
// left before the deadline (none while draining): §4.2.
func (m *machine) renewalTimeout(now time.Time) time.Duration {
	t := m.own.t
	if t.ended {
		return m.cfg.RequestTimeout
	}
	deadline := t.deadline
	if left := deadline.Sub(now); left > 2*minAttempt {
		deadline = now.Add(left / 2)
	}
	return m.requestTimeout(now, deadline)
}

func (m *machine) onRenew(now time.Time, q *mRequest, r evResult) {
	t := m.own.t
	if t == nil {
		return
	}
	switch {
	case r.err == nil:
		t.rev = r.rev
		m.extend(q.sent)
		m.answerChecks(now, true)
		return
	case r.inFlight && now.Before(q.until):
		// A fenced write checked on the lease was in flight: the server
		// compared nothing. Ask again at once, within the same time
		// (rule 19; lead.go pauses up to 20ms between attempts).
		q2 := *q
		m.write(&q2, q.value, q.until.Sub(now))
	case r.class == classConflict:
		m.resolveConflict(now)
	case r.class == classPermanent:
		m.fail(now, r.err)
	default:
		t.failures++
		t.renewDue = now.Add(m.backoff(t.failures, 20*time.Millisecond, m.cfg.RenewInterval/2))
	}
	m.answerChecks(now, false)
}

// tenureDeadline is the live tenure's deadline; zero while draining.
func (m *machine) tenureDeadline() time.Time {
	if t := m.own.t; t != nil && !t.ended {
		return t.deadline
	}
	return time.Time{}
}

// resolveConflict reads the key after a renewal conflict: our own
// timed-out write may have landed (§4.2).
func (m *machine) resolveConflict(now time.Time) {
	m.request(&mRequest{cont: contConflictGet}, func(id uint64) mAction {
		return actGet{id: id, timeout: m.requestTimeout(now, m.tenureDeadline())}
	})
}

func (m *machine) onConflictGet(now time.Time, r evResult) {
	t := m.own.t
	if t == nil {
		return
	}
	switch {
	case r.err != nil && !r.notFound:
		if r.class == classPermanent {
			m.fail(now, r.err)
			return
		}
		t.renewDue = now.Add(m.cfg.RenewInterval / 4)
	case r.notFound || r.entry.rev <= t.rev:
		m.leaseGoneUnder(now, !r.notFound)
	case m.ownRecord(r.entry, t.epoch):
		t.rev, t.renewDue = r.entry.rev, now
	default:
		m.lose(now, fmt.Errorf("%w: the lease changed under us", ErrEpochMismatch))
	}
}

// ownRecord says ent is this node's record at epoch.
func (m *machine) ownRecord(ent kvEntry, epoch int64) bool {
	if ent.op != opPut {
		return false
	}
	l, err := decodeLease(ent.value, ent.rev)
	return err == nil && m.mine(l) && l.Epoch == epoch
}

// mine says l is a held record this process wrote: its NodeID and its
// instance. Another process given the same NodeID writes another
// instance, and its record is never taken for this one's (rule 48).
func (m *machine) mine(l Lease) bool {
	return l.NodeID == m.cfg.NodeID && l.Instance == m.instance
}

// leaseGoneUnder asks the bucket's identity after a conflict whose read
// shows no newer record (§5.4).
func (m *machine) leaseGoneUnder(now time.Time, present bool) {
	m.request(&mRequest{cont: contGoneUnder, present: present}, func(id uint64) mAction {
		return actIncarnation{id: id, timeout: m.requestTimeout(now, m.tenureDeadline())}
	})
}

func (m *machine) onGoneUnder(now time.Time, q *mRequest, r evResult) {
	t := m.own.t
	if t == nil {
		return
	}
	if r.err != nil {
		if r.class == classPermanent {
			m.fail(now, r.err)
			return
		}
		t.renewDue = now.Add(m.cfg.RenewInterval / 4)
		return
	}
	m.lv.revFloor = max(m.lv.revFloor, r.lastSeq)
	if q.present && !r.recreated {
		t.renewDue = now.Add(m.cfg.RenewInterval / 4) // stale replica
		return
	}
	cause := fmt.Errorf("%w: the lease key was removed", ErrEpochMismatch)
	if r.recreated {
		cause = fmt.Errorf("%w: %w", ErrEpochMismatch, errBucketRecreated)
	}
	m.lose(now, cause)
	m.lv.cur = observed{present: q.present, firstSeen: now}
	switch {
	case r.recreated:
		m.oldWritesBlind()
		m.restartWatch(now) // the floor follows once the new watch is synced
	case !q.present:
		m.seed(now)
	}
}

// release writes the released record after a drain (§4.4); a transient
// error gets up to 3 attempts.
func (m *machine) release(now time.Time) {
	t := m.own.t
	next := ""
	if d := m.hand.drain; d != nil {
		next = d.next
	}
	q := &mRequest{purpose: writeRelease, rev: t.rev, sent: now, attempt: 1}
	m.write(q, releasedAt(t.epoch, t.acquiredAt, now, next), m.cfg.RequestTimeout)
}

func (m *machine) onRelease(now time.Time, q *mRequest, r evResult) {
	// A replicated stream's refusal of a check while a state write checked
	// on the lease is in flight compared nothing: another attempt (rule 46).
	if r.err != nil && (r.class == classTransient || r.inFlight) && q.attempt < 3 {
		q2 := *q
		q2.attempt++
		m.write(&q2, q.value, m.cfg.RequestTimeout)
		return
	}
	err := r.err
	if err != nil {
		err = fmt.Errorf("%w: followers take over when it expires: %w", ErrReleaseFailed, err)
	}
	if r.err == nil {
		// What the key holds now, before the watch says so (as rule 26):
		// its release, not its own record, which it would otherwise give
		// back again with a write that cannot land (rule 42).
		m.lv.cur = m.decode(now, kvEntry{rev: r.rev, op: opPut, value: q.value})
		m.lv.observations++
	}
	if m.own.t != nil {
		m.endTenure(nil)
		m.own.t = nil
	}
	m.finishDrain(now, err)
}

// releaseStale gives back a record this node holds on paper only.
func (m *machine) releaseStale(now time.Time) {
	c := m.lv.cur
	q := &mRequest{purpose: writeReleaseStale, rev: c.rev, sent: now}
	m.write(q, releasedAt(c.lease.Epoch, c.lease.AcquiredAt, now, ""), m.cfg.RequestTimeout)
}

func (m *machine) onReleaseStale(now time.Time, q *mRequest, r evResult) {
	if r.err != nil {
		if r.class == classPermanent {
			m.fail(now, r.err)
			return
		}
		m.waitFor(now, q.rev)
	}
	m.own.lastEpoch = 0
}

// beginDrain ends the tenure and keeps the lease until OnLoseLeadership
// has run (or DrainTimeout after it began), then releases it.
func (m *machine) beginDrain(stepDown bool, next string, reply func(error) mAction) {
	m.logf(slog.LevelInfo, "stepping down", "epoch", m.own.t.epoch, "step_down", stepDown, "next", next)
	m.hand.drain = &mDrain{stepDown: stepDown, next: next, reply: reply}
	m.endTenure(nil)
}

// finishDrain completes a StepDown or Stop.
func (m *machine) finishDrain(now time.Time, err error) {
	d := m.hand.drain
	if d == nil {
		return
	}
	m.hand.drain = nil
	if d.stepDown {
		m.hand.cooldownUntil = now.Add(m.cfg.Cooldown)
		m.emit(actCooldownKey{d: m.cfg.Cooldown})
	}
	if d.reply != nil {
		m.emit(d.reply(err))
	}
}

// endTenure ends the tenure and queues OnLoseLeadership, once.
func (m *machine) endTenure(cause error) {
	t := m.own.t
	if t.ended {
		return
	}
	t.ended = true
	m.own.lastEpoch = t.epoch
	m.queueLose(t, cause)
}

func (m *machine) queueLose(t *mTenure, cause error) {
	if !t.loseQueued {
		t.loseQueued = true
		m.emit(actLose{epoch: t.epoch, cause: cause})
	}
	m.endChecks(cause)
}

// lose ends the tenure involuntarily.
func (m *machine) lose(now time.Time, cause error) {
	if m.own.t == nil {
		return
	}
	m.endTenure(cause)
	m.own.t = nil
	if m.hand.drain != nil {
		m.finishDrain(now, nil)
	}
}
