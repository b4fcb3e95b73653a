package engine

// A tenure as the driver carries it, and the hooks that tell of it: the
// tenure's ctx and deadline timer, the view and metrics that change with
// it, and the dispatcher that runs OnBecomeLeader, OnLoseLeadership and
// OnLeaderChange one at a time (docs/design.md, E3).

import (
	"context"
	"sync"
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
		err := d.hooks.OnBecomeLeader(ctx)
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
			return d.hooks.OnLoseLeadership(ctx)
		}})
	})
}

// leaderChanged reports a new known leader: the view, the metric, and
// OnLeaderChange.
func (d *driver) leaderChanged(leader string) {
	d.view.setLeader(leader)
	d.cfg.Metrics.ObserveLeader(leader)
	d.disp.enqueue(hookCall{name: "OnLeaderChange", fn: func() error { return d.hooks.OnLeaderChange(d.hookCtx, leader) }})
}

// publish copies the machine's state to the view the public queries read.
func (d *driver) publish() { d.view.publish(d.m.Snapshot()) }
