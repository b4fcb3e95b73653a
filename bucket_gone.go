package cluster

// A deleted bucket: the node keeps running, and its memory of the epoch,
// for a grace period in which the bucket may be created again; only then
// does it stop with ErrBucketDeleted.

import (
	"errors"
	"fmt"
	"time"
)

// bucketGoneGrace is how long a node waits for its deleted bucket to be
// created again before it stops with ErrBucketDeleted: three takeover
// waits, at least 5s. A node that stopped at once took its memory of the
// epoch with it, and if every node that remembered did, the new bucket
// started again at epoch 1 (rule 29 in docs/design.md).
func (e *election) bucketGoneGrace() time.Duration {
	return max(3*e.takeoverWait(), 5*time.Second)
}

// bucketDeleted handles ErrBucketDeleted from any request: within the
// grace, the tenure ends (nothing can be renewed), the watch goes, and the
// node looks for the bucket every RenewInterval (stepBucketGone). It
// reports false once the grace has passed: the error is then permanent.
func (e *election) bucketDeleted(err error) bool {
	now := time.Now()
	if e.goneSince.IsZero() {
		e.goneSince = now
		e.log.Warn("the bucket was deleted; waiting for it to be created again", "bucket", e.store.bucket, "grace", e.bucketGoneGrace())
	}
	if now.Sub(e.goneSince) >= e.bucketGoneGrace() {
		return false
	}
	if e.t != nil {
		e.lose(fmt.Errorf("%w: %w", ErrEpochMismatch, err))
	}
	e.stopWatch()
	e.watchAt = time.Time{}
	e.goneCheckAt = now.Add(e.cfg.RenewInterval)
	return true
}

// stepBucketGone looks for the deleted bucket: once it exists again, the
// node follows it (and, remembering the epoch, writes its floor there).
func (e *election) stepBucketGone(now time.Time) (time.Time, bool) {
	if now.Before(e.goneCheckAt) {
		return e.goneCheckAt, false
	}
	ctx, cancel := e.requestCtx(time.Time{})
	recreated, lastSeq, err := e.store.incarnation(ctx)
	cancel()
	switch {
	case errors.Is(err, ErrBucketDeleted):
		if !e.bucketDeleted(err) {
			e.failNow(err)
		}
		return e.goneCheckAt, false
	case err != nil && classify(err) == classPermanent:
		e.failNow(err)
		return time.Time{}, false
	case err != nil:
		e.goneCheckAt = now.Add(e.cfg.RenewInterval)
		return e.goneCheckAt, false
	}
	e.goneSince, e.goneCheckAt = time.Time{}, time.Time{}
	if recreated {
		e.followNewBucket(lastSeq)
	} else {
		e.restartWatch() // not gone after all
	}
	return time.Time{}, true
}
