package cluster

// A tenure as the driver carries it, and the hooks that tell of it: the
// tenure's ctx and deadline timer, the view and metrics that change with
// it, and the dispatcher that runs OnBecomeLeader, OnLoseLeadership and
// OnLeaderChange one at a time (docs/design.md, E3).

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ozanturksever/go-cluster/internal/election"
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
	ctx, cancel := context.WithCancel(context.WithValue(d.base, tenureEpochKey{}, a.Epoch))
	t := &driverTenure{epoch: a.Epoch, ctx: ctx, cancel: cancel,
		lose: &loseSignals{epoch: a.Epoch, started: make(chan struct{}), done: make(chan struct{})}}
	d.tenure = t
	d.view.mu.Lock()
	d.view.tenureCtx, d.view.tenureEpoch, d.view.tenureRev = ctx, a.Epoch, a.Rev
	d.view.deadline = a.Deadline
	// And itself as leader: OnBecomeLeader may run before the leader
	// change that follows in the same batch is carried out (it was seen
	// reading "" under load in ExampleNode_StepDown).
	d.view.leader = d.cfg.NodeID
	d.view.mu.Unlock()
	// Made before it can fire (deadlineFired uses t.timer), armed after
	// OnBecomeLeader is queued: it may queue OnLoseLeadership at once.
	t.timer = time.AfterFunc(time.Hour, func() { d.deadlineFired(t) })
	d.log.Info("became leader", "epoch", a.Epoch, "revision", a.Rev)
	d.cfg.Metrics.ObserveElection(ElectionCause(a.Cause), a.Wait)
	d.cfg.Metrics.ObserveLeadership(true, a.Epoch)
	d.disp.enqueue(hookCall{name: "OnBecomeLeader", fn: func() error {
		err := d.hooks.OnBecomeLeader(ctx)
		if err != nil && d.cfg.OnBecomeLeaderError == LeaderHookErrorStepsDown {
			d.stepDownAfterHook(a.Epoch, err)
		}
		return err
	}})
	t.timer.Reset(time.Until(a.Deadline))
}

// extend moves the live tenure's deadline after a confirmed renewal.
func (d *driver) extend(a election.Extend) {
	d.view.mu.Lock()
	if d.tenure != nil && d.tenure.epoch == a.Epoch && d.view.tenureEpoch == a.Epoch {
		d.view.deadline = a.Deadline
	}
	d.view.mu.Unlock()
}

// stepDownAfterHook ends the tenure at epoch after its OnBecomeLeader
// failed (LeaderHookErrorStepsDown). It runs on the dispatcher: it asks
// the loop, never waits for the step-down (which waits for
// OnLoseLeadership, queued behind this hook: E8 in docs/design.md).
func (d *driver) stepDownAfterHook(epoch int64, err error) {
	d.log.Warn("OnBecomeLeader failed; stepping down so that another node leads", "epoch", epoch, "error", err)
	c := command{kind: cmdStepDown, reply: make(chan error, 1), tenure: epoch, async: true}
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
	d.view.mu.Lock()
	if d.view.tenureCtx != t.ctx {
		d.view.mu.Unlock()
		return
	}
	if wait := time.Until(d.view.deadline); wait > 0 {
		d.view.mu.Unlock()
		t.timer.Reset(wait)
		return
	}
	t.cancel()
	if d.view.leader == d.cfg.NodeID {
		d.view.leader = "" // as lose does, before OnLoseLeadership can read it (E6)
	}
	d.view.mu.Unlock()
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
	d.view.mu.Lock()
	t.cancel()
	d.view.tenureCtx = nil
	if d.view.leader == d.cfg.NodeID {
		// Not itself any more, before OnLoseLeadership can read it; the
		// leader change that follows says who (ExampleNode_Observe).
		d.view.leader = ""
	}
	d.view.mu.Unlock()
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
			return d.hooks.OnLoseLeadership(ctx)
		}})
	})
}

// leaderChanged reports a new known leader: the view, the metric, and
// OnLeaderChange.
func (d *driver) leaderChanged(leader string) {
	d.view.mu.Lock()
	d.view.leader = leader
	close(d.view.changed)
	d.view.changed = make(chan struct{})
	d.view.mu.Unlock()
	d.cfg.Metrics.ObserveLeader(leader)
	d.disp.enqueue(hookCall{name: "OnLeaderChange", fn: func() error { return d.hooks.OnLeaderChange(d.hookCtx, leader) }})
}

// publish copies the machine's state to the view the public queries read.
func (d *driver) publish() {
	s := d.m.Snapshot()
	d.view.mu.Lock()
	d.view.epoch = s.Epoch
	d.view.lease, d.view.hasRec = Lease(s.Lease), s.HasRec
	d.view.ready = s.Ready
	if s.Tenure && d.view.tenureCtx != nil && d.view.tenureEpoch == s.Epoch {
		d.view.tenureRev = s.Rev // the deadline moves with Extend only
	}
	d.view.mu.Unlock()
}

// hookCall is one queued hook invocation.
type hookCall struct {
	name    string
	fn      func() error
	started chan struct{} // closed before fn is called; may be nil
	done    chan struct{} // closed after fn returns; may be nil
}

// dispatcher runs hooks one at a time, in the order they were queued, on a
// goroutine of its own, so that no hook runs under a lock, on the renew
// path, or on a NATS callback goroutine.
type dispatcher struct {
	log      *slog.Logger
	obs      Metrics
	failures atomic.Int64
	goid     atomic.Uint64 // the dispatcher goroutine, to tell a call from a hook

	mu     sync.Mutex
	queue  []hookCall
	closed bool
	wake   chan struct{}
	done   chan struct{}
}

func newDispatcher(log *slog.Logger, obs Metrics) *dispatcher {
	d := &dispatcher{log: log, obs: obs, wake: make(chan struct{}, 1), done: make(chan struct{})}
	go d.run()
	return d
}

// enqueue adds a call; calls after close are dropped (their done is closed).
func (d *dispatcher) enqueue(c hookCall) {
	d.mu.Lock()
	if d.closed {
		d.mu.Unlock()
		if c.started != nil {
			close(c.started)
		}
		if c.done != nil {
			close(c.done)
		}
		return
	}
	d.queue = append(d.queue, c)
	d.mu.Unlock()
	select {
	case d.wake <- struct{}{}:
	default:
	}
}

// close lets the dispatcher finish what is queued and exit.
func (d *dispatcher) close() {
	d.mu.Lock()
	d.closed = true
	d.mu.Unlock()
	select {
	case d.wake <- struct{}{}:
	default:
	}
}

// isCaller says the calling goroutine is the dispatcher's: a hook.
func (d *dispatcher) isCaller() bool { return d.goid.Load() == goroutineID() }

func (d *dispatcher) run() {
	defer close(d.done)
	d.goid.Store(goroutineID())
	for {
		d.mu.Lock()
		if len(d.queue) == 0 {
			closed := d.closed
			d.mu.Unlock()
			if closed {
				return
			}
			<-d.wake
			continue
		}
		c := d.queue[0]
		d.queue[0] = hookCall{}
		d.queue = d.queue[1:]
		d.mu.Unlock()
		d.call(c)
	}
}

func (d *dispatcher) call(c hookCall) {
	if c.done != nil {
		defer close(c.done)
	}
	if c.started != nil {
		close(c.started)
	}
	start := time.Now()
	err := func() (err error) {
		defer func() {
			if r := recover(); r != nil {
				err = fmt.Errorf("panic: %v", r)
			}
		}()
		return c.fn()
	}()
	d.obs.ObserveHook(c.name, time.Since(start), err)
	if err != nil {
		d.failures.Add(1)
		d.log.Error("hook failed", "hook", c.name, "error", err, "duration", time.Since(start))
		return
	}
	d.log.Debug("hook done", "hook", c.name, "duration", time.Since(start))
}
