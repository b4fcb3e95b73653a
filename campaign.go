package cluster

// Campaigning: the writes a follower makes to take the lease, and the
// epoch a new tenure gets.

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// historyFloor reads the revisions the bucket keeps of the lease key and
// remembers the highest epoch and longest TTL among their records. The
// record on the key now may be garbage or a marker, and this node may have
// missed records while its watch was down or before it started; the
// revision floor of nextEpoch does not hold in a bucket created again with
// the epoch carried into it. Taking over anything but a handed-back
// release reads it first.
func (e *election) historyFloor() error {
	ctx, cancel := e.requestCtx(time.Time{})
	defer cancel()
	entries, err := e.store.history(ctx, leaseKey, &e.cleanup)
	if err != nil {
		return err
	}
	for _, ent := range entries {
		if ent.Operation() != jetstream.KeyValuePut {
			continue
		}
		if l, derr := decodeLease(ent.Value(), ent.Revision()); derr == nil {
			e.maxEpoch = max(e.maxEpoch, l.Epoch)
			e.maxTTL = max(e.maxTTL, l.ttl())
		}
	}
	return nil
}

// takeOver acquires a lease that expired on this node's clock, or an
// absent key, after reading the key's history for the epoch floor.
func (e *election) takeOver(rev uint64) {
	if e.bucketRecreated() {
		return
	}
	if err := e.historyFloor(); err != nil {
		if classify(err) == classPermanent {
			e.fail(err)
			return
		}
		e.failures++
		e.retryAt = time.Now().Add(backoff(e.failures, 50*time.Millisecond, e.cfg.RenewInterval))
		e.log.Warn("could not read the lease's history; will retry", "error", err)
		return
	}
	// The history may show a holder with a longer TTL than this node knew
	// (it started after that holder's last record was overwritten): if
	// the lease is not over by that TTL, wait it out first.
	e.cur.expired = false
	if until := e.holdUntil(); time.Now().Before(until) {
		e.log.Info("the lease's history shows a longer TTL; waiting it out", "ttl", e.takeoverWait(), "until", time.Until(until).Round(time.Millisecond))
		return
	}
	e.cur.expired = true
	e.acquire(rev)
}

// bucketRecreated checks, before a compare-and-swap on a revision seen a
// while ago, that the bucket is still the one it was seen in. Revisions
// restart at 1 in a bucket created again, so a revision judged expired in
// the old one can name a live record of a node that started on the new
// one, and the CAS would succeed over it (rule 21). It reports true when
// this node must not write now: the bucket is new (the node follows it,
// with the wait of an absent key starting now), or the check failed.
func (e *election) bucketRecreated() bool {
	ctx, cancel := e.requestCtx(time.Time{})
	recreated, lastSeq, err := e.store.incarnation(ctx)
	cancel()
	switch {
	case err != nil && classify(err) == classPermanent:
		e.fail(err)
		return true
	case err != nil:
		e.failures++
		e.retryAt = time.Now().Add(backoff(e.failures, 50*time.Millisecond, e.cfg.RenewInterval))
		return true
	case !recreated:
		// Something was written since this node opened the bucket, even
		// if its watch never showed it (written and compacted): the
		// bucket is no longer an empty one (holdUntil).
		e.revFloor = max(e.revFloor, lastSeq)
		return false
	}
	e.followNewBucket(lastSeq)
	return true
}

// pendingAcquire is an acquire whose outcome is unknown: the request timed
// out, but the write may have landed. If the watch (or a read) shows this
// node's record at this epoch, it landed, and the tenure counts from sent.
type pendingAcquire struct {
	epoch int64
	sent  time.Time
	above uint64 // the revision it was written over (0 for a create)
}

// nextEpoch is the epoch of a new tenure: one more than the highest this
// node knows was handed out. The KV revision of a record is at least the
// epoch of every record written before it (each acquisition is a write),
// so it is a floor where this node's memory is no help: after garbage or a
// deleted key, when the record is the first one this node has ever seen (a
// restored or forged record with a low epoch must not turn the epoch back),
// over a floor record (written by a node whose memory may be below what a
// compaction removed while the nodes that knew more were cut off: rule
// 31), and, for an absent key, the stream's last sequence. Between running
// nodes the epoch grows by exactly one. It never wraps: past math.MaxInt64
// there is no epoch left, and ErrEpochExhausted says so.
func (e *election) nextEpoch() (int64, error) {
	floor := e.maxEpoch
	if e.cur.valid {
		floor = max(floor, e.cur.lease.Epoch)
	}
	switch {
	case e.cur.present && (!e.cur.valid || e.observations <= 1 || e.cur.lease.Floor):
		floor = max(floor, revisionEpoch(e.cur.rev)-1)
	case !e.cur.present:
		floor = max(floor, revisionEpoch(e.revFloor))
	}
	return epochAfter(floor)
}

// epochAfter is the epoch that follows floor, or ErrEpochExhausted.
func epochAfter(floor int64) (int64, error) {
	if floor == math.MaxInt64 {
		return 0, fmt.Errorf("%w: epoch %d cannot grow", ErrEpochExhausted, floor)
	}
	return max(floor, 0) + 1, nil
}

// revisionEpoch converts a revision to an epoch, saturating: revisions are
// unsigned, epochs are not.
func revisionEpoch(rev uint64) int64 {
	if rev > math.MaxInt64 {
		return math.MaxInt64
	}
	return int64(rev)
}

func (e *election) requestCtx(deadline time.Time) (context.Context, context.CancelFunc) {
	d := time.Now().Add(e.cfg.RequestTimeout)
	if !deadline.IsZero() && deadline.Before(d) {
		d = deadline
	}
	return context.WithDeadline(e.base, d)
}

// acquire tries to take the lease: Create when absent, else CAS on rev.
func (e *election) acquire(rev uint64) {
	epoch, err := e.nextEpoch()
	if err != nil {
		e.fail(fmt.Errorf("acquire: %w", err))
		return
	}
	sent := time.Now()
	data := e.heldRecord(epoch, sent, sent)
	ctx, cancel := e.requestCtx(time.Time{})
	var newRev uint64
	if rev == 0 {
		newRev, err = e.store.create(ctx, leaseKey, data)
	} else {
		newRev, err = e.store.update(ctx, leaseKey, data, rev)
	}
	cancel()
	switch {
	case err == nil:
		if p := e.pending; p != nil && p.epoch == epoch && p.sent.Before(sent) {
			sent = p.sent // conservative: count from the first attempt at this epoch
		}
		e.failures, e.retryAt, e.pending = 0, time.Time{}, nil
		e.cfg.Metrics.ObserveElection(e.electionCause(rev), e.electionWait(rev, sent))
		e.become(epoch, newRev, sent)
	case classify(err) == classConflict:
		e.log.Debug("lost the race for the lease", "revision", rev)
		e.waitFor(max(rev, e.cur.rev))
		if !e.cur.released() {
			// Not a race for a released lease, whose winner the watch shows
			// in a moment: the key changed in a way the watch may not show
			// (compacted, or its bucket recreated). Read it now.
			e.resyncAt = time.Now()
		}
		e.failures = 0
	case classify(err) == classPermanent:
		e.fail(err)
	default:
		// The write may still land: remember it, so that this node leads
		// if its own record shows up rather than wait it out as a stranger's.
		p := &pendingAcquire{epoch: epoch, sent: sent, above: max(rev, e.cur.rev)}
		if old := e.pending; old != nil && old.epoch == epoch {
			// A retry at the same epoch: whichever attempt lands, the
			// tenure counts from the first one sent, which the other
			// nodes may have been waiting out since it landed (found by
			// the simulator, seed 320).
			p.sent, p.above = old.sent, min(old.above, p.above)
		}
		e.pending = p
		e.failures++
		e.retryAt = time.Now().Add(backoff(e.failures, 50*time.Millisecond, e.cfg.RenewInterval))
		e.log.Warn("campaign failed, will retry", "error", err, "retry_in", time.Until(e.retryAt).Round(time.Millisecond))
	}
}

func (e *election) electionCause(rev uint64) ElectionCause {
	switch {
	case rev != 0 && e.cur.released():
		return ElectionReleased
	case rev != 0:
		return ElectionExpired
	}
	return ElectionCreated
}

func (e *election) electionWait(rev uint64, sent time.Time) time.Duration {
	if rev == 0 {
		return 0
	}
	return sent.Sub(e.cur.firstSeen)
}

// landed handles this node's own record showing up after an acquire whose
// outcome was unknown: lead from the send time if the tenure has time
// left, otherwise give the lease back as a stale one.
func (e *election) landed(p *pendingAcquire, rev uint64) {
	e.failures, e.retryAt = 0, time.Time{}
	if !time.Now().Before(e.deadline(p.sent)) {
		e.log.Info("an acquire landed too late to lead; releasing it", "epoch", p.epoch, "revision", rev)
		e.lastEpoch = p.epoch
		return
	}
	e.log.Info("an acquire that timed out had landed", "epoch", p.epoch, "revision", rev)
	e.cfg.Metrics.ObserveElection(ElectionExpired, time.Since(p.sent))
	e.become(p.epoch, rev, p.sent)
}

// seed writes a floor record (released, at the highest epoch this node has
// seen) into an absent key, so that the next tenure's epoch is above it
// even if a node without that memory wins. A floor record is never taken
// as a hand-back (observed.handedBack): it is waited out like a held
// lease, so writing it grants nobody anything and needs no wait of its
// own. Create never overwrites anything.
func (e *election) seed() {
	ctx, cancel := e.requestCtx(time.Time{})
	now := time.Now()
	// It carries the longest TTL this node knows too: a node that starts
	// now learns how long the last holder may still lead.
	floor := Lease{Epoch: e.maxEpoch, AcquiredAt: now.UTC(), ExpiresAt: now.UTC(), Floor: true,
		TTLMillis: e.takeoverWait().Milliseconds()}
	var err error
	var rev uint64
	if e.cur.present { // over a marker, garbage or a lower floor: compare and swap
		rev, err = e.store.update(ctx, leaseKey, mustEncode(floor), e.cur.rev)
	} else {
		rev, err = e.store.create(ctx, leaseKey, mustEncode(floor))
	}
	cancel()
	switch {
	case err == nil:
		// What the key holds now, before the watch says so: no second
		// floor over the value this one replaced.
		e.cur = observed{present: true, rev: rev, lease: floor, valid: true, firstSeen: time.Now()}
		e.observations++
		e.log.Info("wrote the epoch floor into the lease key", "epoch", e.maxEpoch, "over_revision", e.cur.rev)
	case classify(err) == classPermanent:
		e.fail(err)
	case classify(err) == classConflict:
		e.resync() // someone wrote it first: learn what
		e.retryAt = time.Now().Add(backoff(1, 50*time.Millisecond, e.cfg.RenewInterval))
	default:
		e.failures++
		e.retryAt = time.Now().Add(backoff(e.failures, 50*time.Millisecond, e.cfg.RenewInterval))
	}
}

// backoff is capped exponential backoff with full jitter over its upper half.
func backoff(attempt int, base, limit time.Duration) time.Duration {
	d := base << min(attempt-1, 16)
	if d <= 0 || d > limit {
		d = limit
	}
	return d/2 + rand.N(d/2+1)
}

// waitFor stops campaigning until a revision above rev is seen.
func (e *election) waitFor(rev uint64) {
	e.waiting, e.waitAbove = true, rev
	e.resyncAt = time.Now().Add(e.cfg.RequestTimeout)
}
