package chaos

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/ozanturksever/go-cluster/internal/bucketmeta"
	"github.com/ozanturksever/go-cluster/internal/store"
	"github.com/ozanturksever/go-cluster/internal/wire"
)

// Out-of-band faults change the bucket or the lease key behind the nodes'
// backs, as operators, tools and bugs do (docs/design.md §5, "Out-of-band
// changes and threats"): all in scope there. None of them may produce two
// leaders or an epoch that is not above every epoch handed out before.

// OutOfBand reports whether k changes the store behind the nodes' backs.
// Such faults are rate-limited by Options.OutOfBandGap: the nodes need a
// few LeaseTTLs to elect after one.
func (k FaultKind) OutOfBand() bool {
	switch k {
	case FaultGarbage, FaultBucketRecreate, FaultCompaction, FaultTTLGarbage:
		return true
	}
	return false
}

// outOfBandDue reports whether an out-of-band fault may be injected now:
// none while a long-ttl-garbage fault is under way.
func (r *run) outOfBandDue() bool {
	if r.ttlFault {
		return false
	}
	return r.lastOutOfBand.IsZero() || time.Since(r.lastOutOfBand) >= r.opts.OutOfBandGap
}

// bucket is the name of the cluster's KV bucket.
func (r *run) bucket() string { return wire.BucketName(r.opts.ClusterID) }

// bucketCeiling reads the ceiling of the bucket as it is now: its
// lease_ttl_max, or its lease_ttl if larger (docs/design.md §2.7).
func (r *run) bucketCeiling(ctx context.Context) (time.Duration, error) {
	s, err := r.js.Stream(ctx, "KV_"+r.bucket())
	if err != nil {
		return 0, err
	}
	meta, err := bucketmeta.Parse(s.CachedInfo().Config.Metadata)
	if err != nil {
		return 0, err
	}
	return max(meta.MaxTTL, meta.LeaseTTL), nil
}

// describeLease says what the lease key holds now, for the log.
func (r *run) describeLease(ctx context.Context) string {
	kv, err := r.js.KeyValue(ctx, r.bucket())
	if err != nil {
		return "bucket: " + err.Error()
	}
	e, err := kv.Get(ctx, wire.LeaseKey)
	switch {
	case errors.Is(err, jetstream.ErrKeyNotFound):
		return "absent"
	case err != nil:
		return err.Error()
	}
	v := string(e.Value())
	if len(v) > 120 {
		v = v[:120] + "..."
	}
	return fmt.Sprintf("rev %d %s", e.Revision(), v)
}

// injectRecreate deletes the bucket and creates it again as go-cluster
// would (createBucket), at once or a little later: its stream is new, its
// revisions from its first_seq, and its TTL its creator's, the shortest a
// member has, below the old incarnation's ceiling maybe: the members
// bucket's ceiling covers it (docs/design.md §2.7). Nodes that find the
// bucket gone meanwhile wait for it; a Start that races the deletion fails
// with ErrBucketDeleted (expected, see startDone) and is tried again, or
// creates the bucket itself with its own LeaseTTL. Half the time the
// stream's leader has its routes cut first, so that it is behind on the
// deletion when they heal (C4: it answers for the deleted stream).
func (r *run) injectRecreate() string {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ceiling, err := r.bucketCeiling(ctx)
	if err != nil {
		return fmt.Sprintf("bucket recreate: read %s: %v", r.bucket(), err)
	}
	behind := ""
	if r.chance(0.5) {
		behind = r.cutStreamLeader()
	}
	before := r.describeLease(ctx)
	err = r.js.DeleteKeyValue(ctx, r.bucket())
	r.deletions = append(r.deletions, time.Now()) // a delete that failed may have deleted it
	r.deletedAt = time.Now()
	if err != nil {
		// Its answer may be lost with the stream's leader cut off, the
		// stream deleted all the same (natstest's zombie test): create it
		// again later, as when the delete was answered.
		d := r.span(0.1, 1)
		r.later(d, "create bucket "+r.bucket()+" again", func() { r.recreateBucket(10) })
		return fmt.Sprintf("bucket recreate%s: delete %s (lease %s, ceiling %v): %v; created again in %v", behind, r.bucket(), before, ceiling, err, d)
	}
	r.lastRecreate = time.Now()
	if r.chance(0.5) {
		return fmt.Sprintf("bucket recreate%s: deleted %s (lease %s, ceiling %v) and created it again at once: %s",
			behind, r.bucket(), before, ceiling, errString(r.createBucket()))
	}
	d := r.span(0.1, 1)
	r.later(d, "create bucket "+r.bucket()+" again", func() { r.recreateBucket(10) })
	return fmt.Sprintf("bucket recreate%s: deleted %s (lease %s, ceiling %v); created again in %v", behind, r.bucket(), before, ceiling, d)
}

// cutStreamLeader cuts the routes of the bucket stream's leader to the
// other servers, when every server is up and no routes are cut, and heals
// them after a drawn time: long enough, half the time, for it to answer
// for the deleted stream once back. It says what it did, for the log.
func (r *run) cutStreamLeader() string {
	n := len(r.cluster.Servers())
	l := r.cluster.StreamLeader("$G", "KV_"+r.bucket())
	if r.routesCut || len(r.cluster.URLs()) < n || l < 0 {
		return ""
	}
	for j := range n {
		if j != l {
			r.cluster.CutRoutes(l, j)
		}
	}
	r.routesCut = true
	d := r.span(0.5, 3)
	if r.chance(0.5) {
		d = longPartitionMin + time.Duration(r.rng.Float64()*float64(longPartitionMax-longPartitionMin)).Round(time.Millisecond)
	}
	r.later(d, fmt.Sprintf("routes of n%d", l), func() { r.healRoutes() })
	return fmt.Sprintf(" while n%d, the stream's leader, is cut off for %v", l, d)
}

// minTTL is the shortest LeaseTTL a member is configured with.
func (r *run) minTTL() time.Duration {
	out := r.maxTTL
	for _, m := range r.members {
		out = min(out, m.ttl)
	}
	return out
}

// createBucket creates the bucket as go-cluster does (store.Create),
// with its creator's TTL: the shortest a member has. A node that started
// meanwhile may have made it already: that counts as done.
func (r *run) createBucket() error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, _, err := store.Create(ctx, r.js, r.opts.ClusterID, store.Options{Replicas: 3, LeaseTTL: r.minTTL()})
	r.lastRecreate = time.Now()
	if err == nil {
		r.deletedAt = time.Time{}
	}
	return err
}

// bucketAbsent says the bucket a recreate fault deleted has not been seen
// since: a Start must create it, and the JetStream cluster may refuse the
// placement (a server down: "no suitable peers") or not answer (its meta
// leader cut off), for longer than recentRecreate allows. The nodes that
// were running wait for the bucket meanwhile (docs/design.md §5.4).
func (r *run) bucketAbsent() bool {
	if r.deletedAt.IsZero() {
		return false
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if _, err := r.js.KeyValue(ctx, r.bucket()); err == nil {
		r.deletedAt = time.Time{}
		return false
	}
	return true
}

// recreateBucket is the heal of a delayed recreate: it retries a failed
// create (a server may be down) attempts times, half a second apart.
func (r *run) recreateBucket(attempts int) {
	err := r.createBucket()
	r.logf("create bucket %s: %s", r.bucket(), errString(err))
	if err != nil && attempts > 1 {
		r.later(500*time.Millisecond, "create bucket "+r.bucket()+" again (retry)", func() { r.recreateBucket(attempts - 1) })
	}
}

// ensureBucket makes sure the bucket exists once every fault has healed.
func (r *run) ensureBucket() {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := r.js.KeyValue(ctx, r.bucket()); errors.Is(err, jetstream.ErrBucketNotFound) {
		r.logf("bucket %s missing after healing; creating it: %s", r.bucket(), errString(r.createBucket()))
	}
}

// recentRecreate reports whether FaultBucketRecreate deleted or created
// the bucket lately: within the time a node needs to notice (a few
// requests and a bucket lookup), with room to spare.
func (r *run) recentRecreate() bool {
	return !r.lastRecreate.IsZero() && time.Since(r.lastRecreate) < 5*r.maxTTL+10*time.Second
}

// expectedStopCause says why err is an expected reason for a Node to stop
// on its own at this point of the run, or "" if it is a library failure.
// None is, today: a running Node waits for a deleted bucket for as long as
// it runs (docs/design.md §5.4), so stopping with ErrBucketDeleted is a
// failure too. A Start that races a deletion may fail with it (startDone).
func (r *run) expectedStopCause(error) string { return "" }

// injectCompaction removes the lease key without a trace, as a compaction
// of the stream would: a KV Purge (the value goes, a purge marker stays),
// then PurgeDeletes with a negative DeleteMarkersOlderThan, which removes
// every delete and purge marker whatever its age (zero would mean the
// default, markers older than 30 minutes). The key is then absent: the next
// Create succeeds, and nothing in the key tells the epoch handed out last.
func (r *run) injectCompaction() string {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	kv, err := r.js.KeyValue(ctx, r.bucket())
	if err != nil {
		return fmt.Sprintf("compaction: %v", err)
	}
	before := r.describeLease(ctx)
	if err := kv.Purge(ctx, wire.LeaseKey); err != nil {
		return fmt.Sprintf("compaction: purge lease (%s): %v", before, err)
	}
	err = kv.PurgeDeletes(ctx, jetstream.DeleteMarkersOlderThan(-1))
	return fmt.Sprintf("compaction: purged lease (was %s) and the markers: %s; lease now %s",
		before, errString(err), r.describeLease(ctx))
}
