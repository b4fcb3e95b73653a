package cluster

// The leader's side of the election: winning, renewing, keeping the
// deadline, draining and releasing.

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// tenure is this node holding the lease.
type tenure struct {
	epoch      int64
	rev        uint64
	acquiredAt time.Time // wall clock, for the record
	lastSent   time.Time // send time of the last renewal that succeeded
	renewDue   time.Time
	failures   int
	ctx        context.Context
	cancel     context.CancelFunc
	timer      *time.Timer
	ended      bool // ctx cancelled: lost, or draining before release

	// OnLoseLeadership is queued once, by the loop or by the deadline
	// timer, whichever is first; loseStarted is closed when it begins,
	// loseDone when it returns.
	loseOnce    sync.Once
	loseStarted chan struct{}
	loseDone    chan struct{}
}

// drain is a StepDown or Stop in progress on the leader: the tenure has
// ended, OnLoseLeadership runs, and the lease is still renewed until it is
// released.
type drain struct {
	hookStarted chan struct{} // nil once OnLoseLeadership has begun
	hookDone    chan struct{} // nil once it has returned
	// deadline is DrainTimeout after OnLoseLeadership began (zero before):
	// a hook queued behind a slow one still gets its whole DrainTimeout,
	// and the lease is never released before it has begun.
	deadline time.Time
	stepDown bool
	next     string      // successor named in the released record
	done     func(error) // told when the lease is released (or lost); may be nil
}

// stepHolding renews, and releases once a drain is done.
func (e *election) stepHolding(now time.Time) (time.Time, bool) {
	t := e.t
	if !t.ended && !e.view.leading(now) {
		// The deadline passed and the timer has not told the loop yet:
		// the lease is no longer ours to renew.
		e.lose(e.expiredCause(t))
		return time.Time{}, true
	}
	if d := e.drain; d != nil && (d.hookDone == nil || (!d.deadline.IsZero() && !now.Before(d.deadline))) {
		if d.hookDone != nil {
			e.log.Warn("OnLoseLeadership still running after DrainTimeout; releasing the lease anyway", "drain_timeout", e.cfg.DrainTimeout)
		}
		e.release()
		return time.Time{}, true
	}
	if !now.Before(t.renewDue) {
		e.renew()
		return time.Time{}, true
	}
	next := t.renewDue
	if e.drain != nil {
		next = earliest(next, e.drain.deadline)
	}
	return next, false
}

// heldRecord is the record of this node holding the lease, written at now.
func (e *election) heldRecord(epoch int64, acquired, now time.Time) []byte {
	return mustEncode(Lease{NodeID: e.cfg.NodeID, Epoch: epoch, AcquiredAt: acquired.UTC(),
		ExpiresAt: now.Add(e.cfg.LeaseTTL).UTC(), TTLMillis: e.cfg.LeaseTTL.Milliseconds(), Priority: e.cfg.Priority,
		Metadata: e.cfg.Metadata})
}

// releasedRecord is the record StepDown and Stop write: nobody holds the
// lease, the epoch stays, and next may name the preferred successor.
func (e *election) releasedRecord(epoch int64, acquired time.Time, next string) []byte {
	now := time.Now()
	return mustEncode(Lease{Epoch: epoch, AcquiredAt: acquired.UTC(), ExpiresAt: now.UTC(), Next: next})
}

func mustEncode(l Lease) []byte {
	data, err := encodeLease(l)
	if err != nil {
		panic(fmt.Sprintf("encode lease: %v", err)) // a Lease always encodes
	}
	return data
}

// become starts a tenure won with a write sent at sent.
func (e *election) become(epoch int64, rev uint64, sent time.Time) {
	ctx, cancel := context.WithCancel(context.WithValue(e.base, tenureEpochKey{}, epoch))
	t := &tenure{epoch: epoch, rev: rev, acquiredAt: sent, ctx: ctx, cancel: cancel,
		loseStarted: make(chan struct{}), loseDone: make(chan struct{})}
	e.t = t
	e.waiting, e.pending = false, nil
	e.maxEpoch = max(e.maxEpoch, epoch)
	e.view.mu.Lock()
	e.view.tenureCtx, e.view.tenureCancel, e.view.tenureEpoch, e.view.tenureRev = ctx, cancel, epoch, rev
	e.view.epoch = epoch // with the tenure: whoever sees IsLeader sees its epoch
	e.view.mu.Unlock()
	e.extend(sent)
	// Made before it can fire (deadlineFired uses t.timer), armed after
	// OnBecomeLeader is queued: it may queue OnLoseLeadership at once.
	t.timer = time.AfterFunc(time.Hour, func() { e.deadlineFired(t) })
	e.log.Info("became leader", "epoch", epoch, "revision", rev)
	e.cfg.Metrics.ObserveLeadership(true, epoch)
	e.disp.enqueue(hookCall{name: "OnBecomeLeader", fn: func() error { return e.hooks.OnBecomeLeader(ctx) }})
	t.timer.Reset(time.Until(e.deadline(sent)))
}

// setTenureRev records the revision of this node's latest lease record:
// the loop's copy, and the view's, which writes fenced on the lease read.
func (e *election) setTenureRev(rev uint64) {
	e.t.rev = rev
	e.view.mu.Lock()
	if e.view.tenureEpoch == e.t.epoch {
		e.view.tenureRev = rev
	}
	e.view.mu.Unlock()
}

func (e *election) deadline(sent time.Time) time.Time {
	return sent.Add(e.cfg.LeaseTTL - e.cfg.SafetyMargin)
}

// extend moves the tenure deadline after a renewal sent at sent succeeded.
func (e *election) extend(sent time.Time) {
	t := e.t
	t.lastSent = sent
	t.failures = 0
	t.renewDue = sent.Add(e.cfg.RenewInterval)
	if t.ended {
		return
	}
	e.view.mu.Lock()
	e.view.deadline = e.deadline(sent)
	e.view.mu.Unlock()
}

// deadlineFired runs on a timer goroutine. It ends the tenure if the
// deadline has really passed, or re-arms itself for the extended one. It
// queues OnLoseLeadership itself: the loop may be blocked in a request,
// and the hook must not start later than the deadline because of that.
func (e *election) deadlineFired(t *tenure) {
	e.view.mu.Lock()
	if e.view.tenureCtx != t.ctx {
		e.view.mu.Unlock()
		return
	}
	if wait := time.Until(e.view.deadline); wait > 0 {
		e.view.mu.Unlock()
		t.timer.Reset(wait)
		return
	}
	t.cancel()
	e.view.mu.Unlock()
	e.queueLose(t)
	select {
	case e.expired <- struct{}{}:
	default:
	}
}

// onDeadline handles the tenure deadline passing without a renewal.
func (e *election) onDeadline() {
	if e.t == nil || e.t.ended || e.t.ctx.Err() == nil {
		return
	}
	e.lose(e.expiredCause(e.t))
}

func (e *election) expiredCause(t *tenure) error {
	return fmt.Errorf("%w: no renewal succeeded since %v ago", ErrLeaseExpired, time.Since(t.lastSent).Round(time.Millisecond))
}

// endTenure cancels the tenure ctx and queues OnLoseLeadership.
func (e *election) endTenure() {
	t := e.t
	if t.ended {
		return
	}
	t.ended = true
	t.timer.Stop()
	e.view.mu.Lock()
	t.cancel()
	e.view.tenureCtx, e.view.tenureCancel = nil, nil
	e.view.mu.Unlock()
	e.lastEpoch = t.epoch
	e.queueLose(t)
}

// queueLose queues OnLoseLeadership for t, once. sync.Once makes a second
// caller wait until the first has queued it, so no hook of a later tenure
// can be queued ahead of it.
func (e *election) queueLose(t *tenure) {
	t.loseOnce.Do(func() {
		e.cfg.Metrics.ObserveLeadership(false, t.epoch)
		timeout := e.cfg.DrainTimeout
		e.disp.enqueue(hookCall{name: "OnLoseLeadership", started: t.loseStarted, done: t.loseDone, fn: func() error {
			ctx, cancel := context.WithTimeout(e.hookCtx, timeout)
			defer cancel()
			return e.hooks.OnLoseLeadership(ctx)
		}})
	})
}

// lose ends the tenure involuntarily: the lease is no longer ours to renew.
func (e *election) lose(cause error) {
	if e.t == nil {
		return
	}
	e.log.Warn("lost leadership", "epoch", e.t.epoch, "cause", cause)
	e.endTenure()
	e.t = nil
	if e.drain != nil {
		e.finishDrain(nil)
	}
}

// tenureDeadline is when the live tenure ends; zero while draining, when
// the tenure has already ended and the lease is kept only to release it.
func (e *election) tenureDeadline() time.Time {
	if e.t.ended {
		return time.Time{}
	}
	e.view.mu.RLock()
	defer e.view.mu.RUnlock()
	return e.view.deadline
}

// renew proves tenure with a CAS on the revision we last wrote, and
// reports whether that CAS succeeded.
func (e *election) renew() bool {
	t := e.t
	sent := time.Now()
	e.view.renewalStarted()
	ctx, cancel := e.renewalCtx(e.tenureDeadline())
	rev, err := e.store.renew(ctx, leaseKey, e.heldRecord(t.epoch, t.acquiredAt, sent), t.rev)
	// A state write checked on the lease was in flight: the server did not
	// compare revisions. New ones wait for this renewal; ask again at once.
	for attempt := 1; inFlightRefusal(err) && pause(ctx, attempt) == nil; attempt++ {
		rev, err = e.store.renew(ctx, leaseKey, e.heldRecord(t.epoch, t.acquiredAt, sent), t.rev)
	}
	cancel()
	e.view.renewalEnded()
	e.cfg.Metrics.ObserveRenewal(renewalOutcome(err), time.Since(sent))
	switch {
	case err == nil:
		e.setTenureRev(rev)
		e.extend(sent)
		return true
	case classify(err) == classConflict:
		e.resolveConflict()
	case classify(err) == classPermanent:
		e.fail(err)
	default:
		t.failures++
		t.renewDue = time.Now().Add(backoff(t.failures, 20*time.Millisecond, e.cfg.RenewInterval/2))
		e.log.Warn("renewal failed; retrying until the lease deadline", "error", err, "failures", t.failures)
	}
	return false
}

// renewalCtx bounds one renewal attempt by RequestTimeout and by half the
// time left before the tenure deadline (none while draining). A write sent
// while the bucket's stream has no leader is dropped, not queued, so an
// attempt that waits out the whole remainder could never be answered; with
// halves, attempts go on until the deadline, and one sent after the stream
// has a new leader can still renew.
func (e *election) renewalCtx(deadline time.Time) (context.Context, context.CancelFunc) {
	if deadline.IsZero() {
		return e.requestCtx(deadline)
	}
	left := time.Until(deadline)
	if left > 2*minAttempt {
		deadline = time.Now().Add(left / 2)
	}
	return e.requestCtx(deadline)
}

// minAttempt is the shortest renewal attempt renewalCtx makes; below twice
// that, the last attempt gets all the time that is left.
const minAttempt = 5 * time.Millisecond

func renewalOutcome(err error) RenewalOutcome {
	switch {
	case err == nil:
		return RenewalOK
	case classify(err) == classConflict:
		return RenewalConflict
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, nats.ErrTimeout):
		return RenewalTimeout
	}
	return RenewalError
}

// resolveConflict handles a renewal whose revision no longer matches. Our
// own timed-out write may have landed: if the record is still ours, adopt
// its revision. A read no newer than our tenure is a stale replica, unless
// the bucket is a new one; an absent key was removed under us.
func (e *election) resolveConflict() {
	t := e.t
	ctx, cancel := e.requestCtx(e.tenureDeadline())
	ent, err := e.store.get(ctx, leaseKey)
	cancel()
	if err != nil && !errors.Is(err, jetstream.ErrKeyNotFound) {
		if classify(err) == classPermanent {
			e.fail(err)
			return
		}
		t.renewDue = time.Now().Add(e.cfg.RenewInterval / 4)
		return
	}
	if ent == nil || ent.Revision() <= t.rev {
		e.leaseGoneUnder(ent != nil)
		return
	}
	if ent.Operation() == jetstream.KeyValuePut {
		if l, derr := decodeLease(ent.Value(), ent.Revision()); derr == nil && l.NodeID == e.cfg.NodeID && l.Epoch == t.epoch {
			e.setTenureRev(ent.Revision())
			t.renewDue = time.Now()
			return
		}
	}
	e.lose(fmt.Errorf("%w: the lease changed under us", ErrEpochMismatch))
}

// leaseGoneUnder handles a renewal conflict whose read shows no newer
// record: the key is absent, or older than our tenure. The stream's
// identity tells a bucket deleted and created again from a stale replica.
// The leader that finds its key removed (compacted, or in a new bucket)
// ends its tenure and at once writes its epoch back as a released record:
// it led until now, so nobody else did, and the next tenure's epoch will be
// above its own.
func (e *election) leaseGoneUnder(present bool) {
	t := e.t
	ctx, cancel := e.requestCtx(e.tenureDeadline())
	recreated, lastSeq, err := e.store.incarnation(ctx)
	cancel()
	if err != nil {
		if classify(err) == classPermanent {
			e.fail(err)
			return
		}
		t.renewDue = time.Now().Add(e.cfg.RenewInterval / 4)
		return
	}
	e.revFloor = max(e.revFloor, lastSeq)
	if present && !recreated {
		t.renewDue = time.Now().Add(e.cfg.RenewInterval / 4) // stale replica
		return
	}
	cause := fmt.Errorf("%w: the lease key was removed", ErrEpochMismatch)
	if recreated {
		cause = fmt.Errorf("%w: %w", ErrEpochMismatch, errBucketRecreated)
	}
	e.lose(cause)
	if recreated {
		e.log.Warn("the bucket was deleted and created again; following the new one", "bucket", e.store.bucket)
		e.restartWatch()
	}
	e.cur = observed{present: present, firstSeen: time.Now()}
	if !present {
		e.seed()
	}
}

// release writes the released record, keeping the epoch, after a drain.
func (e *election) release() {
	t := e.t
	var next string
	if e.drain != nil {
		next = e.drain.next
	}
	data := e.releasedRecord(t.epoch, t.acquiredAt, next)
	var err error
	for attempt := 1; attempt <= 3; attempt++ {
		ctx, cancel := e.requestCtx(time.Time{})
		_, err = e.store.update(ctx, leaseKey, data, t.rev)
		cancel()
		if err == nil || classify(err) != classTransient {
			break
		}
	}
	if err != nil {
		e.log.Warn("could not release the lease; followers take over when it expires", "epoch", t.epoch, "error", err)
	} else {
		e.log.Info("released the lease", "epoch", t.epoch)
	}
	e.endTenure()
	e.t = nil
	e.finishDrain(err)
}

// releaseStale releases a lease this node holds on paper only.
func (e *election) releaseStale() {
	ctx, cancel := e.requestCtx(time.Time{})
	_, err := e.store.update(ctx, leaseKey, e.releasedRecord(e.cur.lease.Epoch, e.cur.lease.AcquiredAt, ""), e.cur.rev)
	cancel()
	if err != nil {
		if classify(err) == classPermanent {
			e.fail(err)
			return
		}
		e.waitFor(e.cur.rev)
	}
	e.lastEpoch = 0
}

// finishDrain completes a StepDown or Stop.
func (e *election) finishDrain(err error) {
	d := e.drain
	if d == nil {
		return
	}
	e.drain = nil
	if d.stepDown {
		e.cooldownUntil = time.Now().Add(e.cfg.Cooldown)
		ctx, cancel := e.requestCtx(time.Time{})
		if cerr := e.store.putCooldown(ctx, e.cfg.NodeID, e.cfg.Cooldown); cerr != nil {
			e.log.Debug("could not record the cooldown key", "error", cerr)
		}
		cancel()
	}
	if d.done != nil {
		d.done(err)
	}
}

func (e *election) beginDrain(stepDown bool, next string, done func(error)) {
	e.drain = &drain{hookStarted: e.t.loseStarted, hookDone: e.t.loseDone, stepDown: stepDown, next: next, done: done}
	e.log.Info("stepping down", "epoch", e.t.epoch, "step_down", stepDown, "next", next)
	e.endTenure()
}
