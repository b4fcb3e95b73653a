package election

// The machine's leader side: the tenure, renewals, the deadline, conflicts,
// drain and release (§3.3, §4.2, §4.4, §5.4).

import (
	"fmt"
	"log/slog"
	"time"
)

// deadline is when a tenure whose last write was sent at sent ends.
func (m *Machine) deadline(sent time.Time) time.Time {
	return sent.Add(m.cfg.LeaseTTL - m.cfg.SafetyMargin)
}

// become starts a tenure won with a write sent at sent. OnBecomeLeader is
// queued before the deadline counts (§6.4). cause and wait describe the
// election, for the metrics.
func (m *Machine) become(epoch int64, rev uint64, sent time.Time, cause Cause, wait time.Duration) {
	m.own.t = &Tenure{epoch: epoch, rev: rev, acquiredAt: sent}
	m.tim.waiting, m.own.pending = false, nil
	m.lv.maxEpoch = max(m.lv.maxEpoch, epoch)
	m.extend(sent)
	m.emit(Become{Epoch: epoch, Rev: rev, Deadline: m.own.t.deadline, Cause: cause, Wait: wait})
}

// electionCause says what the write over rev won: a key created, a
// released lease, or an expired one.
func (m *Machine) electionCause(rev uint64) Cause {
	switch {
	case rev != 0 && m.lv.cur.released():
		return CauseReleased
	case rev != 0:
		return CauseExpired
	}
	return CauseCreated
}

// electionWait is how long the node saw what it took over before it won
// (the answer to the write that won, at won): the cluster's time without
// a live tenure as this node saw it (Metrics.ObserveElection). A
// handed-back release is written over in the same step that saw it: its
// wait is the acquire's round trip.
func (m *Machine) electionWait(rev uint64, won time.Time) time.Duration {
	if rev == 0 {
		return 0
	}
	return won.Sub(m.lv.cur.firstSeen)
}

// extend moves the deadline after a write sent at sent succeeded.
func (m *Machine) extend(sent time.Time) {
	t := m.own.t
	t.lastSent, t.failures = sent, 0
	t.renewDue = sent.Add(m.cfg.RenewInterval)
	if !t.ended && !t.cancelled {
		t.deadline = m.deadline(sent)
	}
}

// stepHolding renews, and releases once a drain is done.
func (m *Machine) stepHolding(now time.Time) (time.Time, bool) {
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

func (m *Machine) expiredCause(now time.Time, t *Tenure) error {
	return fmt.Errorf("%w: no renewal succeeded since %v ago", ErrLeaseExpired, now.Sub(t.lastSent).Round(time.Millisecond))
}

// renew proves tenure with a CAS on the revision last written.
func (m *Machine) renew(now time.Time) {
	t := m.own.t
	timeout := m.renewalTimeout(now)
	q := &Request{purpose: Renew, rev: t.rev, sent: now, until: now.Add(timeout)}
	m.write(q, m.heldRecord(t.epoch, t.acquiredAt, now), timeout)
}

// minAttempt is the shortest renewal attempt renewalTimeout makes; below
// twice that, the last attempt gets all the time that is left.
const minAttempt = 5 * time.Millisecond

// renewalTimeout bounds a renewal by RequestTimeout and by half the time
// left before the deadline (none while draining): §4.2.
func (m *Machine) renewalTimeout(now time.Time) time.Duration {
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

func (m *Machine) onRenew(now time.Time, q *Request, r Result) {
	t := m.own.t
	if t == nil {
		return
	}
	switch {
	case r.Err == nil:
		t.rev = r.Rev
		m.extend(q.sent)
		m.answerChecks(now, true)
		return
	case r.InFlight && now.Before(q.until):
		// A fenced write checked on the lease was in flight: the server
		// compared nothing. Ask again at once, within the same time
		// (rule 19; within one Write the driver asks again already, pausing
		// up to 20ms between attempts: package cluster, driver_requests.go).
		q2 := *q
		m.write(&q2, q.value, q.until.Sub(now))
	case r.Class == Conflict:
		m.resolveConflict(now)
	case r.Class == Permanent:
		m.fail(now, r.Err)
	default:
		t.failures++
		t.renewDue = now.Add(m.backoff(t.failures, 20*time.Millisecond, m.cfg.RenewInterval/2))
	}
	m.answerChecks(now, false)
}

// tenureDeadline is the live tenure's deadline; zero while draining.
func (m *Machine) tenureDeadline() time.Time {
	if t := m.own.t; t != nil && !t.ended {
		return t.deadline
	}
	return time.Time{}
}

// resolveConflict reads the key after a renewal conflict: our own
// timed-out write may have landed (§4.2). An advisory that came while
// the renewal was out is asked first (rule 54): its one lookup ends a
// tenure in a bucket created again a round trip before the read and the
// lookup would (simulator seed 354333: a slow network stretched them past
// a new node's wait, and it led beside the 3 s leader).
func (m *Machine) resolveConflict(now time.Time) {
	if m.takeKeptAdvisory() {
		m.checkIdentity(now, thenNothing, 0)
		return
	}
	m.request(&Request{cont: contConflictGet}, func(id uint64) Action {
		return Get{ID: id, Timeout: m.requestTimeout(now, m.tenureDeadline())}
	})
}

func (m *Machine) onConflictGet(now time.Time, r Result) {
	t := m.own.t
	if t == nil {
		return
	}
	switch {
	case r.Err != nil && !r.NotFound:
		if r.Class == Permanent {
			m.fail(now, r.Err)
			return
		}
		t.renewDue = now.Add(m.cfg.RenewInterval / 4)
	case r.NotFound || r.Entry.Rev <= t.rev:
		m.leaseGoneUnder(now, !r.NotFound)
	case m.ownRecord(r.Entry, t.epoch):
		t.rev, t.renewDue = r.Entry.Rev, now
	default:
		m.lose(now, fmt.Errorf("%w: the lease changed under us", ErrEpochMismatch))
	}
}

// ownRecord says ent is this node's record at epoch.
func (m *Machine) ownRecord(ent KVEntry, epoch int64) bool {
	if ent.Op != Put {
		return false
	}
	l, err := DecodeLease(ent.Value, ent.Rev)
	return err == nil && m.mine(l) && l.Epoch == epoch
}

// mine says l is a held record this process wrote: its NodeID and its
// instance. Another process given the same NodeID writes another
// instance, and its record is never taken for this one's (rule 48).
func (m *Machine) mine(l Lease) bool {
	return l.NodeID == m.cfg.NodeID && l.Instance == m.instance
}

// leaseGoneUnder asks the bucket's identity after a conflict whose read
// shows no newer record (§5.4).
func (m *Machine) leaseGoneUnder(now time.Time, present bool) {
	m.request(&Request{cont: contGoneUnder, present: present}, func(id uint64) Action {
		return Incarnation{ID: id, Timeout: m.requestTimeout(now, m.tenureDeadline())}
	})
}

func (m *Machine) onGoneUnder(now time.Time, q *Request, r Result) {
	t := m.own.t
	if t == nil {
		return
	}
	if r.Err != nil {
		if r.Class == Permanent {
			m.fail(now, r.Err)
			return
		}
		t.renewDue = now.Add(m.cfg.RenewInterval / 4)
		return
	}
	if r.Recreated {
		// Moved to the new bucket as every other finding moves a node
		// (rule 56): its creation time is the epoch base there, and its
		// sequences count from there (rules 50, 51).
		m.lose(now, fmt.Errorf("%w: %w", ErrEpochMismatch, errBucketRecreated))
		m.followNewBucket(now, r) // the floor follows once the new watch is synced
		return
	}
	m.lv.revFloor = max(m.lv.revFloor, r.LastSeq)
	if q.present {
		t.renewDue = now.Add(m.cfg.RenewInterval / 4) // stale replica
		return
	}
	m.lose(now, fmt.Errorf("%w: the lease key was removed", ErrEpochMismatch))
	m.lv.cur = observed{}
	m.waitFrom(now)
	m.seed(now)
}

// release writes the released record after a drain (§4.4); a transient
// error gets up to 3 attempts.
func (m *Machine) release(now time.Time) {
	t := m.own.t
	next := ""
	if d := m.hand.drain; d != nil {
		next = d.next
	}
	q := &Request{purpose: Release, rev: t.rev, sent: now, attempt: 1}
	m.write(q, releasedAt(t.epoch, t.acquiredAt, now, next), m.cfg.RequestTimeout)
}

func (m *Machine) onRelease(now time.Time, q *Request, r Result) {
	// A replicated stream's refusal of a check while a state write checked
	// on the lease is in flight compared nothing: another attempt (rule 46).
	if r.Err != nil && (r.Class == Transient || r.InFlight) && q.attempt < 3 {
		q2 := *q
		q2.attempt++
		m.write(&q2, q.value, m.cfg.RequestTimeout)
		return
	}
	err := r.Err
	if err != nil {
		err = fmt.Errorf("%w: followers take over when it expires: %w", ErrReleaseFailed, err)
	}
	if r.Err == nil {
		// What the key holds now, before the watch says so (as rule 26):
		// its release, not its own record, which it would otherwise give
		// back again with a write that cannot land (rule 42).
		m.lv.cur = m.decode(now, KVEntry{Rev: r.Rev, Op: Put, Value: q.value})
		m.lv.observations++
	}
	if m.own.t != nil {
		m.endTenure(nil)
		m.own.t = nil
	}
	m.finishDrain(now, err)
}

// releaseStale gives back a record this node holds on paper only.
func (m *Machine) releaseStale(now time.Time) {
	c := m.lv.cur
	q := &Request{purpose: ReleaseStale, rev: c.rev, sent: now}
	m.write(q, releasedAt(c.lease.Epoch, c.lease.AcquiredAt, now, ""), m.cfg.RequestTimeout)
}

func (m *Machine) onReleaseStale(now time.Time, q *Request, r Result) {
	if r.Err != nil {
		if r.Class == Permanent {
			m.fail(now, r.Err)
			return
		}
		m.waitFor(now, q.rev)
	}
	m.own.lastEpoch = 0
}

// beginDrain ends the tenure and keeps the lease until OnLoseLeadership
// has run (or DrainTimeout after it began), then releases it.
func (m *Machine) beginDrain(stepDown bool, next string, reply func(error) Action) {
	m.logf(slog.LevelInfo, "stepping down", "epoch", m.own.t.epoch, "step_down", stepDown, "next", next)
	m.hand.drain = &Drain{stepDown: stepDown, next: next, reply: reply}
	m.endTenure(nil)
}

// finishDrain completes a StepDown or Stop.
func (m *Machine) finishDrain(now time.Time, err error) {
	d := m.hand.drain
	if d == nil {
		return
	}
	m.hand.drain = nil
	if d.stepDown {
		m.hand.cooldownUntil = now.Add(m.cfg.Cooldown)
		m.emit(CooldownKey{Cooldown: m.cfg.Cooldown})
	}
	if d.reply != nil {
		m.emit(d.reply(err))
	}
}

// endTenure ends the tenure and queues OnLoseLeadership, once.
func (m *Machine) endTenure(cause error) {
	t := m.own.t
	if t.ended {
		return
	}
	t.ended = true
	m.own.lastEpoch = t.epoch
	m.queueLose(t, cause)
}

func (m *Machine) queueLose(t *Tenure, cause error) {
	if !t.loseQueued {
		t.loseQueued = true
		m.emit(Lose{Epoch: t.epoch, Cause: cause})
	}
	m.endChecks(cause)
}

// lose ends the tenure involuntarily.
func (m *Machine) lose(now time.Time, cause error) {
	if m.own.t == nil {
		return
	}
	m.endTenure(cause)
	m.own.t = nil
	if m.hand.drain != nil {
		m.finishDrain(now, nil)
	}
}
