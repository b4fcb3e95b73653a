package cluster

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

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
	created  chan struct{}       // the bucket's stream was created (advisory.go)
	health   chan error          // ReadinessCheck results
	expired  chan struct{}       // the tenure deadline passed (buffered, 1)
	exited   chan struct{}       // closed when run returns
	base     context.Context
	hookCtx  context.Context
	// stopHooks cancels hookCtx; tornDown says the Node's teardown has
	// begun (guarded by the Node's mu).
	stopHooks context.CancelFunc
	tornDown  bool

	watcher      *leaseWatch
	cleanup      sync.WaitGroup // watches being stopped in the background
	synced       bool           // the watch delivered the initial value
	cur          observed       // the latest lease entry seen
	maxEpoch     int64          // highest epoch seen in any record, or held
	maxTTL       time.Duration  // longest ttl_ms seen in any record
	revFloor     uint64         // a stream sequence at least every revision of the bucket
	observations int            // lease revisions seen since Start
	reconnects   uint64         // connection reconnect count when last checked
	pending      *pendingAcquire
	probedRev    uint64    // the revision last read back (see probeDue)
	probedAt     time.Time // when it was last read back

	waiting   bool      // our CAS lost: wait for a revision above waitAbove
	waitAbove uint64    // the revision we lost at
	resyncAt  time.Time // read the key if the watch shows nothing newer by then
	watchAt   time.Time // retry a failed watch at this time
	retryAt   time.Time // backoff after a transient error while campaigning
	failures  int       // consecutive transient failures while campaigning

	goneSince time.Time // the bucket was found deleted (bucket_gone.go)
	// goneReported is when the node last logged that its bucket is gone.
	goneReported time.Time
	goneCheckAt  time.Time // look for it again at this time

	t             *tenure
	lastEpoch     int64 // epoch of this node's last tenure
	cooldownUntil time.Time
	drain         *drain
	stopReq       *command
	known         string // leader last reported through OnLeaderChange
	err           error  // permanent failure
	finished      bool

	ready       readiness // ReadinessCheck results
	stableSince time.Time // connected, synced and healthy since
	askedAt     time.Time // last time this node asked the leader to yield (priority)
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
	// async (cmdStepDown): reply once the step-down has begun, not when
	// the lease is released. A hook calling StepDown cannot wait for the
	// release: it waits for OnLoseLeadership, which runs after that hook.
	async bool
}

func (e *election) run() {
	defer close(e.exited)
	defer e.shutdown()
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		if e.base.Err() != nil {
			return // Stop gave up waiting for a graceful end
		}
		next := e.act()
		e.publish()
		if e.finished {
			return
		}
		resetTimer(timer, next)
		var hookStarted, hookDone chan struct{}
		if d := e.drain; d != nil {
			hookStarted, hookDone = d.hookStarted, d.hookDone
		}
		select {
		case ent, ok := <-e.updates():
			if !ok {
				e.restartWatch()
				continue
			}
			if ent == nil {
				e.synced = true
				if !e.cur.present {
					e.cur.firstSeen = time.Now() // the key is absent: since now, as far as we know
				}
				continue
			}
			e.observe(ent)
		case <-timer.C:
		case <-e.expired:
			e.onDeadline()
		case <-e.base.Done():
		case <-hookStarted:
			e.drain.hookStarted = nil
			e.drain.deadline = time.Now().Add(e.cfg.DrainTimeout)
		case <-hookDone:
			e.drain.hookStarted, e.drain.hookDone = nil, nil
		case c := <-e.cmds:
			e.handle(c)
		case r := <-e.control:
			e.handleControl(r)
		case err := <-e.health:
			e.onHealth(err)
		case <-e.created:
			e.onBucketAdvisory()
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
	if !e.goneSince.IsZero() {
		return e.stepBucketGone(now)
	}
	return e.stepFollowing(now)
}

// handle runs a command from the public API.
func (e *election) handle(c command) {
	switch c.kind {
	case cmdStepDown:
		if e.t == nil || e.t.ended || !e.view.leading(time.Now()) {
			c.reply <- ErrNotLeader
			return
		}
		if c.async {
			e.beginDrain(true, c.to, nil)
			c.reply <- nil
			return
		}
		reply := c.reply
		e.beginDrain(true, c.to, func(err error) { reply <- err })
	case cmdStop:
		e.stopReq = &c
		switch {
		case e.t == nil || e.t.ended:
		case !e.view.leading(time.Now()):
			e.lose(e.expiredCause(e.t)) // nothing left to hand over
		default:
			e.beginDrain(false, "", nil)
		}
	case cmdValidate:
		if e.t == nil || e.t.ended {
			c.reply <- ErrNotLeader
			return
		}
		if !e.view.leading(time.Now()) {
			c.reply <- fmt.Errorf("%w: %w", ErrNotLeader, ErrLeaseExpired) // the loop is about to learn it
			return
		}
		// A second attempt covers a conflict resolved by adopting our own
		// late write's revision: only a CAS that succeeds proves tenure.
		for attempt := 0; attempt < 2 && e.t != nil && !e.t.ended && e.view.leading(time.Now()); attempt++ {
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

// fail stops the election for good after a permanent error.
func (e *election) fail(err error) {
	if errors.Is(err, ErrBucketDeleted) {
		e.bucketDeleted(err) // waits for the bucket to be created again (bucket_gone.go)
		return
	}
	e.failNow(err)
}

// failNow stops the node with a permanent error.
func (e *election) failNow(err error) {
	e.log.Error("permanent error; the node stops campaigning", "error", err)
	e.err = err
	if e.t != nil {
		e.endTenure()
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
		e.cfg.Metrics.ObserveLeader(leader)
		e.disp.enqueue(hookCall{name: "OnLeaderChange", fn: func() error { return e.hooks.OnLeaderChange(e.hookCtx, leader) }})
	}
}

// shutdown releases what run holds when it exits.
func (e *election) shutdown() {
	if e.t != nil {
		e.endTenure()
		e.t = nil
	}
	e.stopWatch()
	if d := e.drain; d != nil && d.done != nil {
		e.drain = nil
		d.done(ErrStopped) // a StepDown in progress ends with the node
	}
	if e.stopReq != nil {
		e.stopReq.reply <- nil
	}
}
