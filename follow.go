package cluster

// The follower's side of the election: watching the lease, judging expiry
// on this node's clock, and campaigning.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// observed is a lease entry as this node saw it.
type observed struct {
	present   bool   // some entry exists (delete and purge markers count)
	rev       uint64 // its revision
	lease     Lease  // decoded record, when valid
	valid     bool   // decoded as a lease record (not garbage, not a marker)
	firstSeen time.Time
	expired   bool // unchanged for LeaseTTL on this node's clock
}

func (o observed) released() bool { return o.valid && o.lease.NodeID == "" }

// stepFollowing judges expiry and campaigns when the lease is free.
func (e *election) stepFollowing(now time.Time) (time.Time, bool) {
	if !e.synced {
		return time.Time{}, false
	}
	if r := e.store.nc.Stats().Reconnects; r != e.reconnects {
		// What we saw before the reconnect may be old news; count the
		// lease's age again from now. Waiting longer is always safe.
		e.reconnects = r
		e.cur.firstSeen = now
		e.cur.expired = false
		e.stableSince = now
	}
	if e.stableSince.IsZero() {
		e.stableSince = now
	}
	var expiry time.Time
	if e.cur.present && !e.cur.released() && !e.cur.expired {
		expiry = e.cur.firstSeen.Add(max(e.cfg.LeaseTTL, e.cur.lease.ttl()))
		if !now.Before(expiry) {
			if !e.store.nc.IsConnected() {
				// Not seeing renewals is not the lease expiring.
				return now.Add(e.cfg.RenewInterval), false
			}
			e.cur.expired = true
			e.log.Info("lease expired on this node's clock", "holder", e.cur.lease.NodeID, "revision", e.cur.rev)
			return time.Time{}, true
		}
	}
	if !e.campaign || e.err != nil || !e.healthy() {
		return expiry, false
	}
	namedNext := e.cur.released() && e.cur.lease.Next == e.cfg.NodeID
	if now.Before(e.cooldownUntil) && !namedNext {
		// An explicit handover to this node overrides its cooldown.
		return earliest(expiry, e.cooldownUntil), false
	}
	if e.cur.released() && e.cur.lease.Next != "" && e.cur.lease.Next != e.cfg.NodeID {
		// Handed over to another node: give it the first chance.
		if until := e.cur.firstSeen.Add(e.handoverWindow()); now.Before(until) {
			return until, false
		}
	}
	if e.waiting && e.cur.rev <= e.waitAbove {
		// We lost a race at this revision; the winner's record is on its way.
		if !now.Before(e.resyncAt) {
			e.resync()
			return time.Time{}, true
		}
		return earliest(expiry, e.resyncAt), false
	}
	if now.Before(e.retryAt) {
		return earliest(expiry, e.retryAt), false
	}
	switch {
	case !e.cur.present:
		e.acquire(0)
	case e.cur.released() || e.cur.expired:
		e.acquire(e.cur.rev)
	case e.lastEpoch > 0 && e.cur.valid && e.cur.lease.NodeID == e.cfg.NodeID && e.cur.lease.Epoch == e.lastEpoch:
		// Our own lease from a tenure that has ended in this process (a
		// renewal landed after the deadline): give it back at once.
		e.releaseStale()
	default:
		return earliest(expiry, e.askToLead(now)), false
	}
	return time.Time{}, true
}

// handoverWindow is how long, after a release naming a successor, other
// nodes leave the lease to it.
func (e *election) handoverWindow() time.Duration { return e.cfg.RenewInterval }

// askToLead asks a leader of lower priority to hand over, when this node
// has been connected, healthy and following for a full LeaseTTL, at most
// once per LeaseTTL. It returns when to look again (zero: never).
func (e *election) askToLead(now time.Time) time.Time {
	holder := e.cur.lease
	if e.cfg.Priority == 0 || !e.cur.valid || holder.NodeID == "" || holder.NodeID == e.cfg.NodeID || e.cfg.Priority <= holder.Priority {
		return time.Time{}
	}
	ready := earliest(e.stableSince.Add(e.cfg.LeaseTTL))
	if !e.askedAt.IsZero() {
		ready = laterOf(ready, e.askedAt.Add(e.cfg.LeaseTTL))
	}
	if now.Before(ready) {
		return ready
	}
	e.askedAt = now
	data, _ := json.Marshal(StepDownRequest{To: e.cfg.NodeID, Reason: reasonPriority, Priority: e.cfg.Priority})
	if err := e.store.nc.Publish(NodeControlSubject(e.cfg.ClusterID, holder.NodeID), data); err != nil {
		e.log.Debug("could not ask the leader to yield", "error", err)
	}
	e.log.Info("asked the leader to hand over: this node has a higher priority", "leader", holder.NodeID, "leader_priority", holder.Priority, "priority", e.cfg.Priority)
	return now.Add(e.cfg.LeaseTTL)
}

func laterOf(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// nextEpoch is the epoch of a new tenure: one more than the highest this
// node has seen. The KV revision of a record is at least the epoch of every
// record written before it (each acquisition is a write), so it is a floor
// where this node's memory is no help: after garbage or a deleted key, and
// when the record is the first one this node has ever seen (a restored or
// forged record with a low epoch must not turn the epoch back). Between
// running nodes the epoch grows by exactly one.
func (e *election) nextEpoch() int64 {
	next := e.maxEpoch + 1
	if e.cur.valid {
		next = max(next, e.cur.lease.Epoch+1)
	}
	if e.cur.present && (!e.cur.valid || e.observations <= 1) {
		next = max(next, int64(e.cur.rev))
	}
	return next
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
	epoch := e.nextEpoch()
	sent := time.Now()
	data := e.heldRecord(epoch, sent, sent)
	ctx, cancel := e.requestCtx(time.Time{})
	var newRev uint64
	var err error
	if rev == 0 {
		newRev, err = e.store.create(ctx, leaseKey, data)
	} else {
		newRev, err = e.store.update(ctx, leaseKey, data, rev)
	}
	cancel()
	switch {
	case err == nil:
		e.failures, e.retryAt = 0, time.Time{}
		cause, wait := ElectionCreated, time.Duration(0)
		switch {
		case rev != 0 && e.cur.released():
			cause, wait = ElectionReleased, sent.Sub(e.cur.firstSeen)
		case rev != 0:
			cause, wait = ElectionExpired, sent.Sub(e.cur.firstSeen)
		}
		e.cfg.Observer.ObserveElection(cause, wait)
		e.become(epoch, newRev, sent)
	case classify(err) == classConflict:
		e.log.Debug("lost the race for the lease", "revision", rev)
		e.waitFor(max(rev, e.cur.rev))
		e.failures = 0
	case classify(err) == classPermanent:
		e.fail(err)
	default:
		e.failures++
		e.retryAt = time.Now().Add(backoff(e.failures, 50*time.Millisecond, e.cfg.RenewInterval))
		e.log.Warn("campaign failed, will retry", "error", err, "retry_in", time.Until(e.retryAt).Round(time.Millisecond))
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

// resync reads the lease when the watch has not shown the record that beat us.
func (e *election) resync() {
	e.resyncAt = time.Now().Add(e.cfg.RenewInterval)
	ctx, cancel := e.requestCtx(time.Time{})
	ent, err := e.store.get(ctx, leaseKey)
	cancel()
	if err != nil {
		if classify(err) == classPermanent && !errors.Is(err, jetstream.ErrKeyNotFound) {
			e.fail(err)
		}
		return
	}
	if ent.Revision() > e.cur.rev {
		e.observe(ent)
	}
}

// observe records a lease entry from the watch (or a resync read).
func (e *election) observe(ent jetstream.KeyValueEntry) {
	rev := ent.Revision()
	if e.cur.present && rev < e.cur.rev {
		return
	}
	if rev != e.cur.rev || !e.cur.present {
		o := observed{present: true, rev: rev, firstSeen: time.Now()}
		e.observations++
		if ent.Operation() == jetstream.KeyValuePut {
			if l, err := decodeLease(ent.Value(), rev); err == nil {
				o.lease, o.valid = l, true
				e.maxEpoch = max(e.maxEpoch, l.Epoch)
			} else {
				e.log.Warn("lease value is not a lease record; treating it as held by an unknown node", "revision", rev, "error", err)
			}
		} else {
			e.log.Warn("lease key was deleted; treating it as held by an unknown node", "revision", rev, "operation", ent.Operation().String())
		}
		e.cur = o
		if e.waiting && rev > e.waitAbove {
			e.waiting = false
		}
	}
	if t := e.t; t != nil && rev > t.rev {
		if e.cur.valid && e.cur.lease.NodeID == e.cfg.NodeID && e.cur.lease.Epoch == t.epoch {
			t.rev = rev // our own write that we did not hear back about
			return
		}
		e.lose(fmt.Errorf("%w: revision %d is not ours", ErrEpochMismatch, rev))
	}
}

// restartWatch replaces a watcher whose channel closed. One attempt: on
// failure step schedules the next, so renewals go on meanwhile.
func (e *election) restartWatch() {
	if e.watcher != nil {
		_ = e.watcher.Stop()
		e.watcher = nil
		e.synced = false
	}
	w, err := e.store.watch(e.base, e.cfg.RequestTimeout)
	if err == nil {
		e.watcher, e.watchAt = w, time.Time{}
		return
	}
	if classify(err) == classPermanent {
		e.fail(err)
		return
	}
	e.watchAt = time.Now().Add(backoff(2, 50*time.Millisecond, e.cfg.RenewInterval))
	e.log.Warn("lease watch failed; retrying", "error", err)
}
