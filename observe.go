package cluster

// Observing the lease: the watch, the reads that back it up, and what a
// node concludes when the key or its bucket changes out of band.

import (
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// observe records a lease entry from the watch (or a resync read).
func (e *election) observe(ent jetstream.KeyValueEntry) {
	rev := ent.Revision()
	if e.cur.present && rev < e.cur.rev && !e.recreatedUnder() {
		return // an older entry: a stale read, nothing new
	}
	if rev != e.cur.rev || !e.cur.present {
		e.cur = e.decode(ent)
		e.observations++
		if e.waiting && rev > e.waitAbove {
			e.waiting = false
		}
	}
	if p := e.pending; p != nil && rev > p.above {
		e.pending = nil
		if e.t == nil && e.cur.valid && e.cur.lease.NodeID == e.cfg.NodeID && e.cur.lease.Epoch == p.epoch {
			e.landed(p, rev)
			return
		}
	}
	if t := e.t; t != nil && rev > t.rev {
		if e.cur.valid && e.cur.lease.NodeID == e.cfg.NodeID && e.cur.lease.Epoch == t.epoch {
			e.setTenureRev(rev) // our own write that we did not hear back about
			return
		}
		e.lose(fmt.Errorf("%w: revision %d is not ours", ErrEpochMismatch, rev))
	}
}

// decode turns an entry into what this node saw, and remembers the highest
// epoch and the longest TTL any record carried.
func (e *election) decode(ent jetstream.KeyValueEntry) observed {
	rev := ent.Revision()
	o := observed{present: true, rev: rev, firstSeen: time.Now()}
	if ent.Operation() != jetstream.KeyValuePut {
		e.log.Warn("lease key was deleted; treating it as held by an unknown node", "revision", rev, "operation", ent.Operation().String())
		return o
	}
	l, err := decodeLease(ent.Value(), rev)
	if err != nil {
		e.log.Warn("lease value is not a lease record; treating it as held by an unknown node", "revision", rev, "error", err)
		return o
	}
	o.lease, o.valid = l, true
	if l.NodeID == "" && !l.Floor {
		nothingBefore := !e.cur.present && e.cur.firstSeen.IsZero()
		o.handedBack = !nothingBefore && e.cur.valid && e.cur.lease.Epoch == l.Epoch
		o.firstSight = nothingBefore
	}
	e.maxEpoch = max(e.maxEpoch, l.Epoch)
	e.maxTTL = max(e.maxTTL, l.ttl())
	return o
}

// resync reads the lease when the watch has not shown what a failed write
// implies: the record that beat us, or that the key is gone.
func (e *election) resync() {
	e.resyncAt = time.Now().Add(e.cfg.RenewInterval)
	ctx, cancel := e.requestCtx(time.Time{})
	ent, err := e.store.get(ctx, leaseKey)
	cancel()
	switch {
	case errors.Is(err, jetstream.ErrKeyNotFound):
		if e.cur.present {
			e.vanished()
		}
	case err != nil:
		if classify(err) == classPermanent {
			e.fail(err)
		}
	default:
		e.observe(ent)
	}
}

// vanished handles a lease key found absent where this node saw an entry:
// purged and compacted, or its bucket deleted and created again (the
// stream's identity tells which). Whoever held it may still be running,
// cut off, so the absent key is a new observation: the takeover wait
// starts again from now.
func (e *election) vanished() {
	ctx, cancel := e.requestCtx(time.Time{})
	recreated, lastSeq, err := e.store.incarnation(ctx)
	cancel()
	if err != nil {
		if classify(err) == classPermanent {
			e.fail(err)
		}
		return // asked again at the next resync
	}
	if recreated {
		e.followNewBucket(lastSeq)
		return
	}
	e.revFloor = max(e.revFloor, lastSeq)
	e.log.Warn("the lease key was removed (purged and compacted); waiting before writing it again")
	e.cur = observed{firstSeen: time.Now()}
	e.waiting = false
}

// followNewBucket moves a follower to a bucket found deleted and created
// again: the watch follows the new stream, and what the node saw in the
// old one is forgotten (not the epoch or TTL it remembers): the key is
// taken as absent from now, and waited out as such.
func (e *election) followNewBucket(lastSeq uint64) {
	e.revFloor = max(e.revFloor, lastSeq)
	e.goneSince, e.goneCheckAt = time.Time{}, time.Time{}
	e.log.Warn("the bucket was deleted and created again; following the new one", "bucket", e.store.bucket)
	e.restartWatch()
	e.cur = observed{firstSeen: time.Now()}
	e.waiting = false
}

// recreatedUnder asks the server whether the bucket is a new one, after
// an entry older than the one seen. If so, the node forgets what it saw
// in the old bucket (but not the epoch or TTL it remembers) and the watch
// follows the new one.
func (e *election) recreatedUnder() bool {
	ctx, cancel := e.requestCtx(time.Time{})
	recreated, lastSeq, err := e.store.incarnation(ctx)
	cancel()
	if err != nil || !recreated {
		return false
	}
	e.revFloor = max(e.revFloor, lastSeq)
	e.log.Warn("the bucket was deleted and created again; following the new one", "bucket", e.store.bucket)
	if t := e.t; t != nil {
		e.lose(fmt.Errorf("%w: %w", ErrEpochMismatch, errBucketRecreated))
	}
	e.cur = observed{}
	e.waiting = false
	return true
}

// restartWatch replaces the watch: after its channel closed, or to follow
// a bucket created anew. One attempt: on failure step schedules the next,
// so renewals go on meanwhile.
func (e *election) restartWatch() {
	e.stopWatch()
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

// stopWatch drops the watch without waiting for the network: the clean-up
// goes on in the background, counted in e.cleanup for teardown.
func (e *election) stopWatch() {
	if e.watcher == nil {
		return
	}
	e.watcher.Stop(&e.cleanup)
	e.watcher = nil
	e.synced = false
}

// confirmHandBack reads the key's history for a release that was the first
// thing this node saw (a restart of the whole cluster finds its last
// leader's release there): it is taken at once only if the record just
// before it is a held record at the same epoch, which it hands back. A
// release forged over a live holder, or one whose history the bucket does
// not keep, is waited out like a held lease (rule 27 in docs/design.md).
func (e *election) confirmHandBack() {
	e.cur.firstSight = false
	ctx, cancel := e.requestCtx(time.Time{})
	entries, err := e.store.history(ctx, leaseKey, &e.cleanup)
	cancel()
	if err != nil {
		if classify(err) == classPermanent {
			e.fail(err)
		}
		return // waited out
	}
	for i := len(entries) - 1; i > 0; i-- {
		if entries[i].Revision() != e.cur.rev {
			continue
		}
		prev := entries[i-1]
		if prev.Operation() != jetstream.KeyValuePut {
			return
		}
		l, derr := decodeLease(prev.Value(), prev.Revision())
		if derr == nil && l.NodeID != "" && l.Epoch == e.cur.lease.Epoch {
			e.cur.handedBack = true
			e.maxTTL = max(e.maxTTL, l.ttl())
		}
		return
	}
}
