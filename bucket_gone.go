package cluster

// A deleted bucket: the node keeps running, and its memory of the epoch,
// for as long as it runs, leading nothing, until the bucket exists again.

import (
	"errors"
	"fmt"
	"time"
)

// bucketGoneReport is how often a node whose bucket is gone says so again.
const bucketGoneReport = time.Minute

// bucketDeleted handles ErrBucketDeleted from any request: the tenure ends
// (nothing can be renewed), the watch goes, and the node looks for the
// bucket every RenewInterval (stepBucketGone). It does not stop: its
// memory of the epoch is what carries the epoch into a bucket created
// again. Nodes that stopped after a grace of 5s, and were started again by
// their supervisor with no memory, began a new bucket at epoch 1 (rule 29
// in docs/design.md).
func (e *election) bucketDeleted(err error) {
	now := time.Now()
	switch {
	case e.goneSince.IsZero():
		e.goneSince, e.goneReported = now, now
		e.log.Warn("the bucket was deleted; waiting for it to be created again, leading nothing", "bucket", e.store.bucket, "error", err)
	case now.Sub(e.goneReported) >= bucketGoneReport:
		e.goneReported = now
		e.log.Error("the bucket is still deleted; waiting for it, leading nothing (Stop the node to give up)",
			"bucket", e.store.bucket, "gone_for", now.Sub(e.goneSince).Round(time.Second))
	}
	if e.t != nil {
		e.lose(fmt.Errorf("%w: %w", ErrEpochMismatch, err))
	}
	e.stopWatch()
	e.watchAt = time.Time{}
	e.goneCheckAt = now.Add(e.cfg.RenewInterval)
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
		e.bucketDeleted(err)
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
