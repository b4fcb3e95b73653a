package chaos

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	cluster "github.com/ozanturksever/go-cluster"
)

// Out-of-band faults change the bucket or the lease key behind the nodes'
// backs, as operators, tools and bugs do (docs/design.md §5, "Out-of-band
// changes and threats"). None of them may produce two leaders or an epoch that is not
// above every epoch handed out before.

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

// outOfBandDue reports whether an out-of-band fault may be injected now.
func (r *run) outOfBandDue() bool {
	return r.lastOutOfBand.IsZero() || time.Since(r.lastOutOfBand) >= r.opts.OutOfBandGap
}

// bucket is the name of the cluster's KV bucket.
func (r *run) bucket() string { return cluster.BucketName(r.opts.ClusterID) }

// bucketConfig is the bucket as the nodes create it (cluster.BucketConfig),
// with the replicas the members ask for: a recreated bucket must be one the
// nodes would have made themselves.
func (r *run) bucketConfig() jetstream.KeyValueConfig {
	return cluster.BucketConfig(r.opts.ClusterID, cluster.BucketOptions{Replicas: 3})
}

// describeLease says what the lease key holds now, for the log.
func (r *run) describeLease(ctx context.Context) string {
	kv, err := r.js.KeyValue(ctx, r.bucket())
	if err != nil {
		return "bucket: " + err.Error()
	}
	e, err := kv.Get(ctx, cluster.LeaseKey)
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

// injectRecreate deletes the bucket and creates it again with the same
// settings, at once or a little later: its stream is new, and revisions
// restart at 1. Nodes that find the bucket gone meanwhile wait for it; a
// Start that races the deletion fails with ErrBucketDeleted (expected, see
// startDone) and is tried again.
func (r *run) injectRecreate() string {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	before := r.describeLease(ctx)
	err := r.js.DeleteKeyValue(ctx, r.bucket())
	r.deletions = append(r.deletions, time.Now()) // a delete that failed may have deleted it
	r.deletedAt = time.Now()
	if err != nil {
		return fmt.Sprintf("bucket recreate: delete %s (lease %s): %v", r.bucket(), before, err)
	}
	r.lastRecreate = time.Now()
	if r.chance(0.5) {
		return fmt.Sprintf("bucket recreate: deleted %s (lease %s) and created it again at once: %s",
			r.bucket(), before, errString(r.createBucket()))
	}
	d := r.span(0.1, 1)
	r.later(d, "create bucket "+r.bucket()+" again", func() { r.recreateBucket(10) })
	return fmt.Sprintf("bucket recreate: deleted %s (lease %s); created again in %v", r.bucket(), before, d)
}

// createBucket creates the bucket as the nodes would. A node that started
// meanwhile may have made it already: that counts as done.
func (r *run) createBucket() error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err := r.js.CreateKeyValue(ctx, r.bucketConfig())
	if errors.Is(err, jetstream.ErrBucketExists) || errors.Is(err, jetstream.ErrStreamNameAlreadyInUse) {
		err = nil
	}
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
	if err := kv.Purge(ctx, cluster.LeaseKey); err != nil {
		return fmt.Sprintf("compaction: purge lease (%s): %v", before, err)
	}
	err = kv.PurgeDeletes(ctx, jetstream.DeleteMarkersOlderThan(-1))
	return fmt.Sprintf("compaction: purged lease (was %s) and the markers: %s; lease now %s",
		before, errString(err), r.describeLease(ctx))
}

// ttlGarbageValues are the non-JSON values FaultTTLGarbage writes.
var ttlGarbageValues = [][]byte{
	[]byte("{not json"),
	[]byte("<html>503 Service Unavailable</html>"),
	{0, 0xff, 0xfe, 0x7f},
}

// injectTTLGarbage writes a non-JSON value into the lease key, or deletes
// it, while a node with a long LeaseTTL leads. Half of the time that
// leader's connection is blackholed first, for half to nine tenths of its
// LeaseTTL, so that it neither sees the garbage nor loses a renewal race:
// it leads on until its own deadline. A follower with a short LeaseTTL must
// not take over before then: the garbage says nothing of the holder's TTL,
// so it has to wait the longest LeaseTTL it has seen.
//
// When a node with a short LeaseTTL leads, it first hands over to one with
// a long LeaseTTL (StepDownTo), and the garbage follows a few renewals
// later, once the new leader's record (with its TTL) has been seen.
func (r *run) injectTTLGarbage() string {
	l := r.leader()
	if l == nil || r.busy[l] > 0 {
		return ""
	}
	if l.ttl > r.opts.LeaseTTL {
		return r.ttlGarbageOn(l)
	}
	var long []*member
	for _, m := range r.members {
		if m.ttl > r.opts.LeaseTTL && r.busy[m] == 0 && m.current() != nil {
			long = append(long, m)
		}
	}
	if len(long) == 0 {
		return ""
	}
	target := long[r.rngIntN(len(long))]
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	err := l.current().StepDownTo(ctx, target.id)
	cancel()
	d := 3 * target.renew
	r.busy[target]++ // no other fault on it until the garbage
	r.later(d, "long-ttl-garbage on "+target.id, func() {
		r.busy[target]--
		if r.leader() != target || r.busy[target] > 0 {
			r.logf("long-ttl-garbage: %s does not lead (or is under another fault); no garbage", target.id)
			return
		}
		r.logf("%s", r.ttlGarbageOn(target))
	})
	return fmt.Sprintf("long-ttl-garbage: StepDownTo %s (LeaseTTL %v) by %s: %s; garbage in %v", target.id, target.ttl, l.id, errString(err), d)
}

// ttlGarbageOn writes the garbage (or deletes the key) while l leads.
func (r *run) ttlGarbageOn(l *member) string {
	cut := ""
	if r.chance(0.5) {
		d := time.Duration((0.5 + 0.4*r.rng.Float64()) * float64(l.ttl)).Round(time.Millisecond)
		for _, p := range l.proxies {
			p.Blackhole()
		}
		r.busy[l]++
		r.later(d, "restore "+l.id, func() { l.restore(); r.busy[l]-- })
		cut = fmt.Sprintf(", its connection blackholed for %v", d)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	kv, err := r.js.KeyValue(ctx, r.bucket())
	what := "delete"
	if err == nil {
		if r.chance(0.5) {
			err = kv.Delete(ctx, cluster.LeaseKey)
		} else {
			v := ttlGarbageValues[r.rngIntN(len(ttlGarbageValues))]
			what = fmt.Sprintf("garbage %q", v)
			_, err = kv.Put(ctx, cluster.LeaseKey, v)
		}
	}
	return fmt.Sprintf("long-ttl-garbage: %s of the lease while %s (LeaseTTL %v) leads%s: %s", what, l.id, l.ttl, cut, errString(err))
}
