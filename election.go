package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// election is the lease loop of one Node. One goroutine (run) owns all of
// its fields except those in view; KV requests, watch events, timers and
// commands are all handled there, one at a time, so there is no lock on
// the renew path. Hooks go to the dispatcher and never run here.
//
// Clock model: every duration is measured on this process's monotonic
// clock. A follower takes over a held lease only after seeing one revision
// unchanged for LeaseTTL; the leader stops at lastSuccessfulRenewalSent +
// LeaseTTL - SafetyMargin. The follower first sees a revision after it was
// sent, so the old leader has always stopped before a successor starts,
// without comparing clocks of different machines.
type election struct {
	cfg      Config
	log      *slog.Logger
	store    *store
	campaign bool
	hooks    Hooks
	disp     *dispatcher
	view     *view
	cmds     chan command
	control  chan controlRequest // step-down requests from NATS
	health   chan error          // HealthCheck results
	expired  chan struct{}       // the tenure deadline passed (buffered, 1)
	exited   chan struct{}       // closed when run returns
	base     context.Context
	hookCtx  context.Context

	watcher    jetstream.KeyWatcher
	synced     bool     // the watch delivered the initial value
	cur        observed // the latest lease entry seen
	maxEpoch   int64    // highest epoch seen in any record
	reconnects uint64   // connection reconnect count when last checked

	waiting   bool      // our CAS lost: wait for a revision above waitAbove
	waitAbove uint64    // the revision we lost at
	resyncAt  time.Time // read the key if the watch shows nothing newer by then
	watchAt   time.Time // retry a failed watch at this time
	retryAt   time.Time // backoff after a transient error while campaigning
	failures  int       // consecutive transient failures while campaigning

	t             *tenure
	lastEpoch     int64 // epoch of this node's last tenure
	cooldownUntil time.Time
	drain         *drain
	stopReq       *command
	known         string // leader last reported through OnLeaderChange
	err           error  // permanent failure
	finished      bool

	healthFails int       // consecutive failed health checks
	healthKnown bool      // a health check has completed
	stableSince time.Time // connected, synced and healthy since
	askedAt     time.Time // last time this node asked the leader to yield (priority)
	freeSince   time.Time // when the lease became free on this node's clock
}

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
}

// drain is a StepDown or Stop in progress on the leader: the tenure has
// ended, OnLoseLeadership runs, and the lease is still renewed until it is
// released.
type drain struct {
	hookDone chan struct{}
	deadline time.Time
	stepDown bool
	next     string      // successor named in the released record
	done     func(error) // told when the lease is released (or lost); may be nil
}

type commandKind int

const (
	cmdStepDown commandKind = iota
	cmdStop
	cmdValidate
)

type command struct {
	kind  commandKind
	reply chan error
	epoch chan int64 // cmdValidate: the proven epoch
	to    string     // cmdStepDown: preferred successor
}

func (e *election) run() {
	defer close(e.exited)
	defer e.shutdown()
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		next := e.act()
		e.publish()
		if e.finished {
			return
		}
		resetTimer(timer, next)
		var hookDone chan struct{}
		if e.drain != nil && e.drain.hookDone != nil {
			hookDone = e.drain.hookDone
		}
		select {
		case ent, ok := <-e.updates():
			if !ok {
				e.restartWatch()
				continue
			}
			if ent == nil {
				e.synced = true
				continue
			}
			e.observe(ent)
		case <-timer.C:
		case <-e.expired:
			e.onDeadline()
		case <-hookDone:
			e.drain.hookDone = nil
		case c := <-e.cmds:
			e.handle(c)
		case r := <-e.control:
			e.handleControl(r)
		case err := <-e.health:
			e.onHealth(err)
		}
	}
}

func (e *election) updates() <-chan jetstream.KeyValueEntry {
	if e.watcher == nil {
		return nil
	}
	return e.watcher.Updates()
}

func resetTimer(t *time.Timer, at time.Time) {
	t.Stop()
	d := time.Hour
	if !at.IsZero() {
		d = max(time.Until(at), 0)
	}
	t.Reset(d)
}

// earliest returns the earliest non-zero time.
func earliest(times ...time.Time) time.Time {
	var out time.Time
	for _, t := range times {
		if !t.IsZero() && (out.IsZero() || t.Before(out)) {
			out = t
		}
	}
	return out
}

// act does what is due now and returns when to look again.
func (e *election) act() time.Time {
	for i := 0; ; i++ {
		if e.finished {
			return time.Time{}
		}
		next, again := e.step(time.Now())
		if !again || i > 8 {
			return next
		}
	}
}

// step makes one decision; again says another may be due at once.
func (e *election) step(now time.Time) (next time.Time, again bool) {
	if e.watcher == nil && !e.watchAt.IsZero() {
		if now.Before(e.watchAt) {
			defer func() { next = earliest(next, e.watchAt) }()
		} else {
			e.restartWatch()
			return time.Time{}, true
		}
	}
	if e.t != nil {
		return e.stepHolding(now)
	}
	if e.drain != nil {
		e.finishDrain(nil)
		return time.Time{}, true
	}
	if e.stopReq != nil {
		e.finished = true
		return time.Time{}, false
	}
	return e.stepFollowing(now)
}

// stepHolding renews, and releases once a drain is done.
func (e *election) stepHolding(now time.Time) (time.Time, bool) {
	t := e.t
	if d := e.drain; d != nil && (d.hookDone == nil || !now.Before(d.deadline)) {
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
			e.freeSince = now
			e.log.Info("lease expired on this node's clock", "holder", e.cur.lease.NodeID, "revision", e.cur.rev)
			return time.Time{}, true
		}
	}
	if !e.campaign || e.err != nil || !e.healthy() {
		return expiry, false
	}
	if now.Before(e.cooldownUntil) {
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

// healthy reports whether this node may campaign as far as its
// HealthCheck is concerned.
func (e *election) healthy() bool {
	return e.cfg.HealthCheck == nil || (e.healthKnown && e.healthFails < e.cfg.HealthThreshold)
}

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

// onHealth records one HealthCheck result; a leader that has failed
// HealthThreshold checks in a row steps down.
func (e *election) onHealth(err error) {
	was := e.healthy()
	e.healthKnown = true
	if err == nil {
		e.healthFails = 0
		if !was {
			e.stableSince = time.Now()
			e.log.Info("health check passes; the node campaigns again")
		}
		return
	}
	e.healthFails++
	e.log.Warn("health check failed", "error", err, "failures", e.healthFails, "threshold", e.cfg.HealthThreshold)
	if e.healthFails == e.cfg.HealthThreshold && e.t != nil && !e.t.ended {
		e.log.Warn("health check failed too often: stepping down")
		e.beginDrain(true, "", nil)
	}
}

// nextEpoch is the epoch of a new tenure. The KV revision of a record is at
// least the epoch of every record before it (each acquisition is a write),
// so after garbage or a deleted key the revision is a safe floor even for a
// node that has seen no earlier epoch.
func (e *election) nextEpoch() int64 {
	next := e.maxEpoch + 1
	if e.cur.valid {
		next = max(next, e.cur.lease.Epoch+1)
	} else if e.cur.present {
		next = max(next, int64(e.cur.rev))
	}
	return next
}

// heldRecord is the record of this node holding the lease, written at now.
func (e *election) heldRecord(epoch int64, acquired, now time.Time) []byte {
	return mustEncode(Lease{NodeID: e.cfg.NodeID, Epoch: epoch, AcquiredAt: acquired.UTC(),
		ExpiresAt: now.Add(e.cfg.LeaseTTL).UTC(), TTLMillis: e.cfg.LeaseTTL.Milliseconds(), Priority: e.cfg.Priority})
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
		var wait time.Duration
		if rev != 0 && !e.freeSince.IsZero() {
			wait = sent.Sub(e.freeSince)
		}
		e.cfg.Observer.ObserveElection(wait)
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

// become starts a tenure won with a write sent at sent.
func (e *election) become(epoch int64, rev uint64, sent time.Time) {
	ctx, cancel := context.WithCancel(e.base)
	t := &tenure{epoch: epoch, rev: rev, acquiredAt: sent, ctx: ctx, cancel: cancel}
	e.t = t
	e.waiting = false
	e.maxEpoch = max(e.maxEpoch, epoch)
	e.view.mu.Lock()
	e.view.tenureCtx, e.view.tenureCancel, e.view.tenureEpoch = ctx, cancel, epoch
	e.view.mu.Unlock()
	e.extend(sent)
	t.timer = time.AfterFunc(time.Hour, func() { e.deadlineFired(t) })
	t.timer.Reset(time.Until(e.deadline(sent)))
	e.log.Info("became leader", "epoch", epoch, "revision", rev)
	e.cfg.Observer.ObserveLeadership(true, epoch)
	e.disp.enqueue(hookCall{name: "OnBecomeLeader", fn: func() error { return e.hooks.OnBecomeLeader(ctx) }})
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
// deadline has really passed, or re-arms itself for the extended one.
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
	e.lose(fmt.Errorf("%w: no renewal succeeded since %v ago", ErrLeaseExpired, time.Since(e.t.lastSent).Round(time.Millisecond)))
}

// endTenure cancels the tenure ctx and queues OnLoseLeadership; done, if
// not nil, is closed when the hook returns.
func (e *election) endTenure(done chan struct{}) {
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
	e.cfg.Observer.ObserveLeadership(false, t.epoch)
	timeout := e.cfg.DrainTimeout
	e.disp.enqueue(hookCall{name: "OnLoseLeadership", done: done, fn: func() error {
		ctx, cancel := context.WithTimeout(e.hookCtx, timeout)
		defer cancel()
		return e.hooks.OnLoseLeadership(ctx)
	}})
}

// lose ends the tenure involuntarily: the lease is no longer ours to renew.
func (e *election) lose(cause error) {
	if e.t == nil {
		return
	}
	e.log.Warn("lost leadership", "epoch", e.t.epoch, "cause", cause)
	e.endTenure(nil)
	e.t = nil
	if e.drain != nil {
		e.finishDrain(nil)
	}
}

// renew proves tenure with a CAS on the revision we last wrote, and
// reports whether that CAS succeeded.
func (e *election) renew() bool {
	t := e.t
	sent := time.Now()
	var deadline time.Time
	if !t.ended {
		e.view.mu.RLock()
		deadline = e.view.deadline
		e.view.mu.RUnlock()
	}
	ctx, cancel := e.requestCtx(deadline)
	rev, err := e.store.update(ctx, leaseKey, e.heldRecord(t.epoch, t.acquiredAt, sent), t.rev)
	cancel()
	e.cfg.Observer.ObserveRenewal(renewalOutcome(err), time.Since(sent))
	switch {
	case err == nil:
		t.rev = rev
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
// its revision. A stale read (older than our tenure) proves nothing: retry.
func (e *election) resolveConflict() {
	t := e.t
	ctx, cancel := e.requestCtx(time.Time{})
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
	if ent != nil && ent.Revision() <= t.rev {
		t.renewDue = time.Now().Add(e.cfg.RenewInterval / 4) // stale replica
		return
	}
	if ent != nil && ent.Operation() == jetstream.KeyValuePut {
		if l, derr := decodeLease(ent.Value(), ent.Revision()); derr == nil && l.NodeID == e.cfg.NodeID && l.Epoch == t.epoch {
			t.rev = ent.Revision()
			t.renewDue = time.Now()
			return
		}
	}
	e.lose(fmt.Errorf("%w: the lease changed under us", ErrEpochMismatch))
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
	if !t.ended {
		e.endTenure(nil)
	}
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
		if o.released() {
			e.freeSince = o.firstSeen
		}
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
	ctx, cancel := e.requestCtx(time.Time{})
	w, err := e.store.watch(ctx)
	cancel()
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

// handle runs a command from the public API.
func (e *election) handle(c command) {
	switch c.kind {
	case cmdStepDown:
		if e.t == nil || e.t.ended {
			c.reply <- ErrNotLeader
			return
		}
		reply := c.reply
		e.beginDrain(true, c.to, func(err error) { reply <- err })
	case cmdStop:
		e.stopReq = &c
		if e.t != nil && !e.t.ended {
			e.beginDrain(false, "", nil)
		}
	case cmdValidate:
		if e.t == nil || e.t.ended {
			c.reply <- ErrNotLeader
			return
		}
		// A second attempt covers a conflict resolved by adopting our own
		// late write's revision: only a CAS that succeeds proves tenure.
		for attempt := 0; attempt < 2 && e.t != nil && !e.t.ended; attempt++ {
			if e.renew() && e.view.leading(time.Now()) {
				c.epoch <- e.t.epoch
				return
			}
		}
		if e.t != nil && !e.t.ended {
			c.reply <- fmt.Errorf("%w: renewal did not succeed", ErrLeaseExpired)
			return
		}
		c.reply <- fmt.Errorf("%w: %w", ErrNotLeader, ErrEpochMismatch)
	}
}

func (e *election) beginDrain(stepDown bool, next string, done func(error)) {
	hookDone := make(chan struct{})
	e.drain = &drain{hookDone: hookDone, deadline: time.Now().Add(e.cfg.DrainTimeout), stepDown: stepDown, next: next, done: done}
	e.log.Info("stepping down", "epoch", e.t.epoch, "step_down", stepDown, "next", next)
	e.endTenure(hookDone)
}

// handleControl answers a step-down request that arrived over NATS.
func (e *election) handleControl(r controlRequest) {
	leading := e.t != nil && !e.t.ended
	if r.generic && !leading {
		return // only the leader answers on the cluster's subject
	}
	reply := StepDownReply{Node: e.cfg.NodeID}
	req, err := decodeStepDown(r.msg.Data)
	switch {
	case err != nil:
		reply.Error = err.Error()
	case !leading:
		reply.Error, reply.Leader = ErrNotLeader.Error(), e.knownLeader()
	case req.To == e.cfg.NodeID:
		reply.Error = fmt.Sprintf("%s is already the leader", req.To)
	case req.Reason == reasonPriority && req.Priority <= e.cfg.Priority:
		reply.Error = fmt.Sprintf("priority %d is not higher than the leader's %d", req.Priority, e.cfg.Priority)
	case req.Reason == reasonPriority && time.Since(e.t.acquiredAt) < e.minTenureForPriority():
		reply.Error = "the leader has led for less than LeaseTTL; ask again later"
	}
	if reply.Error != "" {
		respond(r.msg, reply)
		return
	}
	epoch, msg := e.t.epoch, r.msg
	e.log.Info("step-down requested over NATS", "to", req.To, "reason", req.Reason)
	e.beginDrain(true, req.To, func(err error) {
		out := StepDownReply{OK: err == nil, Node: e.cfg.NodeID, Epoch: epoch, To: req.To}
		if err != nil {
			out.Error = err.Error()
		}
		respond(msg, out)
	})
}

// fail stops the election for good after a permanent error.
func (e *election) fail(err error) {
	e.log.Error("permanent error; the node stops campaigning", "error", err)
	e.err = err
	if e.t != nil {
		e.endTenure(nil)
		e.t = nil
	}
	if e.drain != nil {
		e.finishDrain(err)
	}
	e.finished = true
}

// knownLeader is the leader as this node sees it now.
func (e *election) knownLeader() string {
	if e.t != nil && !e.t.ended {
		return e.cfg.NodeID
	}
	if !e.cur.valid || e.cur.expired || e.cur.lease.NodeID == e.cfg.NodeID {
		return ""
	}
	return e.cur.lease.NodeID
}

// publish copies loop state to the view and reports leader changes.
func (e *election) publish() {
	leader := e.knownLeader()
	epoch := int64(0)
	if e.t != nil && !e.t.ended {
		epoch = e.t.epoch
	} else if e.cur.valid {
		epoch = e.cur.lease.Epoch
	}
	e.view.mu.Lock()
	e.view.epoch = epoch
	e.view.lease, e.view.hasRec = e.cur.lease, e.cur.valid
	if e.view.leader != leader {
		e.view.leader = leader
		close(e.view.changed)
		e.view.changed = make(chan struct{})
	}
	e.view.mu.Unlock()
	if leader != e.known {
		e.known = leader
		e.cfg.Observer.ObserveLeader(leader)
		e.disp.enqueue(hookCall{name: "OnLeaderChange", fn: func() error { return e.hooks.OnLeaderChange(e.hookCtx, leader) }})
	}
}

// shutdown releases what run holds when it exits.
func (e *election) shutdown() {
	if e.t != nil {
		e.endTenure(nil)
		e.t = nil
	}
	if e.watcher != nil {
		_ = e.watcher.Stop()
	}
	if e.stopReq != nil {
		e.stopReq.reply <- nil
	}
}
