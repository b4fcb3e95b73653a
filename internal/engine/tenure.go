package engine

// A tenure as the driver carries it, and the hooks that tell of it: the
// tenure's ctx and deadline timer (E5), the metrics that change with it,
// the hooks queued on the dispatcher (E3); and the view every query reads,
// the one immutable tenure value among it (E6).

import (
	"context"
	"fmt"
	"maps"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ozanturksever/go-cluster/internal/election"
	"github.com/ozanturksever/go-cluster/internal/wire"
)

// driverTenure is the live tenure as the driver carries it: the ctx handed
// to OnBecomeLeader, and the timer that ends it at its deadline.
type driverTenure struct {
	epoch  int64
	ctx    context.Context
	cancel context.CancelFunc
	// timer cancels ctx and queues OnLoseLeadership once the deadline
	// has passed, even if the loop is slow to hear of it: the machine's
	// tick at the deadline does the same, whichever is first.
	timer    *time.Timer
	loseOnce sync.Once
	lose     *loseSignals
	// checks are ValidateLeadership calls: the Extend of a renewal sent
	// after one (confirmed, P7) proves the epoch; the Lose refuses them.
	checks []check
}

// check is a ValidateLeadership call and when the loop took it.
type check struct {
	command
	at time.Time
}

// loseSignals are the dispatcher's signals for the OnLoseLeadership last
// queued: started closes when it begins, done when it returns.
type loseSignals struct {
	epoch   int64
	started chan struct{} // nil once reported
	done    chan struct{}
}

// channels returns the signals not yet reported; nil channels for none.
func (l *loseSignals) channels() (started, done <-chan struct{}) {
	if l == nil {
		return nil, nil
	}
	if l.started != nil {
		return l.started, nil // done is reported after started
	}
	return nil, l.done
}

// become starts the tenure the machine won: its ctx, the view, the
// metrics, OnBecomeLeader, and the deadline timer.
func (d *driver) become(a election.Become) {
	ctx, cancel := context.WithCancel(context.WithValue(d.base, epochKey{}, a.Epoch))
	t := &driverTenure{epoch: a.Epoch, ctx: ctx, cancel: cancel,
		lose: &loseSignals{epoch: a.Epoch, started: make(chan struct{}), done: make(chan struct{})}}
	d.tenure = t
	d.view.begin(&Tenure{Ctx: ctx, Epoch: a.Epoch, Rev: a.Rev, TTL: a.TTL, Renew: a.Renew, Sent: a.Sent, Deadline: a.Deadline})
	// Made before it can fire (deadlineFired uses t.timer), armed after
	// OnBecomeLeader is queued: it may queue OnLoseLeadership at once.
	t.timer = time.AfterFunc(time.Hour, func() { d.deadlineFired(t) })
	d.log.Info("became leader", "epoch", a.Epoch, "revision", a.Rev, "cause", a.Cause)
	var wait time.Duration // how long the node saw the value it took over; 0 for an absent key
	if !a.Seen.IsZero() {
		wait = d.view.Now().Sub(a.Seen)
	}
	d.cfg.Metrics.ObserveElection(string(a.Cause), wait)
	d.cfg.Metrics.ObserveLeadership(true, a.Epoch)
	d.disp.enqueue(hookCall{name: "OnBecomeLeader", fn: func() error {
		err := callHook(func() error { return d.hooks.OnBecomeLeader(ctx) })
		_ = d.events.OnBecomeLeader(ctx)
		if err != nil && d.cfg.StepDownOnHookError {
			d.stepDownAfterHook(a.Epoch, err)
		}
		return err
	}})
	t.timer.Reset(recheck(a.Deadline.Sub(d.view.Now())))
}

// recheckEvery bounds the deadline timer's sleep: timers run on the
// monotonic clock, which stops while the host is suspended, so a timer set
// before a suspension fires late by all of it; looking again this often
// ends a tenure whose deadline passed meanwhile within this of the resume,
// even with the loop stuck (E5). The queries compare the clock directly.
const recheckEvery = 250 * time.Millisecond

func recheck(left time.Duration) time.Duration { return min(left, recheckEvery) }

// extend moves the live tenure's deadline after a confirmed renewal. If
// the deadline timer ended the tenure meanwhile (the machine decided
// before the deadline, the loop applies it after), the application was
// told it lost: the machine must not lead on, so it is asked to step down.
func (d *driver) extend(a election.Extend) {
	if t := d.tenure; t != nil && t.epoch == a.Epoch {
		if t.ctx.Err() != nil {
			d.log.Warn("a renewal was confirmed as the tenure's deadline passed: stepping down", "epoch", a.Epoch)
			d.expiredAt = a.Epoch
			return
		}
		d.view.update(a.Epoch, func(t *Tenure) { t.Sent, t.Deadline = a.Sent, a.Deadline })
		waiting := t.checks[:0]
		for _, c := range t.checks {
			if c.at.After(a.Sent) {
				waiting = append(waiting, c) // came after that renewal was sent: the next one proves it
				continue
			}
			c.Epoch <- a.Epoch
		}
		t.checks = waiting
	}
}

// stepDownAfterHook ends the tenure at epoch after its OnBecomeLeader
// failed (LeaderHookErrorStepsDown). It runs on the dispatcher: it asks
// the loop, never waits for the step-down (which waits for
// OnLoseLeadership, queued behind this hook: E8 in docs/design.md).
func (d *driver) stepDownAfterHook(epoch int64, err error) {
	d.log.Warn("OnBecomeLeader failed; stepping down so that another node leads", "epoch", epoch, "error", err)
	c := command{Kind: cmdStepDown, Reply: make(chan error, 1), Tenure: epoch, Async: true}
	select {
	case d.cmds <- c:
	case <-d.exited:
	case <-d.base.Done():
	}
}

// deadlineFired runs on the timer's goroutine: it ends the tenure if the
// deadline (which renewals move, in the view) has passed, or waits for the
// moved one. The loop may be busy, or stuck on a connection that does not
// drain; the tenure must not outlive its deadline because of that.
func (d *driver) deadlineFired(t *driverTenure) {
	left, live := d.view.expire(t.ctx, t.cancel)
	switch {
	case !live:
		return
	case left > 0:
		t.timer.Reset(recheck(left))
		return
	}
	d.queueLose(t)
	select {
	case d.expired <- struct{}{}: // the machine hears of it at once
	default:
	}
}

// lose ends the tenure at a.epoch: its ctx is cancelled, and
// OnLoseLeadership is queued with DrainTimeout, unless the deadline timer
// did it first.
func (d *driver) lose(a election.Lose) {
	t := d.tenure
	if t == nil || t.epoch != a.Epoch {
		return
	}
	d.tenure = nil
	t.timer.Stop()
	d.view.end(t.cancel)
	for _, c := range t.checks {
		c.Reply <- wire.ErrNotLeader
	}
	if a.Cause != nil {
		d.log.Warn("lost leadership", "epoch", a.Epoch, "cause", a.Cause)
	}
	d.losing = t.lose
	d.queueLose(t)
}

// queueLose queues OnLoseLeadership for t, once. sync.Once makes a second
// caller wait until the first has queued it, so no hook of a later tenure
// can be queued ahead of it.
func (d *driver) queueLose(t *driverTenure) {
	t.loseOnce.Do(func() {
		d.cfg.Metrics.ObserveLeadership(false, t.epoch)
		timeout := d.cfg.DrainTimeout
		d.disp.enqueue(hookCall{name: "OnLoseLeadership", started: t.lose.started, done: t.lose.done, fn: func() error {
			ctx, cancel := context.WithTimeout(d.hookCtx, timeout)
			defer cancel()
			_ = d.events.OnLoseLeadership(ctx)
			return callHook(func() error { return d.hooks.OnLoseLeadership(ctx) })
		}})
	})
}

// leaderChanged reports a new known leader: the view, the metric, and
// OnLeaderChange.
func (d *driver) leaderChanged(leader string) {
	d.view.setLeader(leader)
	d.cfg.Metrics.ObserveLeader(leader)
	d.disp.enqueue(hookCall{name: "OnLeaderChange", fn: func() error {
		err := callHook(func() error { return d.hooks.OnLeaderChange(d.hookCtx, leader) })
		_ = d.events.OnLeaderChange(d.hookCtx, leader)
		return err
	}})
}

// publish copies the machine's state to the view the public queries read.
func (d *driver) publish() { d.view.publish(d.m.Snapshot()) }

// nodeView is what the node's queries read: a snapshot the loop publishes,
// plus the live tenure whose deadline the renewals extend. Its lock is its
// own: only its methods take it, none across I/O or a hook.
type nodeView struct {
	nodeID string
	mu     sync.RWMutex
	leader string
	epoch  int64
	lease  wire.Lease
	hasRec bool
	// synced: the machine's watch showed the key's current value
	// (election.View.Synced).
	synced  bool
	changed chan struct{} // closed and replaced whenever leader changes
	ready   error         // nil when the node may campaign as far as ReadinessCheck goes
	beyond  int           // the version of a record above this node's the key holds (P16); 0: none
	// metadata is this node's own, as driverConfig.Metadata or SetMetadata last
	// set it: what it publishes while it leads.
	metadata map[string]string

	// tenure is the live tenure, nil when not leading: a new value for
	// every change, so that a reader gets all of its fields at once.
	tenure atomic.Pointer[Tenure]
	// renewing is closed when the renewal in flight ends; nil when none is.
	renewing chan struct{}
	clock    *clock
}

// newNodeView is the view of node nodeID before it starts: its metadata, and
// ready (nil, or why it may not lead yet).
func newNodeView(nodeID string, metadata map[string]string, ready error) *nodeView {
	return &nodeView{nodeID: nodeID, changed: make(chan struct{}), metadata: metadata, ready: ready, clock: newClock()}
}

// Now is the time the node decides by: its monotonic clock, moved on by a
// suspension of the host as well (clock).
func (v *nodeView) Now() time.Time { return v.clock.now() }

// snapshot reads the view at once.
func (v *nodeView) snapshot() Snapshot {
	v.mu.RLock()
	defer v.mu.RUnlock()
	ready := v.ready
	if v.beyond != 0 {
		ready = fmt.Errorf("%w: the cluster runs protocol %d, which this node does not speak: it follows, and leads once a node of that version replaced it (docs/production.md, \"Moving to a new version\")", wire.ErrProtocolVersion, v.beyond)
	}
	return Snapshot{Leader: v.leader, Epoch: v.epoch, Lease: v.lease, HasRec: v.hasRec, Ready: ready, Metadata: maps.Clone(v.metadata), Synced: v.synced}
}

// Tenure is this node's tenure as every query reads it (IsLeader, Tenure,
// Epoch, fenced writes, liveness, status replies). A value never changes:
// the driver publishes a new one when the tenure begins, when a renewal is
// acknowledged or moves its revision, and none when it ends. Times are on
// the node's clock (nodeView.Now).
type Tenure struct {
	Ctx   context.Context // the one OnBecomeLeader got: cancelled when the tenure ends
	Epoch int64
	Rev   uint64        // revision of its latest lease record: fenced writes are checked on it
	TTL   time.Duration // the lease TTL it runs on: the bucket's
	Renew time.Duration // its renewal interval: a renewal is due this long after Sent
	// Sent is the send time of its latest acknowledged write (the
	// acquisition or a renewal); Deadline is Sent + TTL - the margin (P8).
	Sent, Deadline time.Time
}

// live reports whether t is a tenure live at now: its ctx not cancelled,
// its deadline not passed. A nil t is not.
func (t *Tenure) live(now time.Time) bool {
	return t != nil && t.Ctx.Err() == nil && now.Before(t.Deadline)
}

// Tenure returns the tenure live at now, or nil when this node does not
// lead. The value is shared: never change it.
func (v *nodeView) Tenure(now time.Time) *Tenure {
	if t := v.tenure.Load(); t.live(now) {
		return t
	}
	return nil
}

// SetMetadata records the metadata the node publishes from now on.
func (v *nodeView) SetMetadata(md map[string]string) {
	v.mu.Lock()
	v.metadata = md
	v.mu.Unlock()
}

// WaitLeader blocks until a leader is known, ctx ends or stopped closes
// (wire.ErrStopped).
func (v *nodeView) WaitLeader(ctx context.Context, stopped <-chan struct{}) (string, error) {
	for {
		v.mu.RLock()
		leader, changed := v.leader, v.changed
		v.mu.RUnlock()
		if leader != "" {
			return leader, nil
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return "", ctx.Err()
		case <-stopped:
			return "", wire.ErrStopped
		}
	}
}

// renewalStarted marks a renewal in flight. A replicated stream refuses a
// write checked on the lease subject while another such write is in flight,
// so fenced state writes hold back until it ends (RenewalInFlight): a
// leader busy writing state must not starve its own renewals.
func (v *nodeView) renewalStarted() {
	v.mu.Lock()
	v.renewing = make(chan struct{})
	v.mu.Unlock()
}

// renewalEnded releases the state writes held back by renewalStarted.
func (v *nodeView) renewalEnded() {
	v.mu.Lock()
	if v.renewing != nil {
		close(v.renewing)
		v.renewing = nil
	}
	v.mu.Unlock()
}

// RenewalInFlight returns a channel closed when the renewal in flight
// ends, or nil when there is none.
func (v *nodeView) RenewalInFlight() <-chan struct{} {
	v.mu.RLock()
	defer v.mu.RUnlock()
	if v.renewing == nil {
		return nil
	}
	return v.renewing
}

// The driver's writes: the tenure it starts, extends and ends, the leader
// it learns, and the machine's state after each event.

// begin records the tenure won, with this node as leader: OnBecomeLeader
// may run before the leader change that follows in the same batch is
// carried out (it was seen reading "" under load in ExampleNode_StepDown).
func (v *nodeView) begin(t *Tenure) {
	v.mu.Lock()
	v.tenure.Store(t)
	v.leader = v.nodeID
	v.mu.Unlock()
}

// update publishes a copy of the tenure at epoch changed by change, if it
// is the one published.
func (v *nodeView) update(epoch int64, change func(*Tenure)) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if t := v.tenure.Load(); t != nil && t.Epoch == epoch {
		next := *t
		change(&next)
		v.tenure.Store(&next)
	}
}

// expire ends the tenure whose ctx is ctx if its deadline has passed,
// cancelling it with cancel; otherwise it returns how long is left. ok is
// false when ctx is not the live tenure's any more.
func (v *nodeView) expire(ctx context.Context, cancel context.CancelFunc) (left time.Duration, ok bool) {
	v.mu.Lock()
	defer v.mu.Unlock()
	t := v.tenure.Load()
	if t == nil || t.Ctx != ctx {
		return 0, false
	}
	if wait := t.Deadline.Sub(v.clock.now()); wait > 0 {
		return wait, true
	}
	cancel()
	if v.leader == v.nodeID {
		v.leader = "" // as end does, before OnLoseLeadership can read it (E6)
	}
	return 0, true
}

// end cancels the live tenure with cancel and forgets it; the leader is
// not itself any more, before OnLoseLeadership can read it: the leader
// change that follows says who (ExampleNode_Events).
func (v *nodeView) end(cancel context.CancelFunc) {
	v.mu.Lock()
	cancel()
	v.tenure.Store(nil)
	if v.leader == v.nodeID {
		v.leader = ""
	}
	v.mu.Unlock()
}

// setLeader records a new known leader and wakes WaitLeader.
func (v *nodeView) setLeader(leader string) {
	v.mu.Lock()
	v.leader = leader
	close(v.changed)
	v.changed = make(chan struct{})
	v.mu.Unlock()
}

// setReady records what Node.Ready reports.
func (v *nodeView) setReady(err error) {
	v.mu.Lock()
	v.ready = err
	v.mu.Unlock()
}

// publish copies the machine's state s.
func (v *nodeView) publish(s election.View) {
	v.mu.Lock()
	v.epoch = s.Epoch
	v.lease, v.hasRec = s.Lease, s.Lease.Epoch != 0 // a record's epoch is at least 1
	v.synced, v.beyond = s.Synced, s.Beyond
	v.mu.Unlock()
	if t := v.tenure.Load(); s.Tenure && t != nil && t.Rev != s.Rev {
		v.update(s.Epoch, func(t *Tenure) { t.Rev = s.Rev }) // the deadline moves with Extend only
	}
}
