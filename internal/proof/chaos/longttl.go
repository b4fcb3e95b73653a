package chaos

// FaultTTLGarbage: garbage while a tenure with a longer TTL than the
// bucket's current one leads. Every node adopts the bucket's LeaseTTL
// (docs/design.md I2); an operator changes it on the live bucket with
// go-cluster init --lease-ttl (bucketmeta.SetLeaseTTL), and the next
// acquisition uses it. Lowering it again keeps the ceiling
// (lease_ttl_max), which is what a follower must wait for an unknown
// value: the holder may still be using the TTL it began with (§2.7, §5.6).
//
// The fault: raise the bucket's LeaseTTL to Options' long TTL; step the
// leader down until a tenure begins with it (its record says so); lower
// the TTL back; then write garbage while that tenure leads, its connection
// blackholed half of the time for half to nine tenths of its TTL so that it
// leads on, unaware, until its deadline. Half of the time a follower is
// restarted at once: a node that never saw the long record has only the
// ceiling to go by. A follower that waited the bucket's lease_ttl would
// lead beside the holder: the checker reports it.

import (
	"cmp"
	"context"
	"fmt"
	"time"

	cluster "github.com/ozanturksever/go-cluster"
	"github.com/ozanturksever/go-cluster/internal/bucketmeta"
	"github.com/ozanturksever/go-cluster/internal/store"
	"github.com/ozanturksever/go-cluster/internal/wire"
)

// injectTTLGarbage raises the bucket's LeaseTTL and hands over; the rest
// follows in awaitLongTenure.
func (r *run) injectTTLGarbage() string {
	l := r.leader()
	if r.ttlFault || l == nil || r.busy[l] > 0 {
		return ""
	}
	ch, err := r.setBucketTTL(r.longTTL)
	if err != nil {
		return fmt.Sprintf("long-ttl-garbage: raise the bucket's LeaseTTL to %v: %v", r.longTTL, err)
	}
	r.ttlFault = true
	r.later(3*r.opts.RenewInterval, "long-ttl-garbage: look for a tenure at "+r.longTTL.String(), func() { r.awaitLongTenure(4) })
	return fmt.Sprintf("long-ttl-garbage: bucket LeaseTTL %v -> %v (ceiling %v -> %v); StepDown %s: %s",
		ch.Before.LeaseTTL, ch.After.LeaseTTL, ch.Before.MaxTTL, ch.After.MaxTTL, l.id, r.stepDown(l))
}

// awaitLongTenure waits for a tenure that began with the long TTL, stepping
// the leader down again (tries more times) while the record says another.
func (r *run) awaitLongTenure(tries int) {
	if r.healing {
		r.endTTLFault("no garbage: faults end")
		return
	}
	l := r.leader()
	rec, long := r.longTenure(l)
	switch {
	case long && r.busy[l] == 0:
		ch, err := r.setBucketTTL(r.opts.LeaseTTL)
		r.logf("long-ttl-garbage: %s leads at epoch %d with TTL %v; bucket LeaseTTL lowered %v -> %v (ceiling %v): %s",
			l.id, rec.Epoch, r.longTTL, ch.Before.LeaseTTL, ch.After.LeaseTTL, ch.After.MaxTTL, errString(err))
		r.busy[l]++ // no other fault on it until the garbage
		r.later(2*r.opts.RenewInterval, "long-ttl-garbage on "+l.id, func() {
			r.busy[l]--
			r.longTenureGarbage(l, rec.Epoch)
		})
	case tries > 0:
		what := "no leader"
		switch {
		case l != nil && r.busy[l] > 0:
			what = l.id + " leads, under another fault"
		case l != nil:
			what = "StepDown " + l.id + ": " + r.stepDown(l)
		}
		r.logf("long-ttl-garbage: %s; not a tenure at %v yet; %s", describeRecord(l, rec), r.longTTL, what)
		r.later(3*r.opts.RenewInterval, "long-ttl-garbage: look again", func() { r.awaitLongTenure(tries - 1) })
	default:
		r.endTTLFault("no garbage: no tenure began with the long TTL")
	}
}

// longTenureGarbage writes the garbage while l leads the tenure at epoch.
func (r *run) longTenureGarbage(l *member, epoch int64) {
	n := l.current()
	if r.healing || r.leader() != l || r.busy[l] > 0 || n == nil || n.Epoch() != epoch {
		r.endTTLFault("no garbage: " + l.id + " no longer leads the long tenure (or faults end)")
		return
	}
	cut := ""
	if r.chance(0.5) {
		d := time.Duration((0.5 + 0.4*r.rng.Float64()) * float64(r.longTTL)).Round(time.Millisecond)
		for _, p := range l.proxies {
			p.Blackhole()
		}
		r.busy[l]++
		r.later(d, "restore "+l.id, func() { l.restore(); r.busy[l]-- })
		cut = fmt.Sprintf(", its connection blackholed for %v", d)
	}
	g := garbageValues[r.rngIntN(len(garbageValues))]
	r.lastOutOfBand = time.Now()
	r.logf("long-ttl-garbage: %s into the lease while %s leads at epoch %d with TTL %v%s: %s",
		g.name, l.id, epoch, r.longTTL, cut, r.writeGarbage(g))
	if r.chance(0.5) {
		r.restartFollower()
	}
	r.endTTLFault("")
}

// restartFollower stops a follower and starts a new Node in its place at
// once: it knows nothing of the records before.
func (r *run) restartFollower() {
	for _, m := range r.members {
		if n := m.current(); n != nil && !n.IsLeader() && r.busy[m] == 0 {
			err := m.stop()
			r.logf("long-ttl-garbage: restart follower %s with no memory (stop: %s)", m.id, errString(err))
			r.startAsync(m)
			return
		}
	}
}

// endTTLFault ends a long-ttl-garbage fault, with no garbage for why
// when why is set: the bucket's LeaseTTL is the cluster's again (nothing
// changes when it is already).
func (r *run) endTTLFault(why string) {
	_, err := r.setBucketTTL(r.opts.LeaseTTL)
	if why != "" || err != nil {
		r.logf("long-ttl-garbage: %s; bucket LeaseTTL back to %v: %s", cmp.Or(why, "done"), r.opts.LeaseTTL, errString(err))
	}
	r.ttlFault = false
}

// setBucketTTL changes the bucket's LeaseTTL as go-cluster init
// --lease-ttl does, raising the cluster's ceiling in the account's bucket
// first; the ceilings only grow.
func (r *run) setBucketTTL(ttl time.Duration) (bucketmeta.Change, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	account, err := r.js.KeyValue(ctx, wire.AccountBucketName)
	if err == nil {
		_, _, err = store.RaiseCeiling(ctx, account, r.opts.ClusterID, ttl)
	}
	if err != nil {
		return bucketmeta.Change{}, fmt.Errorf("raise the cluster's ceiling: %w", err)
	}
	return bucketmeta.SetLeaseTTL(ctx, r.js, "KV_"+r.bucket(), ttl)
}

// stepDown asks l's Node to step down and says how it went.
func (r *run) stepDown(l *member) string {
	n := l.current()
	if n == nil {
		return "not running"
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return errString(n.StepDown(ctx))
}

// longTenure says whether l leads a tenure that began with the long TTL,
// by l's own latest record (a read of the key may be a replica's, behind:
// docs/design.md §3.7), which it returns.
func (r *run) longTenure(l *member) (cluster.Lease, bool) {
	if l == nil {
		return cluster.Lease{}, false
	}
	n := l.current()
	if n == nil {
		return cluster.Lease{}, false
	}
	rec, ok := n.Lease()
	return rec, ok && n.IsLeader() && rec.NodeID == l.id && rec.Epoch == n.Epoch() && rec.TTLMillis == r.longTTL.Milliseconds()
}

// describeRecord says what l's latest record is, for the log.
func describeRecord(l *member, rec cluster.Lease) string {
	if l == nil {
		return "no leader"
	}
	return fmt.Sprintf("%s's record: holder %q, epoch %d, ttl_ms %d", l.id, rec.NodeID, rec.Epoch, rec.TTLMillis)
}
